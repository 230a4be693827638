// Package clihelp gives urfave/cli commands a grouped, wrapped --help and explains their parse
// errors: which flag, the form it expects, and suggestions for a mistyped flag or command. It
// also reads a command line the way its users write it (FlagsFirst: flags after positional
// arguments) and answers the program run without a command (Root).
//
// urfave/cli prints a command's flag categories in lexical order and appends a default to every
// flag. Here a command's options are rendered instead: its uncategorised flags first, then the
// categories in the order Options gives, the Options' last category last; flags in the order
// they are defined; one default per flag; usage wrapped under its column.
package clihelp

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

// Options is how help orders a program's flag categories.
type Options struct {
	// Order lists the categories shown after a command's uncategorised flags, in order; a
	// category not listed follows them, by name.
	Order []string
	// Last is the category shown after every other.
	Last string
	// LastFlag names a flag of Last that stands for it: a command that has it shows only that
	// flag under Last, and WriteLast lists the others (a long group kept out of the way).
	LastFlag string
	// LastIntro heads the list of Last's flags that LastFlag answers with (AnswerLast), given
	// the command's name and how many flags Last has.
	LastIntro func(command string, n int) string
	// AllFlag names a flag that lists every flag of a command (AnswerAll): a command that has
	// it shows, in its ordinary help, only the flags Common names under their category (and its
	// uncategorised ones, AllFlag among them), each group headed with how many it leaves for
	// AllFlag, and the groups left whole named after them. Last stays behind LastFlag in both.
	AllFlag string
	Common  map[string][]string
}

// Width is the width help text written to w is wrapped to: the terminal's, within
// [minWidth, maxWidth]; 0 (no wrapping: a flag a line, for grep) when w is not a terminal.
func Width(w io.Writer) int {
	f, ok := w.(*os.File)
	if !ok {
		return 0
	}
	if n := terminalWidth(f); n > 0 {
		return min(max(n, minWidth), maxWidth)
	}
	return 0
}

const (
	minWidth = 60
	maxWidth = 140
)

// commandHelpTemplate is urfave/cli's command help with the options replaced by %s (a
// template string constant: the options' text, rendered when the help is set).
const commandHelpTemplate = `NAME:
   {{template "helpNameTemplate" .}}

USAGE:
   {{template "usageTemplate" .}}{{if .Description}}

DESCRIPTION:
   {{template "descriptionTemplate" .}}{{end}}

OPTIONS:
{{%s}}`

// SetHelp gives cmd a help text whose options WriteFlags renders, width wide (0: unwrapped),
// from the flags cmd has when its help is shown: rendered then, not now (every command's
// options, rendered as a program starts, were a third of its start-up; see lazy.go).
func (o Options) SetHelp(cmd *cli.Command, width int) {
	cmd.CustomHelpTemplate = lazyTemplate(o, width)
}

// helpTemplate is cmd's help template with its options rendered (all: every flag, as AllFlag
// answers).
func (o Options) helpTemplate(flags []cli.Flag, width int, all bool) string {
	var b strings.Builder
	if all {
		o.write(&b, flags, modeAll, width)
	} else {
		o.WriteFlags(&b, flags, width)
	}
	// A Go string literal is a template string constant: the text is printed as it is.
	return fmt.Sprintf(commandHelpTemplate, strconv.Quote(b.String()))
}

// group is one category of flags as help shows it.
type group struct {
	name  string
	flags []cli.Flag
}

// groups sorts flags into their categories, in help's order: uncategorised first, then Order,
// then other categories by name, Last last; each in definition order. The help flag is left
// out (every command has it), and so are hidden flags.
func (o Options) groups(flags []cli.Flag) []group {
	byName := map[string]*group{}
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
			g = &group{name: cat}
			byName[cat] = g
			names = append(names, cat)
		}
		g.flags = append(g.flags, f)
	}
	rank := func(cat string) int {
		switch i := slices.Index(o.Order, cat); {
		case cat == "":
			return 0
		case cat == o.Last:
			return len(o.Order) + 2
		case i >= 0:
			return i + 1
		}
		return len(o.Order) + 1
	}
	slices.SortStableFunc(names, func(a, b string) int {
		if ra, rb := rank(a), rank(b); ra != rb {
			return ra - rb
		}
		return strings.Compare(a, b)
	})
	out := make([]group, len(names))
	for i, n := range names {
		out[i] = *byName[n]
	}
	return out
}

// WriteFlags writes the options of a command, wrapped to width (0: a flag a line): every
// group, Last reduced to LastFlag when the command has it; for a command with AllFlag, only
// the Common flags of each group, the rest counted.
func (o Options) WriteFlags(w io.Writer, flags []cli.Flag, width int) {
	mode := modeAll
	if o.brief(flags) {
		mode = modeBrief
	}
	o.write(w, flags, mode, width)
}

// WriteLast writes the flags of the Last category of a command that has LastFlag, without a
// heading, wrapped to width (0: a flag a line); nothing for a command without LastFlag.
func (o Options) WriteLast(w io.Writer, flags []cli.Flag, width int) {
	o.write(w, flags, modeLast, width)
}

// What write writes: every group (Last reduced to LastFlag), the Common flags of each, or Last
// alone.
const (
	modeAll = iota
	modeBrief
	modeLast
)

