package workloads_test

import (
	"encoding/json"
	"os"
	"runtime"
	"strings"
	"testing"

	"github.com/loadcurve/loadcurve/internal/field"
	"github.com/loadcurve/loadcurve/workloads"
)

func TestSyntheticLengthsAndDeterminism(t *testing.T) {
	tests := []struct {
		name         string
		s            workloads.Synthetic
		inLo, inHi   int
		outLo, outHi int
	}{
		{"fixed", workloads.Synthetic{InputLen: 64, OutputLen: 16, Seed: 1}, 64, 64, 16, 16},
		{"range 0.5", workloads.Synthetic{InputLen: 100, OutputLen: 10, RangeRatio: 0.5, Seed: 2}, 50, 150, 5, 15},
		{"tiny with ratio stays >= 1", workloads.Synthetic{InputLen: 1, OutputLen: 1, RangeRatio: 0.9, Seed: 3}, 1, 1, 1, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			set, err := tc.s.Generate(2000)
			if err != nil {
				t.Fatal(err)
			}
			seenLo, seenHi := false, false
			for i, r := range set.Requests {
				if r.ID != i {
					t.Fatalf("request %d has id %d", i, r.ID)
				}
				if got := workloads.CountWords(r.Text()); got != r.InputTokens {
					t.Fatalf("request %d: prompt has %d words, InputTokens=%d", i, got, r.InputTokens)
				}
				if r.InputTokens < tc.inLo || r.InputTokens > tc.inHi || r.MaxTokens < tc.outLo || r.MaxTokens > tc.outHi {
					t.Fatalf("request %d: lengths %d/%d outside [%d,%d]/[%d,%d]", i, r.InputTokens, r.MaxTokens, tc.inLo, tc.inHi, tc.outLo, tc.outHi)
				}
				seenLo = seenLo || r.InputTokens == tc.inLo
				seenHi = seenHi || r.InputTokens == tc.inHi
			}
			// With 2000 uniform draws over at most 101 values, missing an end has probability
			// below 2·(1-1/101)^2000 ≈ 5e-9.
			if !seenLo || !seenHi {
				t.Errorf("range ends not reached: lo=%v hi=%v", seenLo, seenHi)
			}
			again, _ := tc.s.Generate(2000)
			if again.Fingerprint != set.Fingerprint {
				t.Error("same seed gave a different set")
			}
			prefix, _ := tc.s.Generate(10)
			if prefix.Fingerprint != workloads.Fingerprint(set.Requests[:10]) {
				t.Error("a smaller set is not a prefix of a larger one")
			}
		})
	}
}

func TestFingerprintChangesWithAnyChange(t *testing.T) {
	base, _ := workloads.Synthetic{InputLen: 8, OutputLen: 4, Seed: 5}.Generate(5)
	other, _ := workloads.Synthetic{InputLen: 8, OutputLen: 4, Seed: 6}.Generate(5)
	if base.Fingerprint == other.Fingerprint {
		t.Error("different seeds, same fingerprint")
	}
	mutations := map[string]func(r []workloads.Request){
		"max tokens": func(r []workloads.Request) { r[2].MaxTokens++ },
		"prompt":     func(r []workloads.Request) { r[0].Prompt += " x" },
		"order":      func(r []workloads.Request) { r[0], r[1] = r[1], r[0] },
		"expect":     func(r []workloads.Request) { r[4].Expect = &workloads.Expectation{Contains: "a"} },
	}
	for name, mutate := range mutations {
		reqs := append([]workloads.Request(nil), base.Requests...)
		mutate(reqs)
		if workloads.Fingerprint(reqs) == base.Fingerprint {
			t.Errorf("%s: fingerprint unchanged", name)
		}
	}
	if !strings.HasPrefix(base.Fingerprint, "sha256:") {
		t.Errorf("fingerprint %q", base.Fingerprint)
	}
}

func TestSyntheticValidate(t *testing.T) {
	errs := workloads.Synthetic{InputLen: 0, OutputLen: -1, RangeRatio: 1}.Validate()
	want := []string{workloads.FieldInputLen, workloads.FieldOutputLen, workloads.FieldRangeRatio}
	if len(errs) != len(want) {
		t.Fatalf("got %v", errs)
	}
	for i, w := range want {
		if fe := field.Of(errs[i]); fe == nil || fe.Name != w {
			t.Errorf("error %q is not a field error naming %s", errs[i], w)
		}
	}
}

