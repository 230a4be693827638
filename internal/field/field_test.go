package field_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/loadcurve/loadcurve/internal/field"
)

func TestErrorNamesItsFieldOnce(t *testing.T) {
	err := fmt.Errorf("sweep: %w", field.Errorf("target-share", "must be in (0, 1], got %v", 0))
	fe := field.Of(err)
	if fe == nil || fe.Name != "target-share" || fe.Msg != "must be in (0, 1], got 0" {
		t.Fatalf("Of(%v) = %+v", err, fe)
	}
	if got := fe.Error(); got != "target-share: must be in (0, 1], got 0" {
		t.Errorf("Error() = %q", got)
	}
	if field.Of(fmt.Errorf("plain")) != nil {
		t.Error("a plain error is not a field error")
	}
}

func TestRefsAreWrittenByTheReader(t *testing.T) {
	err := field.Errorf("ramp start rate", "only allowed with %v linear or exponential, got %s (%v)", field.Ref("ramp strategy"), "2", field.Ref("rate"))
	fe := field.Of(err)
	if got, want := err.Error(), "ramp start rate: only allowed with ramp strategy linear or exponential, got 2 (rate)"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	flags := map[string]string{"ramp strategy": "--ramp-up-strategy", "rate": "--request-rate"}
	if got, want := fe.Text(func(n string) string { return flags[n] }), "only allowed with --ramp-up-strategy linear or exponential, got 2 (--request-rate)"; got != want {
		t.Errorf("Text(flags) = %q, want %q", got, want)
	}
	if got := fe.Refs(); len(got) != 2 || got[0] != "ramp strategy" || got[1] != "rate" {
		t.Errorf("Refs() = %q", got)
	}
}

func TestRefsInsideAFormattedArgument(t *testing.T) {
	what := fmt.Sprintf("%v 10s", field.Ref("tier duration"))
	fe := field.Of(field.Errorf("warm-up window", "leaves nothing of a tier (%s)", what))
	if got, want := fe.Text(func(n string) string { return "--" + map[string]string{"tier duration": "duration"}[n] }), "leaves nothing of a tier (--duration 10s)"; got != want {
		t.Errorf("Text = %q, want %q", got, want)
	}
	if got, want := fe.Error(), "warm-up window: leaves nothing of a tier (tier duration 10s)"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
}

func TestErrorfWraps(t *testing.T) {
	cause := errors.New("no such file")
	err := fmt.Errorf("load: %w", field.Errorf("workload", "x.jsonl: %w", cause))
	if !errors.Is(err, cause) || field.Of(err).Msg != "x.jsonl: no such file" {
		t.Errorf("%v: want it to wrap %v and read as the message", err, cause)
	}
	if field.Of(field.Errorf("a", "b")).Unwrap() != nil {
		t.Error("nothing wrapped, nothing to unwrap")
	}
}

func TestRenderReadsOnFromAPredicate(t *testing.T) {
	flag := func(n string) string { return "--" + n }
	for _, tc := range []struct {
		err  error
		want string
	}{
		{field.Errorf("burstiness", "must be > 0 or inf, got %v", 0), "--burstiness must be > 0 or inf, got 0"},
		{field.Errorf("range-ratio", "is the coefficient of variation"), "--range-ratio is the coefficient of variation"},
		{field.Errorf("shard", "%q: want i/k", "x"), `--shard: "x": want i/k`},
		{field.Errorf("duration", "give %v or %v, not both", field.Ref("num-requests"), field.Ref("duration")), "--duration: give --num-requests or --duration, not both"},
	} {
		if got := field.Of(tc.err).Render(flag); got != tc.want {
			t.Errorf("Render = %q, want %q", got, tc.want)
		}
	}
}

func TestBytes(t *testing.T) {
	for _, tc := range []struct {
		b    float64
		want string
	}{{0, "0.00 B"}, {512, "512 B"}, {2048, "2.00 KiB"}, {16e6, "15.3 MiB"}, {3.16 * (1 << 30), "3.16 GiB"}, {24.6 * (1 << 30), "24.6 GiB"}, {1 << 62, "4.00 EiB"}, {1 << 72, "4096 EiB"}} {
		if got := field.Bytes(tc.b); got != tc.want {
			t.Errorf("Bytes(%g) = %q, want %q", tc.b, got, tc.want)
		}
	}
}

// TestSentenceNamesItsInputsItself: a sentence is written whole, each input where the sentence
// puts it (the one it is about too), by the reader's names; it is still the field error of its
// input.
func TestSentenceNamesItsInputsItself(t *testing.T) {
	flag := func(n string) string {
		return map[string]string{"requests": "--num-requests", "duration": "--duration", "model": "--sim-model"}[n]
	}
	tests := []struct {
		err             error
		name            string
		plain, rendered string
	}{
		{field.Sentencef("duration", "give %v or %v, not both", field.Ref("requests"), field.Ref("duration")), "duration",
			"give requests or duration, not both", "give --num-requests or --duration, not both"},
		{field.Sentencef("model", "%v %q: want batching or mdc", field.Ref("model"), "x"), "model",
			`model "x": want batching or mdc`, `--sim-model "x": want batching or mdc`},
	}
	for _, tt := range tests {
		fe := field.Of(fmt.Errorf("wrapped: %w", tt.err))
		if fe == nil || fe.Name != tt.name {
			t.Fatalf("Of(%v) = %+v, want the field error of %s", tt.err, fe, tt.name)
		}
		if got := fe.Error(); got != tt.plain {
			t.Errorf("Error() = %q, want %q", got, tt.plain)
		}
		if got := fe.Render(flag); got != tt.rendered {
			t.Errorf("Render = %q, want %q", got, tt.rendered)
		}
	}
	// An ordinary error still leads with its input.
	if got := field.Of(field.Errorf("model", "%q: want batching or mdc", "x")).Render(flag); got != `--sim-model: "x": want batching or mdc` {
		t.Errorf("Render = %q", got)
	}
}
