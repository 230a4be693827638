package clihelp

import (
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
)

// usageError is the error urfave/cli's parser gives app for args (app's OnUsageError
// receives it), nil when they parse.
func usageError(t *testing.T, app *cli.App, args ...string) error {
	t.Helper()
	var got error
	app.Writer, app.ErrWriter = io.Discard, io.Discard
	app.OnUsageError = func(_ *cli.Context, err error, _ bool) error { got = err; return err }
	for _, c := range app.Commands {
		c.OnUsageError = app.OnUsageError
		c.Action = func(*cli.Context) error { return nil }
	}
	app.Action = func(*cli.Context) error { return nil }
	_ = app.Run(append([]string{app.Name}, args...))
	return got
}

// testApp is a program with two commands that share a flag.
func testApp() *cli.App {
	return &cli.App{Name: "prog", Flags: []cli.Flag{&cli.BoolFlag{Name: "debug"}}, Commands: []*cli.Command{
		{Name: "run", Flags: []cli.Flag{
			&cli.Float64Flag{Name: "request-rate", Value: 5},
			&cli.Float64Flag{Name: "ratio"},
			&cli.DurationFlag{Name: "duration"},
			&cli.IntFlag{Name: "num-requests", Value: 200},
			&cli.IntFlag{Name: "max-concurrency"},
			&cli.Int64Flag{Name: "seed", Value: 42},
			&cli.UintFlag{Name: "workers"},
			&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}},
			&cli.StringFlag{Name: "out"},
			&cli.StringSliceFlag{Name: "header"},
		}},
		{Name: "sweep", Aliases: []string{"s"}, Flags: []cli.Flag{&cli.Float64SliceFlag{Name: "request-rates"}, &cli.IntFlag{Name: "max-tiers"}}},
		{Name: "secret", Hidden: true},
	}}
}

// TestExplain: a parse error of a command names the flag, the form it wants with an example,
// and the flags a mistyped one was probably meant to be; what it cannot explain is returned
// as it is. The errors are urfave/cli's own, from a real parse.
func TestExplain(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--requst-rate", "5"}, "flag provided but not defined: -requst-rate; did you mean --request-rate?"},
		{[]string{"--quite"}, "flag provided but not defined: -quite; did you mean --quiet?"},
		{[]string{"--zzzzzzzz"}, "flag provided but not defined: -zzzzzzzz"},
		{[]string{"--duration"}, "--duration needs a value: give a number with a unit, e.g. 500ms, 30s, 2m or 1h30m"},
		{[]string{"--duration", "10"}, "--duration 10: give a unit, e.g. 10s or 10m"},
		{[]string{"--duration", "ten"}, "--duration ten: not a duration; give a number with a unit, e.g. 500ms, 30s, 2m or 1h30m"},
		{[]string{"--duration", ""}, `--duration "": not a duration; give a number with a unit, e.g. 500ms, 30s, 2m or 1h30m`},
		{[]string{"--num-requests", "1.5"}, "--num-requests 1.5: not a whole number; give a whole number, e.g. 200"},
		{[]string{"--num-requests", "lots"}, "--num-requests lots: not a number; give a whole number, e.g. 200"},
		{[]string{"--max-concurrency", "two"}, "--max-concurrency two: not a number; give a whole number, e.g. 10"},
		{[]string{"--num-requests", "99999999999999999999"}, "--num-requests 99999999999999999999: out of range; give a whole number, e.g. 200"},
		{[]string{"--seed", "x"}, "--seed x: not a number; give a whole number, e.g. 42"},
		{[]string{"--workers", "-1"}, "--workers -1: not a whole number; give a whole number ≥ 0, e.g. 10"},
		{[]string{"--request-rate", "fast"}, "--request-rate fast: not a number; give a number, e.g. 5"},
		{[]string{"--ratio", "a lot"}, `--ratio "a lot": not a number; give a number, e.g. 2.5`},
		{[]string{"--ratio", "1e999"}, "--ratio 1e999: out of range; give a number, e.g. 2.5"},
		{[]string{"--quiet=maybe"}, "--quiet=maybe: want true or false (--quiet alone means true)"},
		{[]string{"-q=maybe"}, "--q=maybe: want true or false (--quiet alone means true)"},
		{[]string{"--out"}, "--out needs a value: give a value"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			app := testApp()
			err := usageError(t, app, append([]string{"run"}, tt.args...)...)
			if err == nil {
				t.Fatal("no usage error")
			}
			if got := Explain(app.Command("run").Flags, err).Error(); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
	other := errors.New("something else")
	if got := Explain(testApp().Command("run").Flags, other); got != other {
		t.Errorf("another error: got %v", got)
	}
}

// TestExplainRoot: a command's flag given before the command is sent after it, a near name of
// one is suggested with its commands, the app's own flags are explained as a command's.
func TestExplainRoot(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--request-rate", "5", "run"}, "--request-rate is a flag of run: give it after the command, e.g. prog run --request-rate …"},
		{[]string{"--max-tiers", "3"}, "--max-tiers is a flag of sweep: give it after the command, e.g. prog sweep --max-tiers …"},
		{[]string{"--requst-rates", "5"}, "flag provided but not defined: -requst-rates; did you mean --request-rates, a flag of sweep? Give it after the command, e.g. prog sweep --request-rates …"},
		{[]string{"--debgu"}, "flag provided but not defined: -debgu; did you mean --debug?"},
		{[]string{"--debug=maybe"}, "--debug=maybe: want true or false (--debug alone means true)"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			app := testApp()
			err := usageError(t, app, tt.args...)
			if err == nil {
				t.Fatal("no usage error")
			}
			if got := ExplainRoot(app, err).Error(); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

// TestUnknownCommand: the near commands (aliases too, hidden ones never), else all of them.
func TestUnknownCommand(t *testing.T) {
	tests := []struct{ name, want string }{
		{"swep", `no command "swep"; did you mean sweep?`},
		{"rnu", `no command "rnu"; did you mean run?`},
		{"secrte", `no command "secrte"; the commands are run, sweep, s (prog --help says what each does)`},
		{"--nope", "unknown option --nope"},
	}
	for _, tt := range tests {
		if got := UnknownCommand(testApp(), tt.name).Error(); got != tt.want {
			t.Errorf("UnknownCommand(%q) = %q, want %q", tt.name, got, tt.want)
		}
	}
}

// TestNearestFlags: the flags' names with their dashes, as a message gives them.
func TestNearestFlags(t *testing.T) {
	flags := testApp().Command("run").Flags
	tests := []struct{ typed, want string }{
		{"requst-rate", "--request-rate"},
		{"qu", "-q"},
		{"num", "--num-requests"},
		{"zzzz", ""},
	}
	for _, tt := range tests {
		if got := NearestFlags(tt.typed, flags); got != tt.want {
			t.Errorf("NearestFlags(%q) = %q, want %q", tt.typed, got, tt.want)
		}
	}
	if f := FindFlag(flags, "q"); f == nil || f.Names()[0] != "quiet" {
		t.Errorf("FindFlag(q) = %v", f)
	}
	if f := FindFlag(flags, "nope"); f != nil {
		t.Errorf("FindFlag(nope) = %v", f)
	}
}
