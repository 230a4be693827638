package main

import (
	"io"
	"strings"
	"testing"
	"time"

	"github.com/loadcurve/loadcurve/arrival"
	"github.com/loadcurve/loadcurve/curve/result"
	"github.com/loadcurve/loadcurve/curve/sweep"
)

// TestEveryFieldHasItsFlag: every row of the one table from library fields to flags names a flag
// that a command has (a renamed flag or a mistyped row would send users to a flag that does
// not exist).
func TestEveryFieldHasItsFlag(t *testing.T) {
	t.Parallel()
	flags := map[string]bool{}
	for _, cmd := range newApp(io.Discard, io.Discard).Commands {
		for _, f := range cmd.Flags {
			for _, n := range f.Names() {
				flags[n] = true
			}
		}
	}
	for name, flag := range fieldFlags {
		if !flags[flag] {
			t.Errorf("field %q maps to --%s, which no command has", name, flag)
		}
		if strings.HasPrefix(flag, "-") {
			t.Errorf("field %q: %q is written without its dashes", name, flag)
		}
	}
}

// TestFlagErrorNamesEveryInputByItsFlag: a library's field error reaches the user with its own
// flag and every other input it refers to written as a flag, once, wrapped or not.
func TestFlagErrorNamesEveryInputByItsFlag(t *testing.T) {
	t.Parallel()
	cfg := sweep.Config{Rates: sweep.Rates{List: []float64{1}}, MinTierDuration: 2 * time.Second, MaxTierDuration: time.Second,
		Settings: result.DefaultSettings()}
	errs := cfg.Validate()
	if len(errs) == 0 {
		t.Fatal("no error")
	}
	got := bind.Error(errs[len(errs)-1]).Error()
	for _, e := range errs {
		if s := bind.Error(e).Error(); strings.HasPrefix(s, "--min-tier-duration") {
			got = s
		}
	}
	if want := "--min-tier-duration must be at least 1s and at most the --max-tier-duration (1s), got 2s"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	spec := arrival.Spec{Rate: 1, Burstiness: 1, RampStart: 3}
	wrapped := bind.Error(wrap(spec.Validate()[0]))
	if want := "tier: --ramp-up-start-rps is only allowed with --ramp-up-strategy linear or exponential, got 3 with strategy none"; wrapped.Error() != want {
		t.Errorf("wrapped: got %q, want %q", wrapped, want)
	}
	if again := bind.Error(wrapped); again.Error() != wrapped.Error() {
		t.Errorf("mapped twice: %q", again)
	}
}

type wrapped struct{ err error }

func (w wrapped) Error() string { return "tier: " + w.err.Error() }
func (w wrapped) Unwrap() error { return w.err }

func wrap(err error) error { return wrapped{err} }
