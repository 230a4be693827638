// Command genrecords writes a synthetic records.jsonl of one run tier, for benchmarking what
// reads record files (`loadcurve report`, with and without --bounded-memory) at sizes no test
// run produces. The records are plausible, not measured: 100 requests/s, 128-token streams
// (127 ITL gaps each, as vLLM's default output length), one in 50 failed mid-stream.
//
//	go run ./scripts/genrecords -n 1000000 -out /tmp/big
package main

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"time"

	"github.com/loadcurve/loadcurve/curve/result"
	"github.com/loadcurve/loadcurve/measure/records"
)

func main() {
	n := flag.Int("n", 100_000, "requests")
	gaps := flag.Int("gaps", 127, "ITL gaps per ok request")
	out := flag.String("out", "", "directory to write records.jsonl into (required)")
	flag.Parse()
	if *out == "" || *n < 1 || *gaps < 0 {
		fmt.Fprintln(os.Stderr, "genrecords: -out DIR is required; -n >= 1; -gaps >= 0")
		os.Exit(2)
	}
	if err := write(*out, *n, *gaps); err != nil {
		fmt.Fprintln(os.Stderr, "genrecords:", err)
		os.Exit(1)
	}
}

func write(dir string, n, gaps int) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	w, err := records.Create(filepath.Join(dir, result.RecordsName), result.NewHeader(result.Run{Command: records.CommandRun,
		Target: "synthetic://genrecords", Model: "synthetic", Seed: 1, Started: time.Unix(1_800_000_000, 0).UTC()}))
	if err != nil {
		return err
	}
	if err := w.WriteTier(records.Tier{Tier: 0, Arrival: "poisson(rate=100/s)", RequestRate: 100, Burstiness: 1, Planned: n}); err != nil {
		return err
	}
	rng := rand.New(rand.NewPCG(1, 2))
	itl := make([]time.Duration, gaps)
	for i := range n {
		planned := time.Duration(i) * 10 * time.Millisecond
		r := records.NewRecord(0, i, planned)
		r.Dispatched = planned + time.Duration(rng.IntN(500_000))
		r.Slot, r.Sent = r.Dispatched, r.Dispatched+2*time.Microsecond
		r.FirstEvent = r.Sent + 30*time.Millisecond + time.Duration(rng.IntN(300_000_000))
		r.First = r.FirstEvent
		t := r.First
		k := gaps
		if i%50 == 0 {
			r.Outcome, r.Error = records.StreamError, "stream ended without [DONE] (synthetic)"
			k = gaps / 2
		}
		r.ITL = itl[:k]
		for j := range r.ITL {
			r.ITL[j] = 10*time.Millisecond + time.Duration(rng.IntN(30_000_000))
			t += r.ITL[j]
		}
		r.Last, r.End = t, t+500*time.Microsecond
		r.Chunks, r.OutputTokens, r.OutputTokensSource = k+1, k+1, records.SourceUsage
		r.InputTokens, r.InputTokensSource, r.FinishReason, r.HTTPStatus = 1024, records.SourceUsage, "length", 200
		if err := w.Write(&r); err != nil {
			return err
		}
	}
	return w.Close()
}