// brief reports whether a command with flags shows its Common flags only: it has AllFlag.
func (o Options) brief(flags []cli.Flag) bool {
	return o.AllFlag != "" && len(o.Common) > 0 && slices.ContainsFunc(flags, func(f cli.Flag) bool { return slices.Contains(f.Names(), o.AllFlag) })
}

// AnswerAll makes cmd answer AllFlag (AnswerFlag) with its help showing every flag; a command
// without AllFlag is left as it is.
func (o Options) AnswerAll(cmd *cli.Command) {
	if o.AllFlag == "" {
		return
	}
	AnswerFlag(cmd, o.AllFlag, func(c *cli.Context) error {
		w := c.App.Writer
		cli.HelpPrinter(w, o.helpTemplate(c.Command.Flags, Width(w), true), c.Command)
		return nil
	})
}

// AnswerLast makes cmd answer LastFlag (AnswerFlag) with LastIntro and its flags of Last
// (WriteLast); a command without LastFlag is left as it is.
func (o Options) AnswerLast(cmd *cli.Command) {
	AnswerFlag(cmd, o.LastFlag, func(c *cli.Context) error {
		n := 0
		for _, f := range c.Command.Flags {
			if cf, ok := f.(cli.CategorizableFlag); ok && cf.GetCategory() == o.Last && !slices.Contains(f.Names(), o.LastFlag) {
				n++
			}
		}
		w := c.App.Writer
		fmt.Fprintln(w, o.LastIntro(c.Command.HelpName, n))
		o.WriteLast(w, c.Command.Flags, Width(w))
		return nil
	})
}

// write writes the options of a command in mode: every group, Last reduced to LastFlag when
// the command has it (modeAll); the same with only the Common flags of each other group, a
// group's heading saying how many more AllFlag lists and the groups it leaves out named after
// the others (modeBrief); Last alone without LastFlag (modeLast).
func (o Options) write(w io.Writer, flags []cli.Flag, mode int, width int) {
	last := mode == modeLast
	isLastFlag := func(f cli.Flag) bool { return o.LastFlag != "" && slices.Contains(f.Names(), o.LastFlag) }
	hasLastFlag := slices.ContainsFunc(flags, isLastFlag)
	var shown []group
	var left []string // groups modeBrief leaves out whole: "Client limits (4)"
	headings := map[string]string{}
	for _, g := range o.groups(flags) {
		if g.name == o.Last && hasLastFlag {
			var keep []cli.Flag
			for _, f := range g.flags {
				if isLastFlag(f) != last {
					keep = append(keep, f)
				}
			}
			g.flags = keep
		} else if last {
			continue
		} else if mode == modeBrief && g.name != "" {
			var keep []cli.Flag
			for _, f := range g.flags {
				if slices.Contains(o.Common[g.name], f.Names()[0]) {
					keep = append(keep, f)
				}
			}
			switch more := len(g.flags) - len(keep); {
			case len(keep) == 0:
				left = append(left, fmt.Sprintf("%s (%d)", g.name, len(g.flags)))
			case more > 0:
				headings[g.name] = fmt.Sprintf("%s (%d more with --%s)", g.name, more, o.AllFlag)
			}
			g.flags = keep
		}
		if len(g.flags) > 0 {
			shown = append(shown, g)
		}
	}
	col := 0
	for _, g := range shown {
		for _, f := range g.flags {
			col = max(col, utf8.RuneCountInString(label(f)))
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
		if len(left) > 0 && g.name == o.Last { // before the last group: what --help-all adds
			writeText(w, fmt.Sprintf("Also, with --%s: %s.", o.AllFlag, strings.Join(left, ", ")), width)
			fmt.Fprintln(w)
			left = nil
		}
		if g.name != "" && !last {
			name := g.name
			if h, ok := headings[name]; ok {
				name = h
			}
			writeText(w, name, width)
			fmt.Fprintln(w)
		}
		for _, f := range g.flags {
			writeFlag(w, f, col, width)
		}
	}
	if len(left) > 0 {
		fmt.Fprintln(w)
		writeText(w, fmt.Sprintf("Also, with --%s: %s.", o.AllFlag, strings.Join(left, ", ")), width)
	}
}

// writeText writes a line of help text indented as a heading, wrapped to width (0: one line).
func writeText(w io.Writer, s string, width int) {
	lines := []string{s}
	if width > 0 {
		lines = wrapText(s, width-3)
	}
	fmt.Fprintf(w, "   %s\n", strings.Join(lines, "\n   "))
}

// maxNameColumn bounds the names column (and so does three tenths of the width): a longer name
// puts its usage on the next line.
const maxNameColumn = 32

// writeFlag writes one flag: its names, then its usage with its default, wrapped to width
// (0: not wrapped) under a column col runes wide.
func writeFlag(w io.Writer, f cli.Flag, col, width int) {
	names := label(f)
	text := Usage(f)
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

// label is "--name value, --alias value" ("-v" for a one-letter name; "value" when the flag
// takes one).
func label(f cli.Flag) string {
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

// Usage is a flag's usage as help shows it: with its default and its environment variable,
// each once.
func Usage(f cli.Flag) string {
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
	if b, ok := Unwrap(f).(*cli.BoolFlag); ok {
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
