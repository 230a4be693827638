package loadgen

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/loadcurve/loadcurve/loadgen/internal/fakesse"
	"github.com/loadcurve/loadcurve/measure/records"
	"github.com/loadcurve/loadcurve/workloads"
)

// sessionSet makes n sessions of turns turns each; turn k of session s says "s<s>t<k>" and
// thinks think before it (after the first).
func sessionSet(n, turns int, think time.Duration) []workloads.Request {
	var out []workloads.Request
	for s := 1; s <= n; s++ {
		for k := 1; k <= turns; k++ {
			r := workloads.Request{ID: len(out), Session: s, Turn: k, InputTokens: 1, MaxTokens: 4,
				Messages: []workloads.Message{{Role: "user", Content: fmt.Sprintf("s%dt%d", s, k)}}}
			if k > 1 {
				r.ThinkMS = float64(think) / 1e6
			}
			out = append(out, r)
		}
	}
	return out
}

// TestSessionsExact runs sessions on the fake clock: each turn is planned exactly when the turn
// before it ended plus the think time, sent with the whole history (the earlier user messages and
// the server's actual replies, in order), and the gate admits turns, not sessions.
func TestSessionsExact(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		bodies := map[string][]workloads.Message{} // last user message → messages sent
		c := memClient(t, Target{}, 0, func(r fakesse.Received) fakesse.Script {
			var body struct {
				Messages []workloads.Message `json:"messages"`
			}
			if err := json.Unmarshal(r.Body, &body); err != nil {
				t.Errorf("body: %v", err)
			}
			last := body.Messages[len(body.Messages)-1].Content
			mu.Lock()
			bodies[last] = body.Messages
			mu.Unlock()
			// The reply names the turn it answers, so the history can be checked exactly.
			return fakesse.Script{Steps: []fakesse.Step{
				fakesse.Data(40*ms, fakesse.ChatChunk("re:"+last, "")),
				fakesse.Data(10*ms, fakesse.ChatChunk(" end", "stop")),
				fakesse.Done(0),
			}}
		})
		const sessions, turns, think = 3, 4, 500 * ms
		sink := &sliceSink{}
		starts := []time.Duration{0, 100 * ms, 250 * ms}
		res, err := Run(context.Background(), c, Tier{Offsets: starts, Requests: sessionSet(sessions, turns, think)}, sink, nil)
		if err != nil {
			t.Fatal(err)
		}
		if res.Planned != sessions*turns || res.Dispatched != sessions {
			t.Errorf("planned %d dispatched %d, want %d and %d", res.Planned, res.Dispatched, sessions*turns, sessions)
		}
		recs := sink.byID(t, sessions*turns)
		for _, r := range recs {
			s, k := r.ID/turns+1, r.ID%turns+1
			// Every turn takes 50 ms; the next is planned 500 ms after its end.
			planned := starts[s-1] + time.Duration(k-1)*(50*ms+think)
			if r.Session != s || r.Turn != k || r.Outcome != records.OK || r.Planned != planned || r.Dispatched != planned ||
				r.Sent != planned || r.End != planned+50*ms {
				t.Errorf("session %d turn %d: record %+v, want planned = dispatched = sent = %v", s, k, r, planned)
			}
			msgs := bodies[fmt.Sprintf("s%dt%d", s, k)]
			if len(msgs) != 2*k-1 {
				t.Fatalf("session %d turn %d sent %d messages, want %d", s, k, len(msgs), 2*k-1)
			}
			for j := 1; j < k; j++ {
				u, a := msgs[2*(j-1)], msgs[2*(j-1)+1]
				want := fmt.Sprintf("s%dt%d", s, j)
				if u.Role != "user" || u.Content != want || a.Role != "assistant" || a.Content != "re:"+want+" end" {
					t.Errorf("session %d turn %d: history entry %d is %+v, %+v", s, k, j, u, a)
				}
			}
		}
	})
}

// TestSessionTurnAfterFailure: a failed turn is left out of the history, and the session goes on.
func TestSessionTurnAfterFailure(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		var seen [][]workloads.Message
		c := memClient(t, Target{}, 0, func(r fakesse.Received) fakesse.Script {
			var body struct {
				Messages []workloads.Message `json:"messages"`
			}
			_ = json.Unmarshal(r.Body, &body)
			mu.Lock()
			seen = append(seen, body.Messages)
			mu.Unlock()
			if strings.HasSuffix(body.Messages[len(body.Messages)-1].Content, "t2") {
				return fakesse.Script{Status: 503, Body: fakesse.ErrorJSON("busy")}
			}
			return fakesse.Stream{TTFT: 10 * ms, Chunks: 2}.Script()
		})
		sink := &sliceSink{}
		if _, err := Run(context.Background(), c, Tier{Offsets: []time.Duration{0}, Requests: sessionSet(1, 3, 100*ms)}, sink, nil); err != nil {
			t.Fatal(err)
		}
		recs := sink.byID(t, 3)
		if recs[1].Outcome != records.HTTPError || recs[2].Outcome != records.OK {
			t.Fatalf("outcomes %v %v %v", recs[0].Outcome, recs[1].Outcome, recs[2].Outcome)
		}
		if recs[2].Planned != recs[1].End+100*ms {
			t.Errorf("turn 3 planned at %v, want the failed turn's end %v + 100ms", recs[2].Planned, recs[1].End)
		}
		if got := seen[2]; len(got) != 3 || got[0].Content != "s1t1" || got[1].Role != "assistant" || got[2].Content != "s1t3" {
			t.Errorf("turn 3 sent %+v, want turn 1, its reply and turn 3", got)
		}
	})
}

