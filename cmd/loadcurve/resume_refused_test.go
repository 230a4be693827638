package main

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/loadcurve/loadcurve/curve/result"
)

// TestResumeRefusedBeforeTheTargetStarts: issue 37's resume cases, against a server that counts
// what it is sent. A killed sweep (its second tier cut by the kill) whose finished tier holds a
// hand-edited record, or whose records header says it measured otherwise than the resume would
// (its scenario.yaml gone, so no flag names the difference; or its tiers unsealed, from an older
// loadcurve, and its header's seed edited) is refused with exit 2, naming what differs, before a
// single request reaches the server (the header was compared only after the preflight); the
// file is unchanged. The untouched copy resumes.
func TestResumeRefusedBeforeTheTargetStarts(t *testing.T) {
	t.Parallel()
	var sent atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sent.Add(1)
		w.Header().Set("Content-Type", "text/event-stream")
		for range 2 {
			fmt.Fprint(w, `data: {"choices":[{"index":0,"delta":{"content":" ok"},"finish_reason":null}]}`+"\n\n")
		}
		fmt.Fprint(w, `data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":2}}`+"\n\ndata: [DONE]\n\n")
	}))
	t.Cleanup(srv.Close)
	flags := []string{"--base-url", srv.URL + "/v1", "--model", "m", "--request-rates", "20,30", "--duration", "1s", "--no-confirm",
		"--max-schedule-lag", "1s", "--quiet"}
	done := filepath.Join(t.TempDir(), "done")
	if code, _, stderr := runCLI(t, append([]string{"sweep", "--seed", "4", "--out", done}, flags...)...); code != exitOK {
		t.Fatalf("sweep: exit %d\n%s", code, stderr)
	}
	raw, err := os.ReadFile(filepath.Join(done, result.RecordsName))
	if err != nil {
		t.Fatal(err)
	}
	scen, err := os.ReadFile(filepath.Join(done, result.ScenarioName))
	if err != nil {
		t.Fatal(err)
	}
	// Killed in the middle of tier 1: its tier line and a record, no closing line.
	end0 := bytes.Index(raw, []byte(`{"kind":"tier_end","tier":0,`))
	cut := end0 + bytes.IndexByte(raw[end0:], '\n') + 1
	cut += bytes.IndexByte(raw[cut:], '\n') + 1 // tier 1's tier line
	cut += bytes.IndexByte(raw[cut:], '\n') + 1 // and one of its records
	killed := raw[:cut]

	variant := func(withScenario bool, edit func([]byte) []byte) string {
		d := filepath.Join(t.TempDir(), "sweep")
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if withScenario {
			os.WriteFile(filepath.Join(d, result.ScenarioName), scen, 0o644)
		}
		os.WriteFile(filepath.Join(d, result.RecordsName), edit(bytes.Clone(killed)), 0o644)
		return d
	}
	seal := regexp.MustCompile(`,"seal":\{[^}]*\}`)
	tests := []struct {
		name string
		dir  string
		args []string
		says []string
	}{
		{"a record of the finished tier edited", variant(true, func(b []byte) []byte {
			return bytes.Replace(b, []byte(`"output_tokens":2`), []byte(`"output_tokens":3`), 1)
		}), nil, []string{"tier 0 was changed after it finished"}},
		{"another seed, with no scenario.yaml to name it", variant(false, func(b []byte) []byte { return b }),
			append([]string{"--seed", "5"}, flags...), []string{"the seed (--seed)", "4", "5"}},
		{"an unsealed file's header edited", variant(true, func(b []byte) []byte {
			b = seal.ReplaceAll(b, nil)
			return bytes.Replace(b, []byte(`"seed":4`), []byte(`"seed":9`), 1)
		}), nil, []string{"the seed (--seed)", "9"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before, _ := os.ReadFile(filepath.Join(tc.dir, result.RecordsName))
			n := sent.Load()
			code, _, stderr := runCLI(t, append([]string{"sweep", "--resume", tc.dir}, tc.args...)...)
			if code != exitUsage {
				t.Fatalf("exit %d, want %d\n%s", code, exitUsage, stderr)
			}
			for _, s := range tc.says {
				if !strings.Contains(stderr, s) {
					t.Errorf("the refusal does not say %q:\n%s", s, stderr)
				}
			}
			if got := sent.Load() - n; got != 0 {
				t.Errorf("%d requests reached the server before the refusal", got)
			}
			if after, _ := os.ReadFile(filepath.Join(tc.dir, result.RecordsName)); !bytes.Equal(after, before) {
				t.Error("the refused resume changed records.jsonl")
			}
		})
	}
	// The killed sweep itself resumes: the refusals above are the edits'.
	if code, _, stderr := runCLI(t, "sweep", "--resume", variant(true, func(b []byte) []byte { return b })); code != exitOK {
		t.Fatalf("the untouched copy: exit %d\n%s", code, stderr)
	}
}
