package flagfile_test

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/loadcurve/loadcurve/cmd/internal/clihelp"
	"github.com/loadcurve/loadcurve/cmd/internal/flagfile"
	"github.com/loadcurve/loadcurve/internal/redact"
	"github.com/loadcurve/loadcurve/internal/scenario"
)

// list is a repeatable flag's value kept whole, as a command's would be.
type list struct{ vals []string }

func (l *list) Set(s string) error { l.vals = append(l.vals, s); return nil }
func (l *list) String() string     { return "" }
func (l *list) List() []string     { return l.vals }

// testFlags are a command's flags of every kind the package knows, fresh for each run.
func testFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "label", Aliases: []string{"l"}},
		&cli.StringFlag{Name: "base-url"},
		&cli.StringFlag{Name: "api-key"},
		&cli.StringFlag{Name: "config"},
		&cli.DurationFlag{Name: "duration", Value: 30 * time.Second},
		&cli.IntFlag{Name: "seed", Value: 1},
		&cli.Float64Flag{Name: "burstiness", Value: 1},
		&cli.BoolFlag{Name: "quiet"},
		&cli.StringSliceFlag{Name: "goodput"},
		&cli.GenericFlag{Name: "header", Value: &list{}},
	}
}

// run runs the command "cmd" of an app named "tool" with args, calling before in its Before
// and then inspect in its Action; it returns before's error.
func run(t *testing.T, args []string, before, inspect func(c *cli.Context) error) error {
	t.Helper()
	app := &cli.App{Name: "tool", Writer: io.Discard, ErrWriter: io.Discard, Commands: []*cli.Command{{
		Name: "cmd", Flags: testFlags(), Before: before,
		Action: func(c *cli.Context) error {
			if inspect != nil {
				return inspect(c)
			}
			return nil
		},
	}}}
	return app.Run(append([]string{"tool", "cmd"}, args...))
}

// applyFile is a Before that applies the scenario in body with Apply.
func applyFile(t *testing.T, body string) func(c *cli.Context) error {
	return func(c *cli.Context) error {
		entries, err := scenario.Parse([]byte(body))
		if err != nil {
			t.Fatalf("parse %q: %v", body, err)
		}
		return flagfile.Apply(c, "s.yaml", "config", entries)
	}
}

func TestApply(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		args       []string
		want       map[string]string // flag → its value after Apply (String, or Values joined by ",")
		wantErr    []string          // each line of the error, in order
	}{
		{name: "sets what the command line did not", body: "label: a\nseed: 7\nduration: 2s\ngoodput: [ttft:1, tpot:2]\nheader: [\"A: 1,2\", \"B: 3\"]\n",
			want: map[string]string{"label": "a", "seed": "7", "duration": "2s", "goodput": "ttft:1,tpot:2", "header": "A: 1,2,B: 3"}},
		{name: "the command line wins", body: "label: a\nseed: 7\n", args: []string{"--seed", "8"},
			want: map[string]string{"label": "a", "seed": "8"}},
		{name: "an alias names its flag", body: "l: a\n", want: map[string]string{"label": "a"}},
		{name: "null leaves the flag unset", body: "label: null\nseed: ~\n", want: map[string]string{"label": "", "seed": "1"}},
		{name: "a wrong value under an override is still wrong", body: "seed: x\n", args: []string{"--seed", "8"},
			wantErr: []string{"s.yaml:1: --seed x: not a number; give a whole number, e.g. 1 (the command line overrides it, but the file is wrong)"}},
		{name: "every problem with its line", body: "lable: a\nzzzzzz: 1\nconfig: other.yaml\nduration: 10\nl: a\nlabel: b\n[a]: 1\n",
			wantErr: []string{
				"s.yaml:1: tool cmd has no flag --lable; did you mean --label?",
				"s.yaml:2: tool cmd has no flag --zzzzzz",
				"s.yaml:3: a scenario cannot name another scenario",
				"s.yaml:4: --duration 10: give a unit, e.g. 10s or 10m",
				"s.yaml:6: --label is given twice (first on line 5)",
				"s.yaml:7: a key must be a flag name",
			}},
		{name: "a value that is a mapping", body: "label: {a: 1}\n", wantErr: []string{"s.yaml:1: --label: "}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := run(t, tc.args, applyFile(t, tc.body), func(c *cli.Context) error {
				for name, want := range tc.want {
					got := strings.Join(flagfile.Values(c, clihelp.FindFlag(c.Command.Flags, name)), ",")
					if got != want {
						t.Errorf("--%s = %q, want %q", name, got, want)
					}
				}
				return nil
			})
			if len(tc.wantErr) == 0 {
				if err != nil {
					t.Fatalf("Apply: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Apply: no error, want %q", tc.wantErr)
			}
			lines := strings.Split(err.Error(), "\n")
			if len(lines) != len(tc.wantErr) {
				t.Fatalf("Apply: %d problems, want %d:\n%v", len(lines), len(tc.wantErr), err)
			}
			for i, w := range tc.wantErr {
				if !strings.HasPrefix(lines[i], w) {
					t.Errorf("problem %d: %q, want %q", i, lines[i], w)
				}
			}
		})
	}
}

