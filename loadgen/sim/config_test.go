package sim_test

import (
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/loadcurve/loadcurve/loadgen/sim"
)

func TestProfilesValidate(t *testing.T) {
	names := sim.ProfileNames()
	if want := []string{"default", "latency", "medium", "throughput"}; !reflect.DeepEqual(names, want) {
		t.Fatalf("ProfileNames() = %v, want %v", names, want)
	}
	for _, n := range names {
		c, err := sim.Profile(n)
		if err != nil {
			t.Fatalf("Profile(%q): %v", n, err)
		}
		if err := c.Validate(); err != nil {
			t.Errorf("Profile(%q).Validate(): %v", n, err)
		}
		if c.ReasoningShare != 0 || c.ToolCalls {
			t.Errorf("profile %s: ReasoningShare %v, ToolCalls %v; want every answer mode off", n, c.ReasoningShare, c.ToolCalls)
		}
		if c.StepBase < 2*time.Millisecond {
			t.Errorf("profile %s: StepBase %v, want >= 2ms so timers are not the limit", n, c.StepBase)
		}
	}
	d, _ := sim.Profile("")
	def, _ := sim.Profile(sim.ProfileDefault)
	if d != def {
		t.Errorf(`Profile("") differs from Profile("default")`)
	}
	if _, err := sim.Profile("nope"); err == nil || !strings.Contains(err.Error(), "nope") {
		t.Errorf(`Profile("nope") error = %v, want one naming the profile`, err)
	}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*sim.Config)
		want   []string // substrings of the error; none means valid
	}{
		{"default is valid", func(*sim.Config) {}, nil},
		{"empty model", func(c *sim.Config) { c.ModelName = "" }, []string{"model-name"}},
		{"zero seqs", func(c *sim.Config) { c.MaxNumSeqs = 0 }, []string{"max-num-seqs"}},
		{"kv below context", func(c *sim.Config) { c.KVCacheTokens = c.MaxModelLen - 1 }, []string{"kv-cache-tokens"}},
		{"budget below seqs", func(c *sim.Config) { c.MaxBatchedTokens = c.MaxNumSeqs - 1 }, []string{"max-num-batched-tokens"}},
		{"step too short", func(c *sim.Config) { c.StepBase = time.Microsecond }, []string{"step-base"}},
		{"negative per seq", func(c *sim.Config) { c.StepPerSeq = -1 }, []string{"step-per-seq"}},
		{"negative per kv", func(c *sim.Config) { c.StepPerKVToken = -1 }, []string{"step-per-kv-token"}},
		{"zero prefill", func(c *sim.Config) { c.PrefillRate = 0 }, []string{"prefill-rate"}},
		{"nan prefill", func(c *sim.Config) { c.PrefillRate = math.NaN() }, []string{"prefill-rate"}},
		{"tiny context", func(c *sim.Config) { c.MaxModelLen = 1 }, []string{"max-model-len"}},
		{"cache without blocks", func(c *sim.Config) { c.BlockSize = 0 }, []string{"block-size"}},
		{"zero chunk", func(c *sim.Config) { c.TokensPerChunk = 0 }, []string{"tokens-per-chunk"}},
		{"zero default max", func(c *sim.Config) { c.DefaultMaxTokens = 0 }, []string{"default-max-tokens"}},
		{"eos above one", func(c *sim.Config) { c.EOSProbability = 1.5 }, []string{"eos-probability"}},
		{"reasoning share one", func(c *sim.Config) { c.ReasoningShare = 1 }, []string{"reasoning-share"}},
		{"negative reasoning share", func(c *sim.Config) { c.ReasoningShare = -0.1 }, []string{"reasoning-share"}},
		{"nan reasoning share", func(c *sim.Config) { c.ReasoningShare = math.NaN() }, []string{"reasoning-share"}},
		{"reasoning and tool calls", func(c *sim.Config) { c.ReasoningShare, c.ToolCalls = 0.999, true }, nil},
		{"faults above one", func(c *sim.Config) { c.ErrorRate, c.StallRate, c.DropRate = 0.5, 0.3, 0.3 }, []string{"must not exceed 1"}},
		{"every error at once", func(c *sim.Config) { c.MaxNumSeqs, c.TokensPerChunk, c.ErrorRate = 0, 0, -1 },
			[]string{"max-num-seqs", "tokens-per-chunk", "error-rate"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, _ := sim.Profile(sim.ProfileMedium)
			tt.mutate(&c)
			err := c.Validate()
			if len(tt.want) == 0 {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Validate() = nil, want errors mentioning %q", tt.want)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Validate() = %q, want it to mention %q", err, w)
				}
			}
			if _, err := sim.New(c); err == nil {
				t.Errorf("New accepted an invalid config")
			}
		})
	}
}

func TestParamsRoundTrip(t *testing.T) {
	// Setting every parameter to its advertised default from a zero Config
	// must rebuild the default profile exactly: Params covers every field.
	var c sim.Config
	for _, p := range sim.Params() {
		if p.Usage == "" {
			t.Errorf("param %s has no usage", p.Name)
		}
		if err := c.Set(p.Name, p.Default); err != nil {
			t.Fatalf("Set(%q, %q): %v", p.Name, p.Default, err)
		}
	}
	def, _ := sim.Profile(sim.ProfileDefault)
	if c != def {
		t.Errorf("config from Params defaults = %+v, want %+v", c, def)
	}
	// A field left at its zero value in the default profile escapes the
	// check above: there must be one parameter per field.
	if n, f := len(sim.Params()), reflect.TypeOf(sim.Config{}).NumField(); n != f {
		t.Errorf("%d params for %d Config fields", n, f)
	}
	want := map[string]sim.Param{
		"reasoning-share": {Name: "reasoning-share", Default: "0",
			Usage: "share of each chat response's output tokens streamed as reasoning_content before the answer (0: no reasoning)"},
		"tool-calls": {Name: "tool-calls", Default: "false",
			Usage: "answer chat requests that carry tools with a tool call (finish_reason tool_calls)"},
	}
	for _, p := range sim.Params() {
		if w, ok := want[p.Name]; ok {
			if p != w {
				t.Errorf("param %+v, want %+v", p, w)
			}
			delete(want, p.Name)
		}
	}
	for name := range want {
		t.Errorf("no param %s", name)
	}
}

