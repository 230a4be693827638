package workloads_test

import (
	"errors"
	"math"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/loadcurve/loadcurve/internal/field"
	"github.com/loadcurve/loadcurve/workloads"
)

// checkSessions asserts what every set of sessions must hold: the structure ValidateSessions
// checks, Sessions and SessionCount agreeing, and ThinkMS 0 exactly on first turns.
func checkSessions(t *testing.T, set *workloads.Set) [][2]int {
	t.Helper()
	if err := workloads.ValidateSessions(set.Requests); err != nil {
		t.Fatalf("ValidateSessions: %v", err)
	}
	ranges := workloads.Sessions(set.Requests)
	if len(ranges) == 0 || set.SessionCount() != len(ranges) {
		t.Fatalf("%d sessions by Sessions, %d by SessionCount", len(ranges), set.SessionCount())
	}
	for k, rg := range ranges {
		for j, r := range set.Requests[rg[0]:rg[1]] {
			if r.Session != k+1 || r.Turn != j+1 || j == 0 && r.ThinkMS != 0 {
				t.Fatalf("request %d: session %d turn %d think %v, want session %d turn %d", r.ID, r.Session, r.Turn, r.ThinkMS, k+1, j+1)
			}
		}
	}
	if set.Fingerprint != workloads.Fingerprint(set.Requests) {
		t.Fatal("the fingerprint is not that of the requests")
	}
	return ranges
}

// messageWords counts the words of a request's prompt and messages.
func messageWords(r workloads.Request) int {
	n := workloads.CountWords(r.Text())
	for _, m := range r.Messages {
		n += workloads.CountWords(m.Content)
	}
	return n
}

// TestSyntheticSessionsStructure checks the turns of generated sessions.
//
// The number of turns is uniform over the integers [lo, hi]: mean (lo+hi)/2, variance
// ((hi-lo+1)²-1)/12. Over n sessions the sample mean has standard error sd/√n; the bound is 4.5
// of those (a false failure below 1e-5; the seed is fixed anyway). With 3000 draws over at most 7
// values, missing an end of the range has probability below 2·(6/7)^3000, nil in practice.
func TestSyntheticSessionsStructure(t *testing.T) {
	const n = 3000
	lengths := workloads.Synthetic{InputLen: 6, OutputLen: 4, RangeRatio: 0.5, Seed: 21}
	tests := []struct {
		name   string
		s      workloads.SyntheticSessions
		lo, hi int // the turn counts' range
	}{
		{"fixed turns", workloads.SyntheticSessions{Synthetic: lengths, Turns: 3, Think: time.Second}, 3, 3},
		{"ranged 6±0.5", workloads.SyntheticSessions{Synthetic: lengths, Turns: 6, TurnsRangeRatio: 0.5}, 3, 9},
		// ⌊5·0.7⌋ = 3 and ⌊5·1.3⌋ = 6: the mean is 4.5, not 5.
		{"ranged 5±0.3 floors", workloads.SyntheticSessions{Synthetic: lengths, Turns: 5, TurnsRangeRatio: 0.3, SystemLen: 7}, 3, 6},
		{"one turn, ratio clamps at 1", workloads.SyntheticSessions{Synthetic: lengths, Turns: 1, TurnsRangeRatio: 0.9, ThinkDist: workloads.ThinkExponential, Think: time.Second}, 1, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			set, err := tc.s.Generate(n)
			if err != nil {
				t.Fatal(err)
			}
			if set.Source != tc.s.String() || set.SessionCount() != n {
				t.Fatalf("source %q, %d sessions", set.Source, set.SessionCount())
			}
			ranges := checkSessions(t, set)
			minTurns, maxTurns, sum := math.MaxInt, 0, 0
			systems := map[string]bool{}
			for _, rg := range ranges {
				turns := rg[1] - rg[0]
				minTurns, maxTurns, sum = min(minTurns, turns), max(maxTurns, turns), sum+turns
				for _, r := range set.Requests[rg[0]:rg[1]] {
					want := []string{"user"}
					if r.Turn == 1 && tc.s.SystemLen > 0 {
						want = []string{"system", "user"}
						if w := workloads.CountWords(r.Messages[0].Content); w != tc.s.SystemLen {
							t.Fatalf("request %d: a system prompt of %d words", r.ID, w)
						}
						systems[r.Messages[0].Content] = true
					}
					var roles []string
					for _, m := range r.Messages {
						roles = append(roles, m.Role)
					}
					if !reflect.DeepEqual(roles, want) || r.Prompt != "" {
						t.Fatalf("request %d: roles %v, prompt %q; want %v", r.ID, roles, r.Prompt, want)
					}
					user := workloads.CountWords(r.Messages[len(r.Messages)-1].Content)
					if r.InputTokens != messageWords(r) || user < 3 || user > 9 || r.MaxTokens < 2 || r.MaxTokens > 6 {
						t.Fatalf("request %d: %d input tokens for %d words (user %d), max_tokens %d", r.ID, r.InputTokens, messageWords(r), user, r.MaxTokens)
					}
				}
			}
			if minTurns != tc.lo || maxTurns != tc.hi {
				t.Errorf("turns in [%d, %d], want [%d, %d]", minTurns, maxTurns, tc.lo, tc.hi)
			}
			width := float64(tc.hi - tc.lo + 1)
			mean, want := float64(sum)/n, float64(tc.lo+tc.hi)/2
			if bound := 4.5 * math.Sqrt((width*width-1)/12/n); math.Abs(mean-want) > bound {
				t.Errorf("mean turns %.4f, want %.1f ± %.4f", mean, want, bound)
			}
			if tc.s.SystemLen > 0 && len(systems) != n {
				t.Errorf("%d distinct system prompts for %d sessions", len(systems), n)
			}
			again, _ := tc.s.Generate(n)
			if again.Fingerprint != set.Fingerprint {
				t.Error("same parameters, different set")
			}
			small, _ := tc.s.Generate(10)
			if end := ranges[9][1]; small.Fingerprint != workloads.Fingerprint(set.Requests[:end]) {
				t.Error("a smaller set is not the first sessions of a larger one")
			}
			other := tc.s
			other.Seed++
			if o, _ := other.Generate(10); o.Fingerprint == small.Fingerprint {
				t.Error("another seed, the same set")
			}
		})
	}
}

