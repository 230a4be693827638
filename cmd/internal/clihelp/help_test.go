package clihelp

import (
	"errors"
	"io"
	"os"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/urfave/cli/v2"
)

func init() { cli.HelpFlag = HelpFlag }

// Categories of testFlags; catBig is the last one, kept behind --help-big.
const (
	catA   = "Alpha"
	catB   = "Beta"
	catZ   = "Zulu, not in the order"
	catY   = "Yankee, not in the order either"
	catBig = "A long group shown last, behind --help-big, whose heading is long enough to wrap on a narrow terminal"
)

var testOptions = Options{Order: []string{catA, catB}, Last: catBig, LastFlag: "help-big"}

// testFlags are the flags of a command as a program defines them: categories out of order,
// a category the order does not name, long names and usages, a hidden flag, the help flag.
func testFlags() []cli.Flag {
	long := strings.Repeat("a usage that goes on and on, ", 8)
	return []cli.Flag{
		&cli.StringFlag{Name: "big-one", Category: catBig, Value: "x", Usage: "one of the long group"},
		&cli.StringFlag{Name: "zulu", Category: catZ, Usage: "unlisted, sorted by name"},
		&cli.DurationFlag{Name: "beta", Category: catB, Value: 30 * time.Second, Usage: "in the order, second"},
		&cli.StringFlag{Name: "plain", Usage: "uncategorised: first " + long},
		&cli.StringFlag{Name: "yankee", Category: catY, Usage: "unlisted, sorted by name, before zulu"},
		&cli.IntFlag{Name: "alpha", Aliases: []string{"a"}, Category: catA, Value: 7, Usage: "in the order, first " + long},
		&cli.StringFlag{Name: "a-name-much-wider-than-the-names-column", Category: catA, Usage: "its usage starts on the next line"},
		&cli.StringFlag{Name: "word", Category: catB, Usage: "a word longer than any line: " + strings.Repeat("x", 150)},
		&cli.BoolFlag{Name: "hidden", Category: catA, Hidden: true, Usage: "never shown"},
		&cli.BoolFlag{Name: "help-big", Category: catBig, Usage: "list the long group"},
		&cli.Float64Flag{Name: "big-two", Category: catBig, Usage: "another of the long group"},
		HelpFlag,
	}
}

// names is the first names of flags.
func names(flags []cli.Flag) []string {
	var out []string
	for _, f := range flags {
		out = append(out, f.Names()[0])
	}
	return out
}

// TestGroupsOrder: uncategorised first, then the Options' order, then other categories by
// name, the last category last; flags in definition order; the hidden and help flags left out.
func TestGroupsOrder(t *testing.T) {
	gs := testOptions.groups(testFlags())
	var got []string
	for _, g := range gs {
		got = append(got, g.name)
	}
	if want := []string{"", catA, catB, catY, catZ, catBig}; !slices.Equal(got, want) {
		t.Fatalf("categories %q, want %q", got, want)
	}
	if got, want := names(gs[1].flags), []string{"alpha", "a-name-much-wider-than-the-names-column"}; !slices.Equal(got, want) {
		t.Errorf("%s: flags %q, want %q", catA, got, want)
	}
	if got, want := names(gs[5].flags), []string{"big-one", "help-big", "big-two"}; !slices.Equal(got, want) {
		t.Errorf("%s: flags %q, want %q", catBig, got, want)
	}
}