func TestSet(t *testing.T) {
	tests := []struct {
		name, value string
		check       func(sim.Config) bool
		wantErr     string
	}{
		{"max-num-seqs", "7", func(c sim.Config) bool { return c.MaxNumSeqs == 7 }, ""},
		{"step-base", "3ms", func(c sim.Config) bool { return c.StepBase == 3*time.Millisecond }, ""},
		{"step-per-kv-token", "15ns", func(c sim.Config) bool { return c.StepPerKVToken == 15 }, ""},
		{"step-per-seq", "150us", func(c sim.Config) bool { return c.StepPerSeq == 150*time.Microsecond }, ""},
		{"prefill-rate", "1.5e4", func(c sim.Config) bool { return c.PrefillRate == 15000 }, ""},
		{"preempt", "false", func(c sim.Config) bool { return !c.Preempt }, ""},
		{"model-name", "m", func(c sim.Config) bool { return c.ModelName == "m" }, ""},
		{"seed", "-3", func(c sim.Config) bool { return c.Seed == -3 }, ""},
		{"reasoning-share", "0.25", func(c sim.Config) bool { return c.ReasoningShare == 0.25 }, ""},
		{"tool-calls", "true", func(c sim.Config) bool { return c.ToolCalls }, ""},
		{"tool-calls", "sometimes", nil, "want true or false"},
		{"max-num-seqs", "many", nil, "want an integer"},
		{"step-base", "12", nil, "want a duration"},
		{"preempt", "perhaps", nil, "want true or false"},
		{"error-rate", "x", nil, "want a number"},
		{"no-such-knob", "1", nil, "unknown"},
	}
	for _, tt := range tests {
		t.Run(tt.name+"="+tt.value, func(t *testing.T) {
			c, _ := sim.Profile(sim.ProfileMedium)
			err := c.Set(tt.name, tt.value)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !strings.Contains(err.Error(), tt.name) {
					t.Fatalf("Set error = %v, want one naming %s and saying %q", err, tt.name, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Set: %v", err)
			}
			if !tt.check(c) {
				t.Errorf("Set(%s, %s) did not take effect: %+v", tt.name, tt.value, c)
			}
		})
	}
}

// TestProfileTable keeps the package documentation's table honest: the
// documented peaks are what TheoreticalPeakOutput computes, and the default
// profile saturates between 40 and 100 requests per second on loadcurve's
// default workload (1024 in, 128 out): fast enough for a decision in minutes,
// slow enough for this client on two cores.
func TestProfileTable(t *testing.T) {
	tests := []struct {
		profile string
		peak    float64 // tok/s, as documented
	}{
		{"latency", 1113},
		{"medium", 1721},
		{"default", 13414},
		{"throughput", 2829},
	}
	for _, tt := range tests {
		c, _ := sim.Profile(tt.profile)
		got := c.TheoreticalPeakOutput(1024, 128)
		if math.Abs(got-tt.peak) > 1 {
			t.Errorf("%s: TheoreticalPeakOutput(1024,128) = %.1f, documented %.0f", tt.profile, got, tt.peak)
		}
		if tt.profile == "default" {
			if rps := got / 128; rps < 50 || rps > 150 {
				t.Errorf("default profile saturates at %.1f req/s, want 50..150 (fast to decide, within what one client process carries)", rps)
			}
		}
	}
}

func TestTheoreticalPeakOutputEdges(t *testing.T) {
	c, _ := sim.Profile(sim.ProfileMedium)
	tests := []struct {
		name    string
		in, out int
		zero    bool
	}{
		{"prompt fills the context", c.MaxModelLen, 10, true},
		{"no input", 0, 10, true},
		{"no output", 10, 0, true},
		{"ordinary", 1024, 128, false},
	}
	for _, tt := range tests {
		got := c.TheoreticalPeakOutput(tt.in, tt.out)
		if (got == 0) != tt.zero {
			t.Errorf("%s: TheoreticalPeakOutput(%d,%d) = %v", tt.name, tt.in, tt.out, got)
		}
	}
	// Output beyond the context is capped: asking for more cannot add more.
	a := c.TheoreticalPeakOutput(c.MaxModelLen-100, 100)
	b := c.TheoreticalPeakOutput(c.MaxModelLen-100, 100000)
	if a != b {
		t.Errorf("capped output changed the peak: %v vs %v", a, b)
	}
	// More sequences, more plateau; more tokens per chunk, more plateau.
	big := c
	big.MaxNumSeqs *= 2
	big.MaxBatchedTokens *= 2
	if big.TheoreticalPeakOutput(256, 256) <= c.TheoreticalPeakOutput(256, 256) {
		t.Errorf("doubling MaxNumSeqs did not raise the plateau")
	}
	spec := c
	spec.TokensPerChunk = 3
	if spec.TheoreticalPeakOutput(256, 256) <= c.TheoreticalPeakOutput(256, 256) {
		t.Errorf("TokensPerChunk 3 did not raise the plateau")
	}
}
