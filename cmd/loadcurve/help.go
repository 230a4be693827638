package main

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/urfave/cli/v2"
)

// Help. urfave/cli prints a command's flag categories in lexical order (so the embedded
// deployment's 30 flags came first and --base-url ninety lines down) and appends a default to
// every flag. Here every command's options are rendered by flagHelp instead: the command's own
// uncategorised flags first, then the categories in helpOrder (target, load, objectives,
// output, …), the embedded deployment last; flags in the order they are defined; one default
// per flag; usage wrapped under its column.

// helpOrder is the order of the flag categories in --help; a category not listed comes after
// these, before catSim.
var helpOrder = []string{catTarget, catLoad, catObjective, catOutput, catVLLM, catWorkload, catClient, catRehearse}

// helpWidth is the width help text is wrapped to: the terminal's, within [minHelpWidth,
// maxHelpWidth]; 0 (no wrapping: a flag a line, for grep) when w is not a terminal.
func helpWidth(w io.Writer) int {
	f, ok := w.(*os.File)
	if !ok {
		return 0
	}
	if n := terminalWidth(f); n > 0 {
		return min(max(n, minHelpWidth), maxHelpWidth)
	}
	return 0
}

const (
	minHelpWidth = 60
	maxHelpWidth = 140
)

// helpSimFlag names the flag that lists the embedded deployment's flags, which the ordinary
// help of run and sweep leaves out.
const helpSimFlag = "help-sim"

// commandHelpTemplate is urfave/cli's command help with the options replaced by %s (a
// template string constant: flagHelp's text, rendered when the app is built).
const commandHelpTemplate = `NAME:
   {{template "helpNameTemplate" .}}

USAGE:
   {{template "usageTemplate" .}}{{if .Description}}

DESCRIPTION:
   {{template "descriptionTemplate" .}}{{end}}

OPTIONS:
{{%s}}`

// setHelp gives cmd a help text whose options flagHelp renders, width wide (0: unwrapped).
func setHelp(cmd *cli.Command, width int) {
	var b strings.Builder
	flagHelp(&b, cmd.Flags, false, width)
	// A Go string literal is a template string constant: the text is printed as it is.
	cmd.CustomHelpTemplate = fmt.Sprintf(commandHelpTemplate, strconv.Quote(b.String()))
}

// flagGroup is one category of flags as help shows it.
type flagGroup struct {
	name  string
	flags []cli.Flag
}

// groupFlags sorts flags into their categories, in help's order: uncategorised first, then
// helpOrder, then other categories by name, catSim last; each in definition order. The help
// flag is left out (every command has it).
func groupFlags(flags []cli.Flag) []flagGroup {
	byName := map[string]*flagGroup{}
	var names []string
	for _, f := range flags {
		if slices.Contains(f.Names(), "help") {
			continue
		}
		cat := ""
		if cf, ok := f.(cli.CategorizableFlag); ok {
			if !cf.IsVisible() {
				continue
			}
			cat = cf.GetCategory()
		}
		g := byName[cat]
		if g == nil {
			g = &flagGroup{name: cat}
			byName[cat] = g
			names = append(names, cat)
		}
		g.flags = append(g.flags, f)
	}
	rank := func(cat string) int {
		switch i := slices.Index(helpOrder, cat); {
		case cat == "":
			return 0
		case cat == catSim:
			return len(helpOrder) + 2
		case i >= 0:
			return i + 1
		}
		return len(helpOrder) + 1
	}
	slices.SortStableFunc(names, func(a, b string) int {
		if ra, rb := rank(a), rank(b); ra != rb {
			return ra - rb
		}
		return strings.Compare(a, b)
	})
	out := make([]flagGroup, len(names))
	for i, n := range names {
		out[i] = *byName[n]
	}
	return out
}

// flagHelp writes the options of a command, wrapped to width (0: a flag a line): with sim
// false, every group, the embedded deployment's reduced to --help-sim when the command has it;
// with sim true, that group alone.
func flagHelp(w io.Writer, flags []cli.Flag, sim bool, width int) {
	groups := groupFlags(flags)
	hasHelpSim := slices.ContainsFunc(flags, func(f cli.Flag) bool { return slices.Contains(f.Names(), helpSimFlag) })
	var shown []flagGroup
	for _, g := range groups {
		if g.name == catSim && hasHelpSim {
			var keep []cli.Flag
			for _, f := range g.flags {
				if slices.Contains(f.Names(), helpSimFlag) != sim {
					keep = append(keep, f)
				}
			}
			g.flags = keep
		} else if sim {
			continue
		}
		if len(g.flags) > 0 {
			shown = append(shown, g)
		}
	}
	col := 0
	for _, g := range shown {
		for _, f := range g.flags {
			col = max(col, utf8.RuneCountInString(flagLabel(f)))
		}
	}
	col = min(col, maxNameColumn)
	if width > 0 {
		col = min(col, width*3/10)
	}
	for i, g := range shown {
		if i > 0 {
			fmt.Fprintln(w)
		}
		if g.name != "" && !sim {
			heading := []string{g.name}
			if width > 0 {
				heading = wrapText(g.name, width-3)
			}
			fmt.Fprintf(w, "   %s\n\n", strings.Join(heading, "\n   "))
		}
		for _, f := range g.flags {
			writeFlag(w, f, col, width)
		}
	}
}