// TestWriteFlagsWraps: on a terminal the usage is wrapped under its column to the terminal's
// width (a word longer than the line stands alone); unwrapped, every flag is one line, so that
// grep finds a flag with its whole usage. The last group is reduced to its flag.
func TestWriteFlagsWraps(t *testing.T) {
	flags := testFlags()
	for _, width := range []int{0, 60, 80, 120} {
		var b strings.Builder
		testOptions.WriteFlags(&b, flags, width)
		text := b.String()
		lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
		named := 0
		for _, l := range lines {
			if strings.HasPrefix(l, "   -") {
				named++
			}
			if width > 0 && utf8.RuneCountInString(l) > width && !strings.Contains(strings.TrimSpace(l), " ") {
				continue // one word longer than the line
			}
			if width > 0 && utf8.RuneCountInString(l) > width {
				t.Errorf("width %d: a line of %d: %q", width, utf8.RuneCountInString(l), l)
			}
			if width > 0 && l != "" && !strings.HasPrefix(l, "   ") {
				t.Errorf("width %d: a line not under its column: %q", width, l)
			}
		}
		// plain, alpha, the wide one, beta, word, yankee, zulu, help-big.
		if want := 8; named != want {
			t.Errorf("width %d: %d flags listed, want %d:\n%s", width, named, want, text)
		}
		if strings.Contains(text, "--big-one") || strings.Contains(text, "--hidden") || strings.Contains(text, "--help ") {
			t.Errorf("width %d: a flag of the last group, the hidden or the help flag listed:\n%s", width, text)
		}
		// A line a flag, and for each of the five headed groups a heading and a blank line
		// after it, and a blank line between groups.
		if width == 0 && len(lines) != named+2*5+5 {
			t.Errorf("unwrapped: %d lines for %d flags in 6 groups, want a flag a line:\n%s", len(lines), named, text)
		}
	}
}

// TestWriteFlagsLayout: the exact unwrapped and wrapped text of a small command: names in a
// column at most 32 runes (three tenths of the width) wide, a wider name with its usage on the
// next line when wrapped, on the same line when not.
func TestWriteFlagsLayout(t *testing.T) {
	flags := []cli.Flag{
		&cli.StringFlag{Name: "out", Aliases: []string{"o"}, Usage: "the directory to write"},
		&cli.IntFlag{Name: "n", Category: catA, Value: 3, Usage: "how many of them to send, one after the other"},
		&cli.StringFlag{Name: "a-very-long-flag-name-indeed", Category: catA, Usage: "short"},
	}
	tests := []struct {
		width int
		want  string
	}{
		{0, "" +
			"   --out value, -o value             the directory to write\n" +
			"\n" +
			"   Alpha\n" +
			"\n" +
			"   -n value                          how many of them to send, one after the other (default: 3)\n" +
			"   --a-very-long-flag-name-indeed value  short\n"},
		{60, "" +
			"   --out value, -o value\n" +
			"                       the directory to write\n" +
			"\n" +
			"   Alpha\n" +
			"\n" +
			"   -n value            how many of them to send, one after\n" +
			"                       the other (default: 3)\n" +
			"   --a-very-long-flag-name-indeed value\n" +
			"                       short\n"},
	}
	for _, tt := range tests {
		var b strings.Builder
		Options{}.WriteFlags(&b, flags, tt.width)
		if b.String() != tt.want {
			t.Errorf("width %d:\n%s\nwant:\n%s", tt.width, b.String(), tt.want)
		}
	}
}

// TestWriteLast: the last group alone, without its heading and without the flag that lists
// it; nothing for a command without that flag.
func TestWriteLast(t *testing.T) {
	var b strings.Builder
	testOptions.WriteLast(&b, testFlags(), 0)
	want := "   --big-one value  one of the long group (default: x)\n   --big-two value  another of the long group (default: 0)\n"
	if b.String() != want {
		t.Errorf("got:\n%s\nwant:\n%s", b.String(), want)
	}
	b.Reset()
	testOptions.WriteLast(&b, slices.DeleteFunc(testFlags(), func(f cli.Flag) bool { return f.Names()[0] == "help-big" }), 0)
	if b.String() != "" {
		t.Errorf("without --help-big: %q", b.String())
	}
}