// TestSyntheticSessionsThinkTimes: fixed think times are exactly Think (to the microsecond), and
// exponential ones have mean Think. For an exponential, sd = mean, so the mean of n draws is
// within 4 standard errors, 4·Think/√n, but for a chance below 1e-4; and P(X < mean) = 1-1/e,
// whose sample fraction has standard error √(p(1-p)/n). Draws are rounded to whole microseconds
// (a bias below 1e-6 of a 2 s mean). Think times move no prompt: they have a stream of their own.
func TestSyntheticSessionsThinkTimes(t *testing.T) {
	base := workloads.SyntheticSessions{Synthetic: workloads.Synthetic{InputLen: 3, OutputLen: 2, Seed: 5}, Turns: 5}
	tests := []struct {
		name   string
		think  time.Duration
		dist   string
		exact  float64 // the fixed think time in ms (-1: exponential)
		printd string  // how a fixed one prints
	}{
		{"fixed", 2 * time.Second, "", 2000, "2000"},
		{"fixed, named", 1234567 * time.Nanosecond, workloads.ThinkFixed, 1.235, "1.235"},
		{"zero", 0, workloads.ThinkFixed, 0, "0"},
		{"exponential", 2 * time.Second, workloads.ThinkExponential, -1, ""},
	}
	var fingerprints []string
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := base
			s.Think, s.ThinkDist = tc.think, tc.dist
			set, err := s.Generate(600) // 2400 later turns
			if err != nil {
				t.Fatal(err)
			}
			checkSessions(t, set)
			var draws []float64
			for _, r := range set.Requests {
				if r.Turn == 1 {
					continue
				}
				us := math.Round(r.ThinkMS * 1000)
				printed := strconv.FormatFloat(r.ThinkMS, 'f', -1, 64)
				if _, frac, _ := strings.Cut(printed, "."); r.ThinkMS < 0 || us/1000 != r.ThinkMS || len(frac) > 3 {
					t.Fatalf("request %d: think %s ms is negative or not whole microseconds", r.ID, printed)
				}
				if r.Think() != time.Duration(us)*time.Microsecond {
					t.Fatalf("request %d: Think() %v for %v ms", r.ID, r.Think(), r.ThinkMS)
				}
				draws = append(draws, r.ThinkMS)
			}
			if len(draws) != 2400 {
				t.Fatalf("%d later turns", len(draws))
			}
			if tc.exact >= 0 {
				for _, d := range draws {
					if d != tc.exact || strconv.FormatFloat(d, 'f', -1, 64) != tc.printd {
						t.Fatalf("think %v ms (%s), want %v", d, strconv.FormatFloat(d, 'f', -1, 64), tc.exact)
					}
				}
			} else {
				mean, below := 0.0, 0
				m := float64(tc.think) / 1e6
				for _, d := range draws {
					mean += d
					if d < m {
						below++
					}
				}
				n := float64(len(draws))
				mean /= n
				if bound := 4 * m / math.Sqrt(n); math.Abs(mean-m) > bound {
					t.Errorf("mean think %.1f ms, want %.0f ± %.1f", mean, m, bound)
				}
				p := 1 - 1/math.E
				if frac, bound := float64(below)/n, 4*math.Sqrt(p*(1-p)/n); math.Abs(frac-p) > bound {
					t.Errorf("%.3f of think times below the mean, want %.3f ± %.3f", frac, p, bound)
				}
			}
			for i := range set.Requests {
				set.Requests[i].ThinkMS = 0
			}
			fingerprints = append(fingerprints, workloads.Fingerprint(set.Requests))
		})
	}
	for _, fp := range fingerprints[1:] {
		if fp != fingerprints[0] {
			t.Error("the think time settings changed the prompts")
		}
	}
}