// TestApplyCapsItsProblems: a file of many bad keys shows MaxProblems of them and counts the
// rest.
func TestApplyCapsItsProblems(t *testing.T) {
	var b strings.Builder
	for i := range flagfile.MaxProblems + 5 {
		b.WriteString("nope" + strings.Repeat("x", i) + ": 1\n")
	}
	err := run(t, nil, applyFile(t, b.String()), nil)
	if err == nil {
		t.Fatal("no error")
	}
	lines := strings.Split(err.Error(), "\n")
	if len(lines) != flagfile.MaxProblems+1 || lines[len(lines)-1] != "s.yaml: and 5 more problems" {
		t.Errorf("%d lines, the last %q: want %d and the count of the rest", len(lines), lines[len(lines)-1], flagfile.MaxProblems+1)
	}
}

// TestResolveAndReadBack: Resolve writes the flags set, by the command line or a file, leaving
// out the skipped, naming the secret without their values, a URL without its credentials and
// every value without the secrets; Apply reads the encoded scenario back to the same flags.
func TestResolveAndReadBack(t *testing.T) {
	res := flagfile.Resolution{
		Skip:    map[string]bool{"config": true},
		Secret:  map[string]bool{"api-key": true},
		URL:     map[string]bool{"base-url": true},
		Secrets: redact.New("s3cret"),
	}
	var settings []scenario.Setting
	var omitted []string
	args := []string{"--config", "x.yaml", "--api-key", "k", "--base-url", "http://u:p@h/v1?key=q", "--label", "run s3cret",
		"--header", "A: 1,2", "--goodput", "ttft:1", "--goodput", "tpot:2", "--quiet", "--seed", "0"}
	if err := run(t, args, nil, func(c *cli.Context) error {
		settings, omitted = flagfile.Resolve(c, res)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	want := []scenario.Setting{
		{Name: "label", Values: []string{"run [REDACTED]"}},
		{Name: "base-url", Values: []string{"http://h/v1"}},
		{Name: "seed", Values: []string{"0"}},
		{Name: "quiet", Values: []string{"true"}},
		{Name: "goodput", Values: []string{"ttft:1", "tpot:2"}, List: true},
		{Name: "header", Values: []string{"A: 1,2"}, List: true},
	}
	if !reflect.DeepEqual(settings, want) {
		t.Errorf("settings:\ngot  %+v\nwant %+v", settings, want)
	}
	if w := []string{"the credentials and query of --base-url", "--api-key"}; !reflect.DeepEqual(omitted, w) {
		t.Errorf("omitted %q, want %q", omitted, w)
	}
	b, err := scenario.Encode(scenario.Resolved{Settings: settings})
	if err != nil {
		t.Fatal(err)
	}
	if err := run(t, nil, applyFile(t, string(b)), func(c *cli.Context) error {
		if got, _ := flagfile.Resolve(c, flagfile.Resolution{}); !reflect.DeepEqual(got, want) {
			t.Errorf("read back:\ngot  %+v\nwant %+v", got, want)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

func writeFile(t *testing.T, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "scenario.yaml")
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestRecordedCompare: the flags given that differ from the recorded ones (or from their
// defaults, when the file does not set them), free ones aside, and what same decides.
func TestRecordedCompare(t *testing.T) {
	path := writeFile(t, "l: a\nseed: \"7\"\ngoodput: [\"ttft:1\"]\n")
	same := func(name string, got, want []string) ([]string, []string, bool) {
		if name == "goodput" {
			return append(got, "more"), want, strings.Join(got, "") == strings.Join(want, "")
		}
		return got, want, false
	}
	for _, tc := range []struct {
		name string
		args []string
		want []flagfile.Difference
	}{
		{name: "the same values", args: []string{"--label", "a", "--seed", "7", "--goodput", "ttft:1"}},
		{name: "free flags", args: []string{"--label", "b", "--quiet"}},
		{name: "the defaults of flags not recorded", args: []string{"--duration", "30s", "--burstiness", "1"}},
		{name: "differences", args: []string{"--seed", "8", "--duration", "1m", "--goodput", "ttft:2"}, want: []flagfile.Difference{
			{Name: "duration", Got: []string{"1m0s"}, Want: []string{"30s"}},
			{Name: "seed", Got: []string{"8"}, Want: []string{"7"}, Line: 2},
			{Name: "goodput", Got: []string{"ttft:2", "more"}, Want: []string{"ttft:1"}, Line: 3},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := run(t, tc.args, nil, func(c *cli.Context) error {
				rec, err := flagfile.Read(path, c.Command.Flags)
				if err != nil {
					return err
				}
				got := rec.Compare(c, map[string]bool{"label": true, "quiet": true}, same)
				if !reflect.DeepEqual(got, tc.want) {
					t.Errorf("got  %+v\nwant %+v", got, tc.want)
				}
				return nil
			}); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestRecordedTake: the recorded flags the command was not given are set, but for those
// skipped and those the command lacks; a value a flag refuses is an error with its line.
func TestRecordedTake(t *testing.T) {
	path := writeFile(t, "l: a\nseed: \"7\"\nbase-url: \"http://h/v1\"\ngone: \"1\"\nheader: [\"A: 1\", \"B: 2\"]\nburstiness: \"x\"\n")
	if err := run(t, []string{"--seed", "8"}, nil, func(c *cli.Context) error {
		rec, err := flagfile.Read(path, c.Command.Flags)
		if err != nil {
			return err
		}
		if v, ok := rec.Values("label"); !ok || rec.Line("label") != 1 || !reflect.DeepEqual(v, []string{"a"}) {
			t.Errorf("label recorded as %q (%v) on line %d, want \"a\" on line 1", v, ok, rec.Line("label"))
		}
		errs := rec.Take(c, map[string]bool{"base-url": true})
		if len(errs) != 1 || !strings.HasPrefix(errs[0].Error(), path+":6: --burstiness x: ") {
			t.Errorf("errors %v, want the one of line 6", errs)
		}
		for name, want := range map[string]string{"label": "a", "seed": "8", "base-url": "", "header": "A: 1,B: 2"} {
			if got := strings.Join(flagfile.Values(c, clihelp.FindFlag(c.Command.Flags, name)), ","); got != want {
				t.Errorf("--%s = %q, want %q", name, got, want)
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

func TestReadRefuses(t *testing.T) {
	if _, err := flagfile.Read(filepath.Join(t.TempDir(), "none.yaml"), testFlags()); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a missing file: %v, want os.ErrNotExist", err)
	}
	for body, want := range map[string]string{
		"a: 1\n---\nb: 2\n": ":3: not a scenario: one document expected",
		"- a\n":             ":1: not a scenario: want a mapping",
		"label: {a: 1}\n":   ":1: --label: ",
	} {
		path := writeFile(t, body)
		if _, err := flagfile.Read(path, testFlags()); err == nil || !strings.HasPrefix(err.Error(), path+want) {
			t.Errorf("%q: %v, want %q", body, err, path+want)
		}
	}
}

func TestDefaults(t *testing.T) {
	for _, f := range testFlags() {
		var want []string
		switch f.Names()[0] {
		case "duration":
			want = []string{"30s"}
		case "seed", "burstiness":
			want = []string{"1"}
		case "quiet":
			want = []string{"false"}
		case "goodput", "header":
		default:
			want = []string{""}
		}
		if got := flagfile.Defaults(f); !reflect.DeepEqual(got, want) {
			t.Errorf("--%s: defaults %q, want %q", f.Names()[0], got, want)
		}
	}
}

func TestQuotedAndShellWord(t *testing.T) {
	for _, tc := range []struct {
		vals []string
		want string
	}{{nil, "none"}, {[]string{"a b"}, `"a b"`}, {[]string{"a", "b"}, `"a" "b"`}} {
		if got := flagfile.Quoted(tc.vals, "none"); got != tc.want {
			t.Errorf("Quoted(%q) = %q, want %q", tc.vals, got, tc.want)
		}
	}
	for in, want := range map[string]string{"out/sweep-1": "out/sweep-1", "": "''", "my dir": "'my dir'", "it's": `'it'\''s'`, "$HOME": "'$HOME'"} {
		if got := flagfile.ShellWord(in); got != want {
			t.Errorf("ShellWord(%q) = %q, want %q", in, got, want)
		}
	}
}