func TestExpectationCheck(t *testing.T) {
	tests := []struct {
		name   string
		e      *workloads.Expectation
		text   string
		finish string
		tokens int
		ok     bool
	}{
		{"nil passes", nil, "", "", 0, true},
		{"exact trims", &workloads.Expectation{Exact: "Paris"}, " Paris\n", "stop", 1, true},
		{"exact differs", &workloads.Expectation{Exact: "Paris"}, "Lyon", "stop", 1, false},
		{"contains", &workloads.Expectation{Contains: "42"}, "the answer is 42.", "stop", 5, true},
		{"contains missing", &workloads.Expectation{Contains: "42"}, "no idea", "stop", 2, false},
		{"regex", &workloads.Expectation{Regex: `^\s*\d+\s*$`}, " 17 ", "stop", 1, true},
		{"regex misses", &workloads.Expectation{Regex: `^\d+$`}, "x17", "stop", 1, false},
		{"finish reason", &workloads.Expectation{FinishReason: "stop"}, "", "length", 9, false},
		{"min tokens", &workloads.Expectation{MinTokens: 10}, "", "stop", 9, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			reason := tc.e.Check(tc.text, tc.finish, tc.tokens)
			if (reason == "") != tc.ok {
				t.Errorf("Check = %q, want ok=%v", reason, tc.ok)
			}
		})
	}
	if err := (&workloads.Expectation{Regex: "("}).Validate(); err == nil || !strings.Contains(err.Error(), "(") {
		t.Errorf("bad regex not reported: %v", err)
	}
}

func TestSaveWritesOneRequestPerLine(t *testing.T) {
	set, _ := workloads.Synthetic{InputLen: 4, OutputLen: 2, Seed: 1}.Generate(3)
	path := t.TempDir() + "/r.jsonl"
	if err := workloads.Save(path, set); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) != 3 || !strings.Contains(lines[2], `"id":2`) {
		t.Errorf("unexpected file:\n%s", b)
	}
}

// TestGeneratedPromptsAreTheirText: a generated prompt's Text, AppendText, TextLen and JSON agree,
// are stable across calls, and its words are the recipe's count.
func TestGeneratedPromptsAreTheirText(t *testing.T) {
	set, err := workloads.Synthetic{InputLen: 64, OutputLen: 4, RangeRatio: 0.9, Seed: 5}.Generate(50)
	if err != nil {
		t.Fatal(err)
	}
	for i := range set.Requests {
		r := &set.Requests[i]
		text := r.Text()
		if !r.Generated() || r.Prompt != "" {
			t.Fatalf("request %d: not kept as a recipe", i)
		}
		if r.Text() != text || string(r.AppendText([]byte("x"))) != "x"+text || r.TextLen() != len(text) {
			t.Fatalf("request %d: Text, AppendText and TextLen disagree", i)
		}
		if got := workloads.CountWords(text); got != r.InputTokens {
			t.Errorf("request %d: %d words, InputTokens %d", i, got, r.InputTokens)
		}
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		var back workloads.Request
		if err := json.Unmarshal(b, &back); err != nil || back.Prompt != text || back.Generated() {
			t.Fatalf("request %d: JSON %s reads back as %+v (%v)", i, b, back, err)
		}
	}
}

// BenchmarkSyntheticSetMemory: the live heap a materialised synthetic set holds per request
// (vLLM's default 1024-word prompts), with the cold nonce applied as a run does.
func BenchmarkSyntheticSetMemory(b *testing.B) {
	const n = 20_000
	for b.Loop() {
		var m0, m1 runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&m0)
		set, err := workloads.Synthetic{InputLen: workloads.DefaultInputLen, OutputLen: workloads.DefaultOutputLen}.Generate(n)
		if err != nil {
			b.Fatal(err)
		}
		cold, err := workloads.ApplyCold(set, workloads.NewNonce())
		if err != nil {
			b.Fatal(err)
		}
		set = nil
		runtime.GC()
		runtime.ReadMemStats(&m1)
		b.ReportMetric(float64(m1.HeapAlloc-m0.HeapAlloc)/n, "heap-B/request")
		runtime.KeepAlive(cold)
	}
}
