package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/loadcurve/loadcurve/measure"
	"github.com/loadcurve/loadcurve/measure/records"
)

// TestSessionsOnTheSim runs conversations against the embedded deployment: every turn is sent
// with the whole history (its prompt grows by the previous turn's prompt and reply), after the
// previous response's end plus the think time, and the prefix cache serves a growing share of
// each prompt as the history grows (a fresh nonce per session keeps turn 1 cold).
func TestSessionsOnTheSim(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "sessions")
	const turns, think = 4, 150 * time.Millisecond
	code, _, stderr := runCLI(t, "run", "--workload", "sessions", "--session-turns", "4", "--think-time", "150ms",
		"--num-requests", "12", "--request-rate", "4", "--random-input-len", "64", "--random-output-len", "16",
		"--max-schedule-lag", "1s", "--quiet", "--out", dir)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	f, err := records.ReadFile(filepath.Join(dir, "records.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	bySession := map[int][]records.Record{}
	for _, r := range f.Records {
		bySession[r.Session] = append(bySession[r.Session], r)
	}
	if len(f.Records) != 12*turns || len(bySession) != 12 {
		t.Fatalf("%d records in %d sessions, want %d in 12", len(f.Records), len(bySession), 12*turns)
	}
	growth := -1 // what each turn adds to the prompt besides the history: its own text and framing
	for s, rs := range bySession {
		sort.Slice(rs, func(i, j int) bool { return rs[i].Turn < rs[j].Turn })
		for k, r := range rs {
			if r.Turn != k+1 || r.Outcome != records.OK || r.InputTokensSource != records.SourceUsage {
				t.Fatalf("session %d: record %d is turn %d, %v, input from %q", s, k, r.Turn, r.Outcome, r.InputTokensSource)
			}
			if k == 0 {
				if r.CachedTokens != 0 {
					t.Errorf("session %d: turn 1 found %d cached tokens: the cold nonce must keep it cold", s, r.CachedTokens)
				}
				continue
			}
			prev := rs[k-1]
			if r.Planned != prev.End+think {
				t.Errorf("session %d turn %d planned at %v, want the previous end %v + %v", s, r.Turn, r.Planned, prev.End, think)
			}
			if lag := r.Sent - r.Planned; lag < 0 || lag > 50*time.Millisecond {
				t.Errorf("session %d turn %d sent %v after its planned time", s, r.Turn, lag)
			}
			add := r.InputTokens - prev.InputTokens - prev.OutputTokens
			if growth < 0 {
				growth = add
			}
			if add != growth || add < 64 {
				t.Errorf("session %d turn %d: prompt %d = previous %d + reply %d + %d, want + %d (>= 64)",
					s, r.Turn, r.InputTokens, prev.InputTokens, prev.OutputTokens, add, growth)
			}
		}
	}
	var sum measure.Summary
	b, err := os.ReadFile(filepath.Join(dir, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &sum); err != nil {
		t.Fatal(err)
	}
	ss := sum.Sessions
	if ss == nil || ss.Sessions != 12 || ss.Completed != 12 || len(ss.ByTurn) != turns {
		t.Fatalf("sessions summary %+v", ss)
	}
	for k := 1; k < turns; k++ {
		if prev, cur := ss.ByTurn[k-1].CachedPromptShare, ss.ByTurn[k].CachedPromptShare; !(cur > prev) {
			t.Errorf("the cached share of turn %d (%v) is not above turn %d's (%v)", k+1, cur, k, prev)
		}
	}
	if after, _ := os.ReadFile(filepath.Join(reportTo(t, dir), "summary.json")); string(after) != string(b) {
		t.Errorf("report did not reproduce summary.json of sessions:\n%s\n---\n%s", b, after)
	}
}

// TestBadSessionFileSendsNothing: a malformed session file is refused with file:line and what
// was wrong, before a single request leaves.
func TestBadSessionFileSendsNothing(t *testing.T) {
	t.Parallel()
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
	defer srv.Close()
	path := filepath.Join(t.TempDir(), "chats.jsonl")
	lines := `{"session": "a", "prompt": "hello"}
{"session": "a", "messages": [{"role": "assistant", "content": "I said this"}]}
{"prompt": "not a turn"}
`
	if err := os.WriteFile(path, []byte(lines), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := runCLI(t, "run", "--workload", path, "--base-url", srv.URL+"/v1", "--model", "m", "--quiet", "--out", filepath.Join(t.TempDir(), "out"))
	if code != exitUsage {
		t.Errorf("exit %d, want %d", code, exitUsage)
	}
	for _, want := range []string{path + ":2:", path + ":3:", "assistant"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("%d requests reached the server", n)
	}
}

// TestReasoningOnTheSim: with the sim in reasoning mode, TTFT is the first reasoning token and
// TTFA the first answer token, the reasoning tokens come from the usage detail, and a ttfa
// objective judges the answer.
func TestReasoningOnTheSim(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "reasoning")
	code, stdout, stderr := runCLI(t, "run", "--sim-reasoning-share", "0.5", "--num-requests", "20", "--request-rate", "20",
		"--random-input-len", "32", "--random-output-len", "64", "--goodput", "ttfa:1000", "--max-schedule-lag", "1s", "--out", dir)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"Time to First Answer Token", "Reasoning / answer tokens:", "640 / 640"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, stdout)
		}
	}
	f, err := records.ReadFile(filepath.Join(dir, "records.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range f.Records {
		ttft, _ := r.TTFT()
		ttfa, ok := r.TTFA()
		// 64 tokens, half of them reasoning, streamed first.
		answerChunks := r.Chunks - r.ReasoningChunks
		if !ok || ttfa <= ttft || r.ReasoningChunks < 1 || answerChunks < 1 || len(r.AnswerITL) != answerChunks-1 ||
			r.ReasoningTokens != 32 || r.ReasoningTokensSource != records.SourceUsage || r.AnswerTokens() != 32 {
			t.Errorf("request %d: ttft %v ttfa %v (%v), %d of %d chunks reasoning, answer gaps %v, %d reasoning tokens from %q",
				r.ID, ttft, ttfa, ok, r.ReasoningChunks, r.Chunks, r.AnswerITL, r.ReasoningTokens, r.ReasoningTokensSource)
		}
	}
	var sum measure.Summary
	b, _ := os.ReadFile(filepath.Join(dir, "summary.json"))
	if err := json.Unmarshal(b, &sum); err != nil {
		t.Fatal(err)
	}
	answerGaps := 0
	for _, r := range f.Records {
		answerGaps += len(r.AnswerITL)
	}
	if sum.ReasoningResponses != 20 || !(sum.TTFA.Median > sum.TTFT.Median) || sum.AnswerITL.Count != answerGaps || sum.GoodRequests != 20 {
		t.Errorf("summary: %d reasoning responses, TTFA median %v vs TTFT %v, %d answer gaps, %d good",
			sum.ReasoningResponses, sum.TTFA.Median, sum.TTFT.Median, sum.AnswerITL.Count, sum.GoodRequests)
	}
	if after, _ := os.ReadFile(filepath.Join(reportTo(t, dir), "summary.json")); string(after) != string(b) {
		t.Errorf("report did not reproduce summary.json of a reasoning run")
	}
}