func TestSyntheticSessionsValidateAndString(t *testing.T) {
	ok := workloads.SyntheticSessions{Synthetic: workloads.Synthetic{InputLen: 10, OutputLen: 5}, Turns: 2}
	if errs := ok.Validate(); len(errs) != 0 {
		t.Fatalf("valid sessions: %v", errs)
	}
	bad := workloads.SyntheticSessions{Turns: 0, TurnsRangeRatio: 1, Think: -time.Second, ThinkDist: "poisson", SystemLen: -1}
	want := []string{
		"turns per session: must be in [1, 10000], got 0",
		"turns range ratio: must be in [0, 1), got 1",
		"think time: must be in [0, 24h0m0s], got -1s",
		`think time distribution: must be fixed or exponential, got "poisson"`,
		"system prompt length: must be in [0, 1048576], got -1",
		"input length: must", "output length: must",
	}
	errs := bad.Validate()
	if len(errs) != len(want) {
		t.Fatalf("%d errors, want %d: %v", len(errs), len(want), errs)
	}
	for i, w := range want {
		if !strings.HasPrefix(errs[i].Error(), w) {
			t.Errorf("error %d %q, want %q", i, errs[i], w)
		}
	}
	if _, err := bad.Generate(1); err == nil {
		t.Error("invalid sessions generated")
	}
	if _, err := ok.Generate(0); err == nil || !strings.Contains(err.Error(), "at least one session") {
		t.Errorf("zero sessions: %v", err)
	}
	if long := (workloads.SyntheticSessions{Synthetic: ok.Synthetic, Turns: 2, Think: 25 * time.Hour}); len(long.Validate()) != 1 {
		t.Error("a think time over a day accepted")
	}
	for _, tc := range []struct {
		s    workloads.SyntheticSessions
		want string
	}{
		{workloads.SyntheticSessions{Synthetic: workloads.Synthetic{InputLen: 1024, OutputLen: 128}, Turns: 4, Think: 2 * time.Second},
			"sessions(turns=4, think=2s fixed, input=1024, output=128, range=0, seed=0)"},
		{workloads.SyntheticSessions{Synthetic: workloads.Synthetic{InputLen: 50, OutputLen: 8, Dist: workloads.DistLogNormal, RangeRatio: 0.5, Seed: 3},
			Turns: 6, TurnsRangeRatio: 0.5, Think: 1500 * time.Millisecond, ThinkDist: workloads.ThinkExponential, SystemLen: 200},
			"sessions(turns=6, turns-range=0.5, think=1.5s exponential, system=200, input=50, output=8, dist=lognormal, ratio=0.5, seed=3)"},
	} {
		if got := tc.s.String(); got != tc.want {
			t.Errorf("String %q, want %q", got, tc.want)
		}
	}
}