// TestUsage: one default per flag, none for a bool that is off or an empty value, none added
// to a usage that states its own; a string's default unquoted; the environment variable once.
func TestUsage(t *testing.T) {
	tests := []struct {
		f    cli.Flag
		want string
	}{
		{&cli.StringFlag{Name: "s", Value: "x y", Usage: "u"}, "u (default: x y)"},
		{&cli.StringFlag{Name: "s", Usage: "u"}, "u"},
		{&cli.IntFlag{Name: "n", Value: 0, Usage: "u (default: no cap)"}, "u (default: no cap)"},
		{&cli.IntFlag{Name: "n", Value: 5, Usage: "u"}, "u (default: 5)"},
		{&cli.BoolFlag{Name: "b", Usage: "u"}, "u"},
		{&cli.BoolFlag{Name: "b", Value: true, Usage: "u"}, "u (default: true)"},
		{&cli.BoolFlag{Name: "b", DefaultText: "on a terminal", Usage: "u"}, "u (default: on a terminal)"},
		{&cli.DurationFlag{Name: "d", Value: time.Minute, Usage: "u"}, "u (default: 1m0s)"},
		{&cli.StringFlag{Name: "k", EnvVars: []string{"KEY", "OTHER_KEY"}, Usage: "u"}, "u (or $KEY, $OTHER_KEY)"},
		{&cli.StringFlag{Name: "p", DefaultText: "chat", Value: "x", Usage: "u"}, "u (default: chat)"},
		{HelpFlag, ""},
	}
	for _, tt := range tests {
		if got := Usage(tt.f); got != tt.want {
			t.Errorf("Usage(--%s) = %q, want %q", tt.f.Names()[0], got, tt.want)
		}
	}
}

func TestWrapText(t *testing.T) {
	tests := []struct {
		s     string
		width int
		want  []string
	}{
		{"a b c", 3, []string{"a b", "c"}},
		{"  a   b  ", 10, []string{"a b"}},
		{"short averyverylongword x", 6, []string{"short", "averyverylongword", "x"}},
		{"ééé ééé", 7, []string{"ééé ééé"}}, // runes, not bytes
		{"", 5, []string{""}},
	}
	for _, tt := range tests {
		if got := wrapText(tt.s, tt.width); !slices.Equal(got, tt.want) {
			t.Errorf("wrapText(%q, %d) = %q, want %q", tt.s, tt.width, got, tt.want)
		}
	}
}

// TestSetHelp: the command's help holds the rendered options as they are (a template's
// braces in a usage are not interpreted).
func TestSetHelp(t *testing.T) {
	cmd := &cli.Command{Name: "go", Usage: "go somewhere", Flags: []cli.Flag{
		&cli.StringFlag{Name: "to", Usage: "where, e.g. {{.Name}}"}, HelpFlag}}
	testOptions.SetHelp(cmd, 0)
	// Rendered when shown: a flag added after SetHelp is in the help.
	cmd.Flags = append(cmd.Flags, &cli.IntFlag{Name: "late", Usage: "added after SetHelp"})
	var b strings.Builder
	app := &cli.App{Name: "prog", Writer: &b, Commands: []*cli.Command{cmd}}
	if err := app.Run([]string{"prog", "go", "--help"}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"NAME:\n   prog go - go somewhere\n", "OPTIONS:\n   --to value    where, e.g. {{.Name}}\n", "--late value  added after SetHelp (default: 0)\n"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("help %q: want %q", b.String(), want)
		}
	}
}

