package measure_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/loadcurve/loadcurve/measure"
	"github.com/loadcurve/loadcurve/measure/records"
)

// clientRecord is a request sent at 1 s whose first token arrived ttft after it, the client
// having written it send after sending it and read its first token read after it arrived.
func clientRecord(ttft, send, read time.Duration) records.Record {
	r := records.NewRecord(0, 0, time.Second)
	r.Dispatched, r.Slot, r.Sent = time.Second, time.Second, time.Second
	r.Written = r.Sent + send
	r.FirstEvent, r.First = r.Sent+ttft, r.Sent+ttft
	if read > 0 {
		r.FirstRead = r.First + read
	}
	r.Last, r.End = r.First+50*time.Millisecond, r.First+50*time.Millisecond
	r.Chunks, r.OutputTokens = 2, 2
	return r
}

// A request's client delays are observed with it, and whether they decided its compliance: a
// miss its send delay may have made (it would have met the objective counted from its written
// moment), a pass its first token's reading would have turned into a miss.
func TestClientDelaysDecideCompliance(t *testing.T) {
	o := measure.Objectives{TTFT: 100 * time.Millisecond}
	for _, tc := range []struct {
		name             string
		ttft, send, read time.Duration
		compliant        bool
		flag             uint8
	}{
		{"met, whatever the client did", 80 * time.Millisecond, time.Millisecond, time.Millisecond, true, 0},
		{"missed by the server alone", 130 * time.Millisecond, 2 * time.Millisecond, 0, false, 0},
		{"missed by the client's send delay", 101 * time.Millisecond, 2 * time.Millisecond, 0, false, measure.ObsSendMiss},
		{"missed with a send delay that does not decide it", 103 * time.Millisecond, 2 * time.Millisecond, 0, false, 0},
		{"met, would have missed timed at its read", 97 * time.Millisecond, 0, 5 * time.Millisecond, true, measure.ObsReadMiss},
		{"met, and would have met timed at its read", 90 * time.Millisecond, 0, 5 * time.Millisecond, true, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := clientRecord(tc.ttft, tc.send, tc.read)
			x := o.Observe(&r)
			if got := x.Flags&measure.ObsCompliant != 0; got != tc.compliant {
				t.Fatalf("compliant %v, want %v", got, tc.compliant)
			}
			if got := x.Flags & (measure.ObsSendMiss | measure.ObsReadMiss); got != tc.flag {
				t.Errorf("flags %b, want %b", got, tc.flag)
			}
			if x.Flags&measure.ObsClientTimed == 0 || x.Send != float32(tc.send)/1e6 || x.Read != float32(tc.read)/1e6 {
				t.Errorf("observed send %v ms, read %v ms (flags %b), want %v and %v", x.Send, x.Read, x.Flags, tc.send, tc.read)
			}
		})
	}
	// A record that does not say when it was written (a virtual clock's) has no client delays.
	r := clientRecord(80*time.Millisecond, 0, 0)
	r.Written = records.Unset
	if x := o.Observe(&r); x.Flags&measure.ObsClientTimed != 0 {
		t.Errorf("a record without written_s observed as timed at the socket: %+v", x)
	}
}