// TestJSONLSessions reads interleaved sessions (the golden file shows the whole set).
func TestJSONLSessions(t *testing.T) {
	set, err := workloads.LoadJSONL(filepath.Join("testdata", "sessions.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	checkSessions(t, set)
	type turn struct {
		session, turn int
		label, text   string
		think         float64
	}
	var got []turn
	for _, r := range set.Requests {
		text := r.Text()
		if text == "" {
			text = r.Messages[len(r.Messages)-1].Content
		}
		got = append(got, turn{r.Session, r.Turn, r.Label, text, r.ThinkMS})
	}
	want := []turn{
		{1, 1, "chat-a#1", "Name a prime number.", 0},
		{1, 2, "chat-a#2", "Another one, larger.", 1500},
		{1, 3, "chat-a#3", "Thanks!", 0},
		{2, 1, "chat-b#1", "What is a KV cache?", 0},
		{2, 2, "b-followup", "Explain it to a child.", 3000},
		{3, 1, "7#1", "Define prefill.", 0},
		{3, 2, "7#2", "And why does it help?", 250.5},
		{4, 1, "", "Numbered as Save numbers: no label.", 0},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("turns:\n%+v\nwant\n%+v", got, want)
	}
	if r := set.Requests[0]; len(r.Messages) != 2 || r.Messages[0].Role != "system" || r.InputTokens != 9 {
		t.Errorf("first turn %+v", r)
	}
	// Tools are kept compact and HTML-escaped, as encoding/json writes them back.
	wantTools := `[{"type":"function","function":{"name":"lookup","description":"a \u003cb\u003e \u0026 c","parameters":{"type":"object"}}}]`
	if string(set.Requests[3].Tools) != wantTools {
		t.Errorf("tools %s\nwant  %s", set.Requests[3].Tools, wantTools)
	}
	if set.Requests[7].InputTokens != 9 {
		t.Errorf("input_tokens %d, want 9 as given", set.Requests[7].InputTokens)
	}
	// Tools on a request that is not a turn.
	plain, err := workloads.ReadJSONL(strings.NewReader(`{"prompt": "x", "tools": [{"type": "function"}]}`), "t.jsonl")
	if err != nil || string(plain.Requests[0].Tools) != `[{"type":"function"}]` || plain.SessionCount() != 0 {
		t.Errorf("tools without sessions: %v %v", plain, err)
	}
}

// TestJSONLSessionErrors: every session rule gives its exact located message, and no set.
func TestJSONLSessionErrors(t *testing.T) {
	tests := []struct {
		name, input, want string
	}{
		{"session missing later", `{"session": "a", "prompt": "x"}` + "\n\n" + `{"prompt": "y"}`,
			`s.jsonl:3: no "session" here, but the first request (line 1) has one: either every line has a "session" or none does`},
		{"session appears later", `{"prompt": "x"}` + "\n" + `{"prompt": "y"}` + "\n" + `{"session": 1, "prompt": "z"}` + "\n" + `{"prompt": "w"}`,
			`s.jsonl:3: "session" here, but the first request (line 1) has none: either every line has a "session" or none does`},
		{"duplicate turn", `{"session": "a", "turn": 1, "prompt": "x"}` + "\n" + `{"session": "a", "turn": 2, "prompt": "y"}` + "\n" + `{"session": "a", "turn": 1, "prompt": "z"}`,
			`s.jsonl:3: session "a" has turn 1 twice (line 1 and here)`},
		{"gap", `{"session": "a", "turn": 1, "prompt": "x"}` + "\n" + `{"session": "a", "turn": 3, "prompt": "y"}`,
			`s.jsonl:2: session "a": turn 3, but the session has no turn 2 (a session's turns are numbered 1, 2, … without gaps)`},
		{"no turn 1", `{"session": 5, "turn": 2, "prompt": "x"}`,
			`s.jsonl:1: session "5": turn 2, but the session has no turn 1 (a session's turns are numbered 1, 2, … without gaps)`},
		{"some turns numbered", `{"session": "a", "turn": 1, "prompt": "x"}` + "\n" + `{"session": "b", "prompt": "y"}` + "\n" + `{"session": "a", "prompt": "z"}`,
			`s.jsonl:3: session "a": no "turn" here, but line 1 numbers its turn: number every turn of a session or none`},
		{"some turns numbered, later", `{"session": "a", "prompt": "x"}` + "\n" + `{"session": "a", "turn": 2, "prompt": "z"}`,
			`s.jsonl:2: session "a": "turn" here, but line 1 has none: number every turn of a session or none`},
		{"think on first turn", `{"session": "a", "prompt": "x", "think_ms": 10}`,
			`s.jsonl:1: "think_ms" on the first turn of session "a": a think time is the wait after the previous turn's reply, and a first turn has none`},
		{"think on first turn by number", `{"session": "a", "turn": 2, "prompt": "x", "think_ms": 10}` + "\n" + `{"session": "a", "turn": 1, "prompt": "y", "think_ms": 1}`,
			`s.jsonl:2: "think_ms" on the first turn of session "a": a think time is the wait after the previous turn's reply, and a first turn has none`},
		{"assistant message", `{"session": "a", "messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]}`,
			`s.jsonl:1: a session turn's messages are what the user adds; the assistant's replies are the server's`},
		{"tool message", `{"session": "a", "messages": [{"role": "tool", "content": "42"}]}`,
			`s.jsonl:1: messages[0]: role "tool" in a session turn, whose messages are user messages (and a system message opening the first turn)`},
		{"system on a later turn", `{"session": "a", "prompt": "x"}` + "\n" + `{"session": "a", "messages": [{"role": "system", "content": "s"}, {"role": "user", "content": "u"}]}`,
			`s.jsonl:2: messages[0]: a system message in turn 2 of session "a": only the first turn may open with one`},
		{"system after user", `{"session": "a", "messages": [{"role": "user", "content": "u"}, {"role": "developer", "content": "s"}]}`,
			`s.jsonl:1: messages[1]: a developer message after a user message: it may only open the session's first turn`},
		{"turn without session", `{"prompt": "x", "turn": 1}`, `s.jsonl:1: "turn" without "session": only a session's turns are numbered`},
		{"think without session", `{"prompt": "x", "think_ms": 0}`, `s.jsonl:1: "think_ms" without "session": a think time is the wait between a session's turns`},
		{"session of a bad type", `{"session": true, "prompt": "x"}`, `s.jsonl:1: "session" must be a non-empty string or an integer, got true`},
		{"empty session", `{"session": " ", "prompt": "x"}`, `s.jsonl:1: "session" must be a non-empty string or an integer, got the string " "`},
		{"fractional session", `{"session": 1.5, "prompt": "x"}`, `s.jsonl:1: "session" must be a non-empty string or an integer, got 1.5`},
		{"turn 0", `{"session": "a", "turn": 0, "prompt": "x"}`, `s.jsonl:1: "turn" must be a positive integer (turns are numbered from 1), got 0`},
		{"turn as a string", `{"session": "a", "turn": "1", "prompt": "x"}`, `s.jsonl:1: "turn" must be a positive integer (turns are numbered from 1), got the string "1"`},
		{"negative think", `{"session": "a", "prompt": "x"}` + "\n" + `{"session": "a", "prompt": "y", "think_ms": -1}`,
			`s.jsonl:2: "think_ms" must be a number of milliseconds in [0, 86400000], got -1`},
		{"think over a day", `{"session": "a", "prompt": "x"}` + "\n" + `{"session": "a", "prompt": "y", "think_ms": 1e12}`,
			`s.jsonl:2: "think_ms" must be a number of milliseconds in [0, 86400000], got 1e12`},
		{"think as a string", `{"session": "a", "prompt": "x"}` + "\n" + `{"session": "a", "prompt": "y", "think_ms": "5"}`,
			`s.jsonl:2: "think_ms" must be a number of milliseconds in [0, 86400000], got the string "5"`},
		{"tools not an array", `{"prompt": "x", "tools": {"type": "function"}}`, `s.jsonl:1: "tools" must be an array of tool objects, got an object`},
		{"tools empty", `{"prompt": "x", "tools": []}`, `s.jsonl:1: "tools" is empty (leave it out for a request without tools)`},
		{"tool not an object", `{"prompt": "x", "tools": [{"type": "function"}, "lookup"]}`, `s.jsonl:1: tools[1] must be a tool object, got the string "lookup"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			set, err := workloads.ReadJSONL(strings.NewReader(tc.input), "s.jsonl")
			if set != nil || err == nil || err.Error() != tc.want {
				t.Errorf("set %v, error\n%v\nwant\n%s", set != nil, err, tc.want)
			}
			var le *workloads.LineError
			if !errors.As(err, &le) {
				t.Errorf("error %v is not a *LineError", err)
			}
		})
	}
}

// TestJSONLSessionErrorsTogether: a file's session problems are all reported, in line order.
func TestJSONLSessionErrorsTogether(t *testing.T) {
	_, err := workloads.LoadJSONL(filepath.Join("testdata", "sessions_bad.jsonl"))
	want := strings.Join([]string{
		`testdata/sessions_bad.jsonl:1: "think_ms" on the first turn of session "a": a think time is the wait after the previous turn's reply, and a first turn has none`,
		`testdata/sessions_bad.jsonl:3: a session turn's messages are what the user adds; the assistant's replies are the server's`,
		`testdata/sessions_bad.jsonl:4: session "b": turn 3, but the session has no turn 2 (a session's turns are numbered 1, 2, … without gaps)`,
		`testdata/sessions_bad.jsonl:6: messages[0]: a system message in turn 2 of session "c": only the first turn may open with one`,
		`testdata/sessions_bad.jsonl:7: "session" must be a non-empty string or an integer, got true`,
		`testdata/sessions_bad.jsonl:8: "tools" is empty (leave it out for a request without tools)`,
	}, "\n")
	if err == nil || err.Error() != want {
		t.Errorf("error\n%v\nwant\n%s", err, want)
	}
}

// TestSessionSetsRoundTripThroughSave: sessions, turns, think times and tools survive Save.
func TestSessionSetsRoundTripThroughSave(t *testing.T) {
	jsonl, err := workloads.LoadJSONL(filepath.Join("testdata", "sessions.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	synth, err := workloads.SyntheticSessions{Synthetic: workloads.Synthetic{InputLen: 5, OutputLen: 3, RangeRatio: 0.4, Seed: 2},
		Turns: 3, TurnsRangeRatio: 0.5, Think: time.Second, ThinkDist: workloads.ThinkExponential, SystemLen: 4}.Generate(20)
	if err != nil {
		t.Fatal(err)
	}
	share, err := workloads.LoadShareGPT(filepath.Join("testdata", "sharegpt_sessions.json"), workloads.ShareGPTOptions{MultiTurn: true, Think: 1500 * time.Microsecond})
	if err != nil {
		t.Fatal(err)
	}
	cold, err := workloads.ApplyCold(synth, "[run:0f]")
	if err != nil {
		t.Fatal(err)
	}
	for _, set := range []*workloads.Set{jsonl, synth, share, cold} {
		t.Run(set.Source, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "s.jsonl")
			if err := workloads.Save(path, set); err != nil {
				t.Fatal(err)
			}
			back, err := workloads.LoadJSONL(path)
			if err != nil {
				t.Fatal(err)
			}
			// Save numbers the sessions: the file's own ids (provenance, not part of a request or
			// of the fingerprint) do not survive it.
			if !reflect.DeepEqual(back.Requests, withoutSessionIDs(set.Requests)) {
				t.Errorf("requests differ after the round trip:\n%+v\n%+v", back.Requests, set.Requests)
			}
			if want := workloads.Fingerprint(set.Requests); back.Fingerprint != want {
				t.Errorf("fingerprint %s after the round trip, want %s", back.Fingerprint, want)
			}
		})
	}
}

// TestShareGPTMultiTurn reads conversations as sessions (the golden files show whole sets).
func TestShareGPTMultiTurn(t *testing.T) {
	path := filepath.Join("testdata", "sharegpt_sessions.json")
	type turn struct {
		session, turn int
		label, prompt string
		maxTokens     int
		think         float64
	}
	read := func(opts workloads.ShareGPTOptions) (*workloads.Set, []turn) {
		t.Helper()
		set, err := workloads.LoadShareGPT(path, opts)
		if err != nil {
			t.Fatal(err)
		}
		checkSessions(t, set)
		var turns []turn
		for _, r := range set.Requests {
			if len(r.Messages) != 1 || r.Messages[0].Role != "user" || r.Prompt != "" || r.InputTokens != workloads.CountWords(r.Messages[0].Content) {
				t.Fatalf("request %d: %+v", r.ID, r)
			}
			turns = append(turns, turn{r.Session, r.Turn, r.Label, r.Messages[0].Content, r.MaxTokens, r.ThinkMS})
		}
		return set, turns
	}
	set, got := read(workloads.ShareGPTOptions{MultiTurn: true, Think: 2 * time.Second})
	want := []turn{
		{1, 1, "eggs#1", "How long should I boil an egg for a soft yolk?", 13, 0},
		// Two human messages in a row are one turn: joined, not reduced to the second.
		{1, 2, "eggs#2", "And for a hard yolk?\n\nSorry, I mean a fully hard yolk, not a jammy one.", 10, 2000},
		{1, 3, "eggs#3", "Can I peel it right away?", 14, 2000},
		{2, 1, "9#1", "Translate good morning into French please.", 9, 0},
		{2, 2, "9#2", "Ok.", 8, 2000},
		{2, 3, "9#3", "How do I say good night in French?", 7, 2000},
		{3, 1, "one-turn#1", "What is the boiling point of water at sea level?", 7, 0},
		{4, 1, "", "Hi", 7, 0},
		{4, 2, "", "Tell me a fact about the moon please.", 11, 2000},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("turns:\n%+v\nwant\n%+v", got, want)
	}
	if set.Skipped != 1 || set.Source != "sharegpt(file=testdata/sharegpt_sessions.json, multi-turn, think=2s)" {
		t.Errorf("skipped %d, source %q", set.Skipped, set.Source)
	}

	// vLLM's filter: "Hi" is under 4 words, so entry 5 is skipped; "Ok." cuts session 9 short.
	set, got = read(workloads.ShareGPTOptions{MultiTurn: true, MinLen: 4, MaxPromptLen: 1024, MaxTotalLen: 2048})
	if len(got) != 5 || got[3].label != "9#1" || got[4].label != "one-turn#1" || set.Skipped != 2 {
		t.Errorf("with the vLLM filter: %+v, %d skipped", got, set.Skipped)
	}
	wantNotes := []string{
		"skipped 1 ShareGPT entry without a human→gpt exchange",
		"skipped 1 ShareGPT entry with a prompt or reply under 4 words in its first turn",
		"joined consecutive human messages into one prompt (a blank line between them) in 1 request: the prompt starts with the first of them, as vLLM's loader sends a conversation's first message, and keeps the rest",
		"cut 1 session short before their first turn outside the length filters (with its history): 2 later turns dropped",
	}
	if !reflect.DeepEqual(set.Notes, wantNotes) {
		t.Errorf("notes %q\nwant %q", set.Notes, wantNotes)
	}

	// The context filters count the history: eggs' turn 3 would end at 11+13 + 16+10 + 6+14 = 70
	// words (turn 2's prompt joins 5 and 11 words); 50 allows two turns. A prompt limit of 20
	// allows one (11+13+16 = 40 > 20).
	_, got = read(workloads.ShareGPTOptions{MultiTurn: true, MaxTotalLen: 50})
	if got[0].label != "eggs#1" || got[1].label != "eggs#2" || got[2].label != "9#1" {
		t.Errorf("total length 50: %+v", got)
	}
	_, got = read(workloads.ShareGPTOptions{MultiTurn: true, MaxPromptLen: 20})
	if got[0].label != "eggs#1" || got[1].label != "9#1" {
		t.Errorf("prompt length 20: %+v", got)
	}

	// Max counts sessions; the first turns are the single-turn loader's requests.
	set, got = read(workloads.ShareGPTOptions{MultiTurn: true, Max: 2})
	if set.SessionCount() != 2 || len(got) != 6 || set.Notes[len(set.Notes)-1] != "kept the first 2 usable ShareGPT entries, as sessions" {
		t.Errorf("max 2: %d sessions, %d turns, notes %q", set.SessionCount(), len(got), set.Notes)
	}
	single, err := workloads.LoadShareGPT(path, workloads.ShareGPTOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_, all := read(workloads.ShareGPTOptions{MultiTurn: true})
	var firsts []string
	for _, tr := range all {
		if tr.turn == 1 {
			firsts = append(firsts, tr.prompt)
		}
	}
	for i, r := range single.Requests {
		if r.Text() != firsts[i] {
			t.Errorf("single request %d %q, first turn %q", i, r.Text(), firsts[i])
		}
	}

	for _, tc := range []struct {
		opts workloads.ShareGPTOptions
		want string
	}{
		{workloads.ShareGPTOptions{Think: time.Second}, "a ShareGPT think time (1s) is the wait between a session's turns: it needs multi-turn sessions"},
		{workloads.ShareGPTOptions{MultiTurn: true, Think: -time.Second}, "ShareGPT think time must be in [0, 24h0m0s], got -1s"},
	} {
		if _, err := workloads.LoadShareGPT(path, tc.opts); err == nil || err.Error() != tc.want {
			t.Errorf("%+v: error %v, want %q", tc.opts, err, tc.want)
		}
	}
}

// TestSessionSources: Load's "sessions" kind and N for sessions, and a Source's tiers of sessions.
func TestSessionSources(t *testing.T) {
	opts := workloads.LoadOptions{
		N: 4, Seed: 8, TimeScale: 1,
		Synthetic: workloads.Synthetic{InputLen: 5, OutputLen: 2},
		Sessions:  workloads.SyntheticSessions{Synthetic: workloads.Synthetic{InputLen: 999, Seed: 999}, Turns: 3, Think: time.Second},
	}
	set, tr, err := workloads.Load("sessions", opts)
	if err != nil || tr != nil {
		t.Fatal(err, tr)
	}
	want, _ := workloads.SyntheticSessions{Synthetic: workloads.Synthetic{InputLen: 5, OutputLen: 2, Seed: 8}, Turns: 3, Think: time.Second}.Generate(4)
	if set.Fingerprint != want.Fingerprint || set.SessionCount() != 4 || len(set.Requests) != 12 {
		t.Errorf("Load(sessions): %s, %d sessions, %d requests", set.Source, set.SessionCount(), len(set.Requests))
	}
	if _, _, err := workloads.Load("sessions", workloads.LoadOptions{Synthetic: opts.Synthetic, Sessions: opts.Sessions}); err == nil {
		t.Error("sessions with N=0 accepted")
	}

	file := filepath.Join("testdata", "sessions.jsonl")
	for _, tc := range []struct {
		n, sessions, requests int
		note                  string
	}{
		{0, 4, 8, ""}, {2, 2, 5, ""}, {9, 4, 8, "9 sessions asked for, the file has 4"},
	} {
		o := opts
		o.N = tc.n
		set, _, err := workloads.Load(file, o)
		if err != nil {
			t.Fatal(err)
		}
		checkSessions(t, set)
		if set.SessionCount() != tc.sessions || len(set.Requests) != tc.requests || tc.note != "" && set.Notes[len(set.Notes)-1] != tc.note {
			t.Errorf("N=%d: %d sessions, %d requests, notes %q", tc.n, set.SessionCount(), len(set.Requests), set.Notes)
		}
	}

	src, errs := workloads.NewSource(file, opts, "")
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	whole, _, _ := workloads.Load(file, workloads.LoadOptions{})
	if !src.Sessions() || src.Size() != 4 || src.Cache != workloads.CacheReplay {
		t.Errorf("source: sessions %v, size %d, cache %v", src.Sessions(), src.Size(), src.Cache)
	}
	for _, n := range []int{1, 3, 4, 10} {
		tier, notes, err := src.TierSet(n, 1)
		if err != nil {
			t.Fatal(err)
		}
		ranges := checkSessions(t, tier)
		if len(ranges) != n || (n > 4) != (len(notes) == 1) {
			t.Errorf("TierSet(%d): %d sessions, notes %q", n, len(ranges), notes)
		}
		// Session k of the tier is session k mod 4 of the file, renumbered k+1.
		orig := workloads.Sessions(whole.Requests)
		for k, rg := range ranges {
			o := orig[k%4]
			got := append([]workloads.Request(nil), tier.Requests[rg[0]:rg[1]]...)
			exp := append([]workloads.Request(nil), whole.Requests[o[0]:o[1]]...)
			for i := range got {
				got[i].ID, exp[i].ID, exp[i].Session = 0, 0, k+1
			}
			if !reflect.DeepEqual(got, exp) {
				t.Fatalf("TierSet(%d): session %d is not the file's session %d", n, k+1, k%4+1)
			}
		}
	}
	if _, _, err := src.TierSet(0, 1); err == nil {
		t.Error("a tier of 0 sessions accepted")
	}

	gen, errs := workloads.NewSource("sessions", opts, "")
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	if !gen.Sessions() || !gen.Generated() || gen.Cache != workloads.CacheCold || gen.Desc != "sessions(turns=3, think=1s fixed, input=5, output=2, range=0, seed=8)" {
		t.Errorf("generated source: %+v", gen)
	}
	tier, _, err := gen.TierSet(7, 3)
	if err != nil || tier.SessionCount() != 7 {
		t.Fatalf("generated TierSet: %v", err)
	}
	bad := opts
	bad.Sessions.Turns = 0
	if _, errs := workloads.NewSource("sessions", bad, ""); len(errs) != 1 || (field.Of(errs[0]) == nil || field.Of(errs[0]).Name != workloads.FieldTurns) {
		t.Errorf("invalid sessions: %v", errs)
	}
	plain, _ := workloads.NewSource(filepath.Join("testdata", "requests.jsonl"), workloads.LoadOptions{TimeScale: 1}, "")
	if plain.Sessions() || plain.Size() != 7 {
		t.Errorf("a file without sessions: sessions %v, size %d", plain.Sessions(), plain.Size())
	}
}

// TestApplyColdSessions: each session's first turn gets a nonce of its own; later turns,
// which follow the history, are unchanged; the fingerprint stays the set's own.
func TestApplyColdSessions(t *testing.T) {
	synth, _ := workloads.SyntheticSessions{Synthetic: workloads.Synthetic{InputLen: 4, OutputLen: 2, Seed: 1}, Turns: 3, SystemLen: 2}.Generate(5)
	file, err := workloads.LoadJSONL(filepath.Join("testdata", "sessions.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	for _, set := range []*workloads.Set{synth, file} {
		t.Run(set.Source, func(t *testing.T) {
			before := renderSetNoFile(set)
			nonce := workloads.NewNonce()
			cold, err := workloads.ApplyCold(set, nonce)
			if err != nil {
				t.Fatal(err)
			}
			if renderSetNoFile(set) != before {
				t.Error("ApplyCold modified its input")
			}
			if cold.Fingerprint != set.Fingerprint || cold.Nonce != nonce {
				t.Errorf("fingerprint %s nonce %q", cold.Fingerprint, cold.Nonce)
			}
			seen := map[string]bool{}
			for i, r := range cold.Requests {
				orig := set.Requests[i]
				if r.Turn > 1 {
					if !reflect.DeepEqual(r, orig) {
						t.Errorf("request %d (turn %d) changed", i, r.Turn)
					}
					continue
				}
				sn := workloads.SessionNonce(nonce, r.Session)
				if seen[sn] || workloads.CountWords(sn) != 1 || !strings.HasPrefix(sn, strings.TrimSuffix(nonce, "]")) {
					t.Errorf("session %d: nonce %q repeated or not one word of the run's", r.Session, sn)
				}
				seen[sn] = true
				if r.InputTokens != orig.InputTokens+1 {
					t.Errorf("request %d: input tokens %d, want %d", i, r.InputTokens, orig.InputTokens+1)
				}
				if orig.Text() != "" && r.Text() != sn+" "+orig.Text() {
					t.Errorf("request %d: prompt %q", i, r.Text())
				}
				if len(orig.Messages) > 0 && (r.Messages[0].Content != sn+" "+orig.Messages[0].Content || !reflect.DeepEqual(r.Messages[1:], orig.Messages[1:])) {
					t.Errorf("request %d: messages %+v", i, r.Messages)
				}
			}
			if len(seen) != set.SessionCount() {
				t.Errorf("%d nonces for %d sessions", len(seen), set.SessionCount())
			}
		})
	}
	for _, tc := range []struct {
		nonce   string
		session int
		want    string
	}{
		{"[run:0123456789abcdef]", 3, "[run:0123456789abcdef:s3]"},
		{"run-7", 12, "run-7/s12"},
		{"]", 1, "]/s1"},
	} {
		if got := workloads.SessionNonce(tc.nonce, tc.session); got != tc.want {
			t.Errorf("SessionNonce(%q, %d) = %q, want %q", tc.nonce, tc.session, got, tc.want)
		}
	}
	broken := workloads.NewSet("broken", []workloads.Request{{Prompt: "x", Session: 1, Turn: 2}})
	if _, err := workloads.ApplyCold(broken, "[run:1]"); err == nil {
		t.Error("a set breaking the session structure accepted")
	}
}

// TestMooncakeSessionNote: conversation ids in a Mooncake trace are only noted.
func TestMooncakeSessionNote(t *testing.T) {
	for _, key := range []string{"session_id", "conversation_id", "chat_id"} {
		in := `{"timestamp": 0, "input_length": 3, "output_length": 1, "` + key + `": 1}` + "\n" + `{"timestamp": 1, "input_length": 3, "output_length": 1, "` + key + `": 1}`
		tr, err := workloads.ReadTrace(strings.NewReader(in), "t.jsonl", workloads.TraceMooncake, 1)
		if err != nil {
			t.Fatal(err)
		}
		want := `the trace's rows carry "` + key + `": multi-turn structure in Mooncake traces is replayed as independent requests, at their timestamps`
		if len(tr.Notes) != 1 || tr.Notes[0] != want {
			t.Errorf("notes %q", tr.Notes)
		}
	}
	tr, err := workloads.ReadTrace(strings.NewReader(`{"timestamp": 0, "input_length": 3, "output_length": 1}`), "t.jsonl", workloads.TraceMooncake, 1)
	if err != nil || len(tr.Notes) != 0 {
		t.Errorf("notes %q, %v", tr.Notes, err)
	}
}

// TestSessionCount of sets with and without sessions.
func TestSessionCount(t *testing.T) {
	plain, _ := workloads.Synthetic{InputLen: 2, OutputLen: 1}.Generate(3)
	if plain.SessionCount() != 0 || (&workloads.Set{}).SessionCount() != 0 {
		t.Error("a set without sessions counts sessions")
	}
}

// withoutSessionIDs is a copy of reqs without the sessions' ids from their file: what a saved set
// reads back as.
func withoutSessionIDs(reqs []workloads.Request) []workloads.Request {
	out := append([]workloads.Request(nil), reqs...)
	for i := range out {
		out[i].SessionID = ""
	}
	return out
}