// maxNameColumn bounds the names column (and so does three tenths of the width): a longer name
// puts its usage on the next line.
const maxNameColumn = 32

// writeFlag writes one flag: its names, then its usage with its default, wrapped to width
// (0: not wrapped) under a column col runes wide.
func writeFlag(w io.Writer, f cli.Flag, col, width int) {
	names := flagLabel(f)
	text := flagUsage(f)
	indent := 3 + col + 2
	lines := []string{strings.Join(strings.Fields(text), " ")}
	if width > 0 {
		lines = wrapText(text, max(width-indent, 30))
	}
	pad := col - utf8.RuneCountInString(names)
	switch {
	case pad < 0 && width == 0: // unwrapped: a flag a line, whatever its name's width
		fmt.Fprintf(w, "   %s  %s\n", names, lines[0])
		return
	case pad < 0: // a name wider than the column: its usage starts on the next line
		fmt.Fprintf(w, "   %s\n%s%s\n", names, strings.Repeat(" ", indent), lines[0])
	default:
		fmt.Fprintf(w, "   %s%s  %s\n", names, strings.Repeat(" ", pad), lines[0])
	}
	for _, l := range lines[1:] {
		fmt.Fprintf(w, "%s%s\n", strings.Repeat(" ", indent), l)
	}
}

// flagLabel is "--name value, --alias value" ("-v" for a one-letter name; "value" when the flag
// takes one).
func flagLabel(f cli.Flag) string {
	value := ""
	if df, ok := f.(cli.DocGenerationFlag); ok && df.TakesValue() {
		value = " value"
	}
	parts := make([]string, 0, len(f.Names()))
	for _, n := range f.Names() {
		dash := "--"
		if len(n) == 1 {
			dash = "-"
		}
		parts = append(parts, dash+n+value)
	}
	return strings.Join(parts, ", ")
}

// flagUsage is a flag's usage with its default and its environment variable, each once.
func flagUsage(f cli.Flag) string {
	df, ok := f.(cli.DocGenerationFlag)
	if !ok {
		return ""
	}
	s := df.GetUsage()
	if d := defaultOf(f); d != "" {
		s += " (default: " + d + ")"
	}
	if env := df.GetEnvVars(); len(env) > 0 {
		s += " (or $" + strings.Join(env, ", $") + ")"
	}
	return s
}

// defaultOf is the default help shows for f: its DefaultText, else its value, unquoted; none
// for a bool that is off, an empty value, or a usage that states its default itself.
func defaultOf(f cli.Flag) string {
	df, ok := f.(cli.DocGenerationFlag)
	if !ok || strings.Contains(df.GetUsage(), "(default") {
		return ""
	}
	if b, ok := f.(*cli.BoolFlag); ok {
		switch {
		case b.DefaultText != "":
			return b.DefaultText
		case b.Value:
			return "true"
		}
		return ""
	}
	d := df.GetDefaultText()
	if u, err := strconv.Unquote(d); err == nil && strings.HasPrefix(d, `"`) {
		d = u
	}
	return d
}

// wrapText breaks s into lines of at most width runes at blanks (a longer word stands alone).
func wrapText(s string, width int) []string {
	var lines []string
	line := ""
	for _, word := range strings.Fields(s) {
		switch {
		case line == "":
			line = word
		case utf8.RuneCountInString(line)+1+utf8.RuneCountInString(word) <= width:
			line += " " + word
		default:
			lines = append(lines, line)
			line = word
		}
	}
	return append(lines, line)
}

// helpSim is --help-sim: it lists the embedded deployment's flags of the command.
func helpSim(c *cli.Context) error {
	w := c.App.Writer
	n := 0
	for _, f := range c.Command.Flags {
		if cf, ok := f.(cli.CategorizableFlag); ok && cf.GetCategory() == catSim && !slices.Contains(f.Names(), helpSimFlag) {
			n++
		}
	}
	fmt.Fprintf(w, "The embedded simulated deployment of `%s`: it serves the requests when --base-url is not given.\n", c.Command.HelpName)
	fmt.Fprintf(w, "Its %d flags (a model of a continuous-batching server, or with --sim-model mdc an exact M/D/c queue;\n", n)
	fmt.Fprintln(w, "`loadcurve sim` serves the same deployment on an address):")
	fmt.Fprintln(w)
	flagHelp(w, c.Command.Flags, true, helpWidth(w))
	return nil
}

// withHelpSim makes cmd answer --help-sim before anything else it does (its scenario file and
// its action are skipped).
func withHelpSim(cmd *cli.Command) {
	if !slices.ContainsFunc(cmd.Flags, func(f cli.Flag) bool { return slices.Contains(f.Names(), helpSimFlag) }) {
		return
	}
	before, action := cmd.Before, cmd.Action
	cmd.Before = func(c *cli.Context) error {
		if c.Bool(helpSimFlag) || before == nil {
			return nil
		}
		return before(c)
	}
	cmd.Action = func(c *cli.Context) error {
		if c.Bool(helpSimFlag) {
			return helpSim(c)
		}
		return action(c)
	}
}
