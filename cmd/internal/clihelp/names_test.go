package clihelp_test

import (
	"bytes"
	"reflect"
	"testing"

	"github.com/urfave/cli/v2"

	"github.com/loadcurve/loadcurve/cmd/internal/clihelp"
)

// TestFastFlagsBehaveAsTheFlags: a command whose flags went through Fast parses, reports IsSet,
// reads values (slices split at commas, aliases, defaults, environment variables), runs flag
// actions, enforces required flags and keeps categories and help exactly as with the flags
// themselves; Unwrap gives back the flag.
func TestFastFlagsBehaveAsTheFlags(t *testing.T) {
	type seen struct {
		rate            string
		n               int
		list            []string
		set, unset, env bool
		category        string
		action          int
	}
	run := func(fast bool, args ...string) (seen, string, error) {
		var got seen
		flags := []cli.Flag{
			&cli.StringFlag{Name: "rate", Aliases: []string{"r"}, Category: "Load", Value: "1"},
			&cli.IntFlag{Name: "num", Value: 7, Action: func(*cli.Context, int) error { got.action++; return nil }},
			&cli.StringSliceFlag{Name: "goodput"},
			&cli.BoolFlag{Name: "quiet"},
			&cli.StringFlag{Name: "key", EnvVars: []string{"CLIHELP_TEST_KEY"}},
			&cli.StringFlag{Name: "must", Required: true},
		}
		if fast {
			flags = clihelp.Fast(flags)
		}
		var out bytes.Buffer
		app := &cli.App{Name: "x", Writer: &out, ErrWriter: &out, Commands: []*cli.Command{{Name: "c", Flags: flags,
			Action: func(c *cli.Context) error {
				got.rate, got.n, got.list = c.String("rate"), c.Int("num"), c.StringSlice("goodput")
				got.set, got.unset, got.env = c.IsSet("r"), c.IsSet("quiet"), c.IsSet("key")
				if cf, ok := c.Command.Flags[0].(cli.CategorizableFlag); ok {
					got.category = cf.GetCategory()
				}
				return nil
			}}}}
		err := app.Run(append([]string{"x", "c"}, args...))
		return got, out.String(), err
	}
	t.Setenv("CLIHELP_TEST_KEY", "k")
	for _, args := range [][]string{
		{"--must", "m", "-r", "5", "--num", "3", "--goodput", "ttft:1,tpot:2", "--goodput", "e2el:3"},
		{"--must", "m"},
		{"-r", "5"}, // the required flag is missing
	} {
		slow, slowOut, slowErr := run(false, args...)
		fast, fastOut, fastErr := run(true, args...)
		if !reflect.DeepEqual(slow, fast) || slowOut != fastOut || (slowErr == nil) != (fastErr == nil) {
			t.Errorf("%q: flags %+v %q %v; Fast %+v %q %v", args, slow, slowOut, slowErr, fast, fastOut, fastErr)
		}
	}
	f := &cli.DurationFlag{Name: "d"}
	if w := clihelp.Fast([]cli.Flag{f})[0]; clihelp.Unwrap(w) != f || clihelp.Unwrap(f) != f || !reflect.DeepEqual(w.Names(), []string{"d"}) {
		t.Errorf("Unwrap(Fast(f)) is not f, or the names changed")
	}
}