// TestToolCallsOnTheSim: a workload's tools are sent, and a tool-call answer is output that ends
// with finish_reason tool_calls, which an expectation can require.
func TestToolCallsOnTheSim(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tools.jsonl")
	line := `{"messages": [{"role": "user", "content": "weather in Paris"}], "max_tokens": 16, "tools": [{"type": "function", "function": {"name": "weather", "parameters": {"type": "object"}}}], "expected_finish_reason": "tool_calls"}` + "\n"
	if err := os.WriteFile(path, []byte(strings.Repeat(line, 5)), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "tools")
	code, _, stderr := runCLI(t, "run", "--workload", path, "--sim-tool-calls", "true", "--request-rate", "10", "--quiet", "--out", dir)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	f, err := records.ReadFile(filepath.Join(dir, "records.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Records) != 5 {
		t.Fatalf("%d records", len(f.Records))
	}
	for _, r := range f.Records {
		if r.Outcome != records.OK || r.FinishReason != "tool_calls" || r.Quality != records.QualityPass || r.OutputTokens != 16 || r.Chunks == 0 {
			t.Errorf("request %d: %v, finish %q, quality %v, %d tokens in %d chunks", r.ID, r.Outcome, r.FinishReason, r.Quality, r.OutputTokens, r.Chunks)
		}
	}
}

// TestCompareSessions: results of sessions are compared turn by turn (the pairs are every
// session's every turn), at rates in sessions per second.
func TestCompareSessions(t *testing.T) {
	t.Parallel() // mostly waiting on real time (TestMain)
	// One run compared with itself: the pairing of sessions' turns is under test.
	dir := filepath.Join(t.TempDir(), "side")
	code, _, stderr := runCLI(t, "run", "--workload", "sessions", "--session-turns", "3", "--think-time", "50ms",
		"--num-requests", "10", "--request-rate", "5", "--random-input-len", "32", "--random-output-len", "8",
		"--goodput", "ttft:500", "--max-schedule-lag", "1s", "--quiet", "--out", dir)
	if code != exitOK {
		t.Fatalf("run: exit %d: %s", code, stderr)
	}
	dirs := [2]string{dir, dir}
	out := filepath.Join(t.TempDir(), "cmp")
	code, stdout, stderr := runCLI(t, "compare", dirs[0], dirs[1], "--out", out)
	if code != exitOK || !strings.Contains(stdout, "rate sessions/s") {
		t.Fatalf("compare: exit %d\n%s\n%s", code, stdout, stderr)
	}
	var res struct {
		Paired []struct {
			Metric string `json:"metric"`
			Result *struct {
				N int `json:"n"`
			} `json:"result"`
		} `json:"paired"`
	}
	b, err := os.ReadFile(filepath.Join(out, "compare.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &res); err != nil {
		t.Fatal(err)
	}
	if len(res.Paired) == 0 || res.Paired[0].Result == nil || res.Paired[0].Result.N != 30 {
		t.Errorf("paired %+v, want 30 pairs (10 sessions × 3 turns)", res.Paired)
	}
}

// TestSessionsRunWaitsForEveryTurn: a run's drain deadline (--timeout + 1 s after the last
// arrival) once fell on sessions still thinking: the last session starts early, its later turns
// come think times later, and 18 of 80 turns were canceled with exit 0 (--think-time 2s
// --timeout 3s). --timeout is per request: the run waits for every turn of every session.
func TestSessionsRunWaitsForEveryTurn(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "sessions")
	// 4 sessions start within ~0.4 s; their third turns come after two think times of 1.5 s,
	// past the old deadline (the last start + 1 s + 1 s).
	code, _, stderr := runCLI(t, "run", "--workload", "sessions", "--session-turns", "3", "--think-time", "1500ms",
		"--timeout", "1s", "--num-requests", "4", "--request-rate", "10", "--random-input-len", "16", "--random-output-len", "4",
		"--quiet", "--out", dir)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	f, err := records.ReadFile(filepath.Join(dir, "records.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	outcomes := map[records.Outcome]int{}
	for _, r := range f.Records {
		outcomes[r.Outcome]++
	}
	if len(f.Records) != 12 || outcomes[records.OK] != 12 {
		t.Errorf("%d records, outcomes %v: want every one of the 12 turns ok", len(f.Records), outcomes)
	}
}

// TestRunCutShortExitsNonZero: a run whose drain deadline canceled requests (here requests
// queued behind --max-concurrency 1 past --timeout + 1 s, each taking its whole --timeout) writes its result and says so in
// its exit status, instead of exiting 0.
func TestRunCutShortExitsNonZero(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "cut")
	args := append([]string{"run", "--num-requests", "40", "--request-rate", "inf", "--max-concurrency", "1",
		"--timeout", "100ms", "--out", dir}, small...)
	code, _, stderr := runCLI(t, append(args, "--random-output-len", "2000")...)
	if code != exitFailure {
		t.Fatalf("exit %d, want %d: %s", code, exitFailure, stderr)
	}
	if !strings.Contains(stderr, "the run did not run to its end") || !strings.Contains(stderr, "of 40 planned requests were canceled") {
		t.Errorf("stderr does not say the run was cut:\n%s", stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "summary.json")); err != nil {
		t.Errorf("no summary written: %v", err)
	}
}
