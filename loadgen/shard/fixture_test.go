package shard_test

import (
	"cmp"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/loadcurve/loadcurve/arrival"
	"github.com/loadcurve/loadcurve/loadgen/shard"
	"github.com/loadcurve/loadcurve/measure/records"
)

// base is the wall-clock start of the constructed runs.
var base = time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)

// singleRun builds the records file a single machine would write for a two-tier sweep of n
// requests per tier: every request ok except every 17th (HTTP 503), records sorted by planned
// offset then id.
func singleRun(t *testing.T, n int) *records.File {
	t.Helper()
	f := &records.File{Header: records.Header{
		Kind: records.KindHeader, Tool: "loadcurve", Version: "test", MetricsVersion: records.MetricsVersion,
		Command: "sweep", Target: "http://127.0.0.1:8000/v1", Endpoint: "chat", Model: "m",
		Workload: "random(input=10, output=3, range=0, seed=7)", Arrival: "sweep(20,40, burstiness=1)",
		Seed: 7, CachePolicy: "replay", TimeoutS: 60, StartWall: base,
	}}
	for tier, rate := range []float64{20, 40} {
		spec := arrival.Spec{Rate: rate, Burstiness: 1}
		seed := int64(100 + tier)
		offsets, err := spec.Offsets(n, seed)
		if err != nil {
			t.Fatal(err)
		}
		f.Tiers = append(f.Tiers, records.Tier{Kind: records.KindTier, Tier: tier, Arrival: spec.String(),
			RequestRate: records.Rate(rate), Burstiness: 1, Seed: seed, Planned: n,
			WorkloadFingerprint: "sha256:tier" + strconv.Itoa(tier), StartWall: base.Add(time.Duration(tier) * time.Minute)})
		for id, off := range offsets {
			r := records.NewRecord(tier, id, off)
			r.Dispatched = off + time.Duration(id%3)*100*time.Microsecond
			r.Slot = r.Dispatched
			r.Sent = r.Slot + 50*time.Microsecond
			r.End = r.Sent + 150*time.Millisecond
			r.InputTokens, r.InputTokensSource = 10, records.SourceUsage
			if id%17 == 5 {
				r.Outcome, r.HTTPStatus, r.Error = records.HTTPError, 503, "overloaded"
				r.End = r.Sent + time.Millisecond
			} else {
				r.FirstEvent = r.Sent + 20*time.Millisecond + time.Duration(id)*time.Microsecond
				r.First = r.FirstEvent
				r.ITL = []time.Duration{10 * time.Millisecond, 11 * time.Millisecond}
				r.Last = r.First + 21*time.Millisecond
				r.Chunks, r.OutputTokens, r.OutputTokensSource = 3, 3, records.SourceUsage
				r.FinishReason, r.Quality = "length", records.QualityPass
			}
			f.Records = append(f.Records, r)
		}
	}
	sortRecords(f.Records)
	return f
}

func sortRecords(rs []records.Record) {
	slices.SortStableFunc(rs, func(a, b records.Record) int {
		return cmp.Or(cmp.Compare(a.Tier, b.Tier), cmp.Compare(a.Planned, b.Planned), cmp.Compare(a.ID, b.ID))
	})
}

// split cuts a single run into the k files its shards would have written: the header names the
// shard, each tier plans the shard's own count and carries the shard's anchor (anchors[i] after
// the single run's), and each record carries its shard. Records are in completion order (here:
// by end time), as a shard writes them.
func split(single *records.File, k int, anchors []time.Duration) []*records.File {
	out := make([]*records.File, k)
	for i := range k {
		sp := shard.Spec{Index: i, Count: k}
		f := &records.File{Header: single.Header}
		f.Header.Shard = sp.String()
		f.Header.StartWall = single.Header.StartWall.Add(anchors[i])
		for _, t := range single.Tiers {
			t.Planned = sp.OwnedCount(t.Planned)
			t.StartWall = t.StartWall.Add(anchors[i])
			f.Tiers = append(f.Tiers, t)
		}
		for _, r := range single.Records {
			if sp.Owns(r.ID) {
				r.Shard = i
				f.Records = append(f.Records, r)
			}
		}
		slices.SortStableFunc(f.Records, func(a, b records.Record) int {
			return cmp.Or(cmp.Compare(a.Tier, b.Tier), cmp.Compare(a.End, b.End))
		})
		out[i] = f
	}
	return out
}

// withShards returns the single run's records with each record's shard field set as in a
// merge of k shards.
func withShards(single *records.File, k int) []records.Record {
	rs := slices.Clone(single.Records)
	for i := range rs {
		rs[i].Shard = rs[i].ID % k
	}
	return rs
}
