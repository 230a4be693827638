package workloads_test

import (
	"fmt"
	"strings"
	"time"

	"github.com/loadcurve/loadcurve/workloads"
)

// Two groups with a 3-word prefix each, interleaved round-robin.
func ExampleSharedPrefix_Generate() {
	set, err := workloads.SharedPrefix{Groups: 2, PrefixLen: 3, SuffixLen: 2, OutputLen: 8, Seed: 1}.Generate(4)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, r := range set.Requests {
		w := strings.Fields(r.Text())
		fmt.Printf("group %d: [%s] %s\n", r.PrefixGroup, strings.Join(w[:3], " "), strings.Join(w[3:], " "))
	}
	// Output:
	// group 1: [are group line] people served
	// group 2: [work two were] city state
	// group 1: [are group line] had many
	// group 2: [work two were] all early
}

// A trace is a schedule and a request set at once.
func ExampleLoad() {
	set, tr, err := workloads.Load("mooncake:testdata/mooncake.jsonl", workloads.LoadOptions{TimeScale: 0.5, Seed: 7})
	if err != nil {
		fmt.Println(err)
		return
	}
	for i, r := range set.Requests {
		fmt.Printf("at %v: %d words, max_tokens %d\n", tr.Offsets[i], r.InputTokens, r.MaxTokens)
	}
	// Output:
	// at 0s: 1100 words, max_tokens 40
	// at 0s: 700 words, max_tokens 12
	// at 750ms: 1030 words, max_tokens 5
	// at 1.526s: 300 words, max_tokens 1
	// at 1.52625s: 1024 words, max_tokens 0
}

// A cold run puts its nonce in front of every prompt; the fingerprint stays the set's own.
func ExampleApplyCold() {
	set := workloads.NewSet("demo", []workloads.Request{{Prompt: "Say hi.", InputTokens: 2, MaxTokens: 4}})
	cold, err := workloads.ApplyCold(set, "[run:5eed]")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(cold.Requests[0].Text(), cold.Requests[0].InputTokens)
	fmt.Println(cold.Fingerprint == set.Fingerprint)
	// Output:
	// [run:5eed] Say hi. 3
	// true
}

// Sessions of one to three turns (2 ± 50%); later turns wait a think time after the previous reply.
func ExampleSyntheticSessions_Generate() {
	s := workloads.SyntheticSessions{
		Synthetic: workloads.Synthetic{InputLen: 4, OutputLen: 8, Seed: 5},
		Turns:     2, TurnsRangeRatio: 0.5, Think: 2 * time.Second, ThinkDist: workloads.ThinkExponential, SystemLen: 3,
	}
	set, err := s.Generate(3)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(set.Source)
	for _, r := range set.Requests {
		fmt.Printf("session %d turn %d: think %v ms, %d messages, %d words\n", r.Session, r.Turn, r.ThinkMS, len(r.Messages), r.InputTokens)
	}
	// Output:
	// sessions(turns=2, turns-range=0.5, think=2s exponential, system=3, input=4, output=8, range=0, seed=5)
	// session 1 turn 1: think 0 ms, 2 messages, 7 words
	// session 1 turn 2: think 1625.875 ms, 1 messages, 4 words
	// session 1 turn 3: think 3676.487 ms, 1 messages, 4 words
	// session 2 turn 1: think 0 ms, 2 messages, 7 words
	// session 3 turn 1: think 0 ms, 2 messages, 7 words
	// session 3 turn 2: think 3550.208 ms, 1 messages, 4 words
}
