package main

import (
	"io"
	"regexp"
	"testing"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/loadcurve/loadcurve/cmd/internal/cliparam"
)

// TestSettingsFlagsAreNamedByFieldFlags: every flag built from a library's declared settings
// has a flag's name, from fieldFlags or the field's own name when it is one.
func TestSettingsFlagsAreNamedByFieldFlags(t *testing.T) {
	t.Parallel()
	shaped := regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)
	groups := cliparam.Concat(targetFlags(), loadFlags("4", 200), clientFlags(), sourceFlags(), objectiveFlags(), runInfoFlags(), shardFlags())
	seen := map[string]bool{}
	for _, f := range groups {
		for _, n := range f.Names() {
			if !shaped.MatchString(n) && n != "v" && n != "q" {
				t.Errorf("flag %q is not named as a flag", n)
			}
			if seen[n] {
				t.Errorf("flag %q declared twice", n)
			}
			seen[n] = true
		}
	}
}

// TestLoadFlagsReadWhatWasGiven: a flag not given reads as the command's default, one given
// as what was given, and set-ness decides between a count and a duration.
func TestLoadFlagsReadWhatWasGiven(t *testing.T) {
	t.Parallel()
	tests := []struct {
		args []string
		n    int
		d    time.Duration
		rate float64
		errs int
	}{
		{nil, 200, 0, 4, 0},
		{[]string{"--num-prompts", "5", "--request-rate", "2.5"}, 5, 0, 2.5, 0},
		{[]string{"--duration", "2s"}, 0, 2 * time.Second, 4, 0},
		{[]string{"--duration", "2s", "--num-requests", "200"}, 0, 2 * time.Second, 4, 1},
		{[]string{"--duration", "0s"}, 0, 0, 4, 1},
	}
	for _, tt := range tests {
		var n int
		var d time.Duration
		var rate float64
		var errs []error
		app := &cli.App{Writer: io.Discard, ErrWriter: io.Discard, HideHelpCommand: true, Commands: []*cli.Command{{Name: "x", Flags: loadFlags("4", 200), HideHelpCommand: true,
			Action: func(c *cli.Context) error {
				spec, e := arrivalSpec(c)
				n, d, errs = loadCount(c)
				errs, rate = append(errs, e...), spec.Rate
				return nil
			}}}}
		if err := app.Run(append([]string{"loadcurve", "x"}, tt.args...)); err != nil {
			t.Fatal(err)
		}
		if n != tt.n || d != tt.d || rate != tt.rate || len(errs) != tt.errs {
			t.Errorf("%q: n %d, d %v, rate %v, errors %v; want %d, %v, %v, %d errors", tt.args, n, d, rate, errs, tt.n, tt.d, tt.rate, tt.errs)
		}
	}
}
