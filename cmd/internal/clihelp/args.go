package clihelp

import (
	"strings"

	"github.com/urfave/cli/v2"
)

// FlagsFirst moves a command's flags in front of its positional arguments, so that `PROG report
// DIR --goodput ttft:500` works: urfave/cli v2 (like Go's flag package) stops parsing flags at
// the first positional argument. args is the whole command line (program, command, the rest).
// A flag that takes a value keeps the token after it; a flag multi names (vLLM's nargs="*"
// form, "--metadata tp=1 pp=2", "--goodput ttft:500 tpot:50") keeps every further token its
// predicate accepts too, each as one more value; "--" ends flag parsing. A command line without a
// known command is returned as it is.
func FlagsFirst(app *cli.App, args []string, multi map[string]func(string) bool) []string {
	if len(args) < 3 {
		return args
	}
	cmd := app.Command(args[1])
	if cmd == nil {
		return args
	}
	takesValue := map[string]bool{}
	for _, f := range cmd.Flags {
		_, isBool := Unwrap(f).(*cli.BoolFlag)
		for _, n := range f.Names() {
			takesValue[n] = !isBool
		}
	}
	flags := []string{}
	var positional []string
	rest := args[2:]
	for i := 0; i < len(rest); i++ {
		a := rest[i]
		if a == "--" {
			positional = append(positional, rest[i+1:]...)
			break
		}
		if len(a) < 2 || a[0] != '-' {
			positional = append(positional, a)
			continue
		}
		flags = append(flags, a)
		name, _, inline := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !inline && takesValue[name] && i+1 < len(rest) {
			i++
			flags = append(flags, rest[i])
		}
		if more := multi[name]; more != nil {
			for i+1 < len(rest) && !strings.HasPrefix(rest[i+1], "-") && more(rest[i+1]) {
				i++
				flags = append(flags, "--"+name, rest[i])
			}
		}
	}
	out := append([]string{args[0], args[1]}, flags...)
	if len(positional) > 0 {
		out = append(out, "--")
		out = append(out, positional...)
	}
	return out
}

// Root is the action of an app run without a command: `PROG` alone prints the app's help, `PROG
// help` too, `PROG help COMMAND` the command's; any other word is a mistyped command, whose
// error (UnknownCommand's) is returned through bad, for the caller to mark as bad input.
func Root(c *cli.Context, bad func(error) error) error {
	args := c.Args()
	switch {
	case !args.Present():
		return cli.ShowAppHelp(c)
	case args.First() == "help" && args.Len() == 1:
		return cli.ShowAppHelp(c)
	case args.First() == "help" && c.App.Command(args.Get(1)) != nil:
		return cli.ShowCommandHelp(c, args.Get(1))
	case args.First() == "help":
		return bad(UnknownCommand(c.App, args.Get(1)))
	}
	return bad(UnknownCommand(c.App, args.First()))
}