// TestAnswerFlag: the flag is answered before the command's Before and Action, which run as
// before without it; a command without the flag is left alone.
func TestAnswerFlag(t *testing.T) {
	var ran []string
	newCmd := func() *cli.Command {
		return &cli.Command{Name: "c",
			Flags:  []cli.Flag{&cli.BoolFlag{Name: "list"}},
			Before: func(*cli.Context) error { ran = append(ran, "before"); return nil },
			Action: func(*cli.Context) error { ran = append(ran, "action"); return nil }}
	}
	for _, tt := range []struct {
		args []string
		want []string
	}{
		{[]string{"p", "c", "--list"}, []string{"answer"}},
		{[]string{"p", "c"}, []string{"before", "action"}},
	} {
		ran = nil
		cmd := newCmd()
		AnswerFlag(cmd, "list", func(*cli.Context) error { ran = append(ran, "answer"); return nil })
		if err := (&cli.App{Writer: io.Discard, Commands: []*cli.Command{cmd}}).Run(tt.args); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(ran, tt.want) {
			t.Errorf("%q: ran %q, want %q", tt.args, ran, tt.want)
		}
	}
	cmd := newCmd()
	before := cmd.Before
	AnswerFlag(cmd, "other", func(*cli.Context) error { return errors.New("never") })
	if cmd.Before == nil || before == nil {
		t.Fatal("Before lost")
	}
	ran = nil
	if err := (&cli.App{Writer: io.Discard, Commands: []*cli.Command{cmd}}).Run([]string{"p", "c"}); err != nil || !slices.Equal(ran, []string{"before", "action"}) {
		t.Errorf("a command without the flag: ran %q, err %v", ran, err)
	}
}

// TestWidthNotATerminal: help written to anything but a terminal is not wrapped.
func TestWidthNotATerminal(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	f, err := os.Create(t.TempDir() + "/help.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, out := range []io.Writer{io.Discard, &strings.Builder{}, w, f} {
		if n := Width(out); n != 0 {
			t.Errorf("Width(%T) = %d, want 0", out, n)
		}
	}
}

// TestBriefHelp: a command with AllFlag shows, in its ordinary help, its uncategorised flags and
// the Common flags of each group, a group's heading saying how many more AllFlag lists, and the
// groups it leaves out whole named before the last group; AllFlag answers with every flag, as
// the help is without Common. A command without AllFlag keeps its whole help.
func TestBriefHelp(t *testing.T) {
	o := testOptions
	o.AllFlag = "all"
	o.Common = map[string][]string{catA: {"alpha"}, catB: {"beta", "word"}}
	flags := append(testFlags(), &cli.BoolFlag{Name: "all", Usage: "every flag"})
	var b strings.Builder
	o.WriteFlags(&b, flags, 0)
	brief := b.String()
	for _, want := range []string{"   --all ", "   --plain ", "   " + catA + " (1 more with --all)\n", "   --alpha value, -a value ", "   " + catB + "\n",
		"   --beta value ", "   --word value ", "   Also, with --all: " + catY + " (1), " + catZ + " (1).\n\n   " + catBig + "\n", "   --help-big "} {
		if !strings.Contains(brief, want) {
			t.Errorf("brief help lacks %q:\n%s", want, brief)
		}
	}
	for _, not := range []string{"--a-name-much-wider", "--yankee", "--zulu", "--big-one"} {
		if strings.Contains(brief, not) {
			t.Errorf("brief help lists %s:\n%s", not, brief)
		}
	}
	b.Reset()
	o.WriteFlags(&b, testFlags(), 0) // no --all: the whole help
	var whole strings.Builder
	testOptions.WriteFlags(&whole, testFlags(), 0)
	if b.String() != whole.String() {
		t.Errorf("without its AllFlag a command's help changed:\n%s", b.String())
	}
	// --all answers with every flag, as the help of the same Options without Common.
	cmd := &cli.Command{Name: "c", Flags: flags, Action: func(*cli.Context) error { return errors.New("ran") }}
	o.AnswerAll(cmd)
	var out strings.Builder
	if err := (&cli.App{Name: "p", Writer: &out, Commands: []*cli.Command{cmd}}).Run([]string{"p", "c", "--all"}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"NAME:", "--a-name-much-wider-than-the-names-column", "--yankee", "--zulu", "   " + catA + "\n", "--help-big"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("--all lacks %q:\n%s", want, out.String())
		}
	}
	if strings.Contains(out.String(), "--big-one") || strings.Contains(out.String(), "more with --all") {
		t.Errorf("--all lists the last group, or counts flags it leaves out:\n%s", out.String())
	}
}