// TestSessionsStopAfter: turns planned at or after the tier's stop time are recorded as never
// sent, so every turn of every session has exactly one record.
func TestSessionsStopAfter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := memClient(t, Target{}, 0, func(fakesse.Received) fakesse.Script {
			return fakesse.Stream{TTFT: 50 * ms, Chunks: 1}.Script()
		})
		sink := &sliceSink{}
		// Turns of session 1 at 0, 150, 300, 450 ms; session 2 starts at 400 ms (after the stop).
		_, err := Run(context.Background(), c, Tier{Offsets: []time.Duration{0, 400 * ms}, Requests: sessionSet(2, 4, 100*ms),
			StopAfter: 350 * ms}, sink, nil)
		if err != nil {
			t.Fatal(err)
		}
		recs := sink.byID(t, 8)
		for i, r := range recs {
			sent := i < 3
			if (r.Sent != records.Unset) != sent || (r.Outcome == records.Canceled) == sent {
				t.Errorf("record %d (session %d turn %d): %v sent %v", i, r.Session, r.Turn, r.Outcome, r.Sent)
			}
		}
	})
}

// TestSessionsGate: with one slot, two sessions' turns share it, and a session thinking holds none.
func TestSessionsGate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := memClient(t, Target{}, 1, func(fakesse.Received) fakesse.Script {
			return fakesse.Stream{TTFT: 100 * ms, Chunks: 1}.Script()
		})
		sink := &sliceSink{}
		if _, err := Run(context.Background(), c, Tier{Offsets: []time.Duration{0, 0}, Requests: sessionSet(2, 2, 50*ms), MaxConcurrency: 1}, sink, nil); err != nil {
			t.Fatal(err)
		}
		recs := sink.byID(t, 4)
		// s1t1 runs 0-100; s2t1 waits, runs 100-200; s1t2 planned 150, waits, runs 200-300;
		// s2t2 planned 250, runs 300-400.
		wantSent := []time.Duration{0, 200 * ms, 100 * ms, 300 * ms}
		for i, r := range recs {
			if r.Sent != wantSent[i] {
				t.Errorf("record %d (session %d turn %d): sent %v, want %v", i, r.Session, r.Turn, r.Sent, wantSent[i])
			}
		}
		if q, _ := recs[1].ClientQueueTime(); q != 50*ms {
			t.Errorf("s1t2 waited %v for the slot, want 50ms", q)
		}
	})
}

// TestReasoningExact: reasoning deltas count for TTFT, not for TTFA; the answer's gaps are kept
// apart; reasoning tokens come from the usage detail, else from the share of reasoning chunks.
func TestReasoningExact(t *testing.T) {
	reason := func(s string) string {
		return `{"choices":[{"index":0,"delta":{"reasoning_content":"` + s + `"},"finish_reason":null}]}`
	}
	usage := func(details string) string {
		return `{"choices":[],"usage":{"prompt_tokens":5,"completion_tokens":10` + details + `}}`
	}
	for _, tc := range []struct {
		name       string
		usage      string
		wantTokens int
		wantSource string
		wantCached int
	}{
		{"usage detail", usage(`,"completion_tokens_details":{"reasoning_tokens":6},"prompt_tokens_details":{"cached_tokens":4}`),
			6, records.SourceUsage, 4},
		{"no detail: the share of reasoning chunks", usage(""), 6, records.SourceChunks, -1},
		{"a detail beyond the output is not believed", usage(`,"completion_tokens_details":{"reasoning_tokens":11}`), 6, records.SourceChunks, -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				c := memClient(t, Target{}, 0, func(fakesse.Received) fakesse.Script {
					return fakesse.Script{Steps: []fakesse.Step{
						fakesse.Data(100*ms, reason("let")), fakesse.Data(10*ms, reason("me")), fakesse.Data(10*ms, reason("think")),
						fakesse.Data(50*ms, fakesse.ChatChunk("the", "")), fakesse.Data(20*ms, fakesse.ChatChunk(" answer", "stop")),
						fakesse.Data(0, tc.usage), fakesse.Done(0),
					}}
				})
				sink := &sliceSink{}
				if _, err := Run(context.Background(), c, Tier{Offsets: []time.Duration{0}, Requests: reqs(1)}, sink, nil); err != nil {
					t.Fatal(err)
				}
				r := sink.byID(t, 1)[0]
				ttft, _ := r.TTFT()
				ttfa, _ := r.TTFA()
				if ttft != 100*ms || ttfa != 170*ms || r.ReasoningChunks != 3 || r.Chunks != 5 {
					t.Errorf("ttft %v ttfa %v reasoning chunks %d chunks %d", ttft, ttfa, r.ReasoningChunks, r.Chunks)
				}
				if got := r.AnswerGaps(); len(got) != 1 || got[0] != 20*ms || len(r.ITL) != 4 {
					t.Errorf("answer gaps %v, ITL %v", got, r.ITL)
				}
				if r.ReasoningTokens != tc.wantTokens || r.ReasoningTokensSource != tc.wantSource || r.AnswerTokens() != 10-tc.wantTokens {
					t.Errorf("reasoning tokens %d (%s), answer %d", r.ReasoningTokens, r.ReasoningTokensSource, r.AnswerTokens())
				}
				if tc.wantCached >= 0 && (r.CachedTokens != tc.wantCached || r.CachedTokensSource != records.SourceUsage) {
					t.Errorf("cached %d (%s)", r.CachedTokens, r.CachedTokensSource)
				}
				if tc.wantCached < 0 && r.CachedTokensSource != "" {
					t.Errorf("cached %d (%s) without a detail", r.CachedTokens, r.CachedTokensSource)
				}
			})
		})
	}
}