// The window's client delays: their percentiles, the misses they may have made and took out,
// the most the share could have been without them, and a sentence; summary.json round-trips
// them; a window without socket timing has none.
func TestSteadyClientDelays(t *testing.T) {
	obs := steadyGrid(1000, func(k int, o *measure.Obs) {
		o.Flags |= measure.ObsClientTimed
		o.Send, o.Read = 0.2, 1
		switch {
		case k%50 == 0: // one in fifty written late
			o.Send = 3
		case k%250 == 7: // four misses the send delay may have made
			o.Flags &^= measure.ObsCompliant
			o.Flags |= measure.ObsSendMiss
		case k%500 == 9: // two passes timing at the arrival kept
			o.Flags |= measure.ObsReadMiss
			o.Read = 8
		}
	})
	st := measure.SteadyState(obs, 0, measure.SteadyWindow{Given: true, Start: 0, End: 200 * time.Second})
	c := st.Client
	if c == nil {
		t.Fatal("no client delays")
	}
	if c.Requests != st.Requests || c.SendMisses != 4 || c.ReadMisses != 2 {
		t.Errorf("%d requests, %d send misses, %d read misses; want %d, 4 and 2", c.Requests, c.SendMisses, c.ReadMisses, st.Requests)
	}
	if !(c.SendP50 > 0.19 && c.SendP50 < 0.21) || !(c.SendP99 > 2.9 && c.SendP99 <= 3) || !(c.ReadP50 > 0.99 && c.ReadP50 < 1.01) {
		t.Errorf("send p50 %v, p99 %v, read p50 %v ms: want 0.2, 3, 1", c.SendP50, c.SendP99, c.ReadP50)
	}
	if got, want := c.ShareWithout(st.Compliant, st.Requests), float64(st.Compliant+4)/float64(st.Requests); got != want {
		t.Errorf("share without the client's delays %v, want %v", got, want)
	}
	text := c.Text()
	for _, s := range []string{"p99 3.00 ms from sent to the request written", "at most 4 of the misses", "p99 1.00 ms from a first token's arrival", "2 more would have missed"} {
		if !strings.Contains(text, s) {
			t.Errorf("%q lacks %q", text, s)
		}
	}
	if !c.Notable() {
		t.Error("misses the client may have made are not notable")
	}
	b, err := json.Marshal(measure.Summary{Steady: st})
	if err != nil {
		t.Fatal(err)
	}
	var back measure.Summary
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if back.Steady == nil || back.Steady.Client == nil || *back.Steady.Client != *c {
		t.Errorf("summary.json carried %+v, want %+v", back.Steady, *c)
	}
	if st := measure.SteadyState(steadyGrid(100, nil), 0, measure.SteadyWindow{}); st.Client != nil {
		t.Errorf("client delays %+v from a window not timed at the socket", *st.Client)
	}
}

// What is said beside a verdict: the client's delays when they may have decided a request, or
// its writing took NotableSendP99 or more at p99 (inside the latencies); its reading alone, not
// counted in them, is not.
func TestClientDelaysNotable(t *testing.T) {
	for _, tc := range []struct {
		name string
		c    measure.ClientDelays
		want bool
	}{
		{"quick", measure.ClientDelays{Requests: 100, SendP99: 0.5, ReadP99: 0.5}, false},
		{"read late, counted nowhere", measure.ClientDelays{Requests: 100, SendP99: 0.5, ReadP99: 30}, false},
		{"written as an idle client writes", measure.ClientDelays{Requests: 100, SendP99: 2.2, ReadP99: 0.5}, false},
		{"written late", measure.ClientDelays{Requests: 100, SendP99: measure.NotableSendP99, ReadP99: 0.5}, true},
		{"a miss it may have made", measure.ClientDelays{Requests: 100, SendP99: 0.5, SendMisses: 1}, true},
		{"a miss timing at the socket took out, not in the latencies", measure.ClientDelays{Requests: 100, ReadP99: 0.5, ReadMisses: 1}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.c.Notable(); got != tc.want {
				t.Errorf("Notable() = %v, want %v", got, tc.want)
			}
			text := tc.c.Text()
			if made := strings.Contains(text, "no miss would have met"); made == (tc.c.SendMisses > 0) {
				t.Errorf("%q says the wrong thing of the misses the client may have made (%d)", text, tc.c.SendMisses)
			}
			if took := strings.Contains(text, "more would have missed"); took != (tc.c.ReadMisses > 0) {
				t.Errorf("%q says the wrong thing of the misses timing at the socket took out (%d)", text, tc.c.ReadMisses)
			}
		})
	}
}
