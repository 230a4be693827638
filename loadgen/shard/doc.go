// Package shard splits one loadcurve run over k client machines and joins their records back
// into one run.
//
// # Splitting
//
// Every shard computes the same global schedule and request set from the seed; shard i of k
// ([Spec]) sends exactly the requests whose index j satisfies j ≡ i (mod k), at their global
// planned offsets t_j, under their global ids ([Spec.Filter]). Taken together the shards send
// every request once, each at its own planned offset: the load the deployment receives is the
// single-machine schedule, whatever the arrival process (Poisson, Gamma, ramp or burst), provided
// the shards share one T0 ([StartAt]) and their clocks agree.
//
// What one shard sends on its own is not the global process at rate r/k. The split is
// deterministic (every k-th arrival), not an independent coin per request: an independent coin
// ("random thinning") would turn a Poisson process of rate r into Poisson processes of rate r/k,
// but taking every k-th arrival does not. For a constant-rate schedule with Gamma gaps of shape b
// and mean 1/r (coefficient of variation 1/√b; b = 1 is Poisson):
//
//   - shard i's first request is at t_i, the sum of i+1 global gaps: Gamma with shape (i+1)·b,
//     mean (i+1)/r;
//   - each later gap t_{j+k} − t_j is the sum of k consecutive global gaps, which are independent,
//     so the gaps are independent and identically Gamma distributed with shape k·b and scale
//     1/(r·b): mean k/r, coefficient of variation 1/√(k·b).
//
// So every shard is a (delayed) renewal process at rate r/k that is smoother than the whole: a
// Poisson schedule splits into Erlang-k shards (CV 1/√k), a bursty one (b < 1) into less bursty
// ones, constant spacing into constant spacing k/r. The shards are not independent of each other
// either: they interleave exactly, which is what makes their union the single-machine schedule.
// For ramps the same holds with the rate following the global index; with rate inf every request
// is at T0 in every shard. The package tests check these statements with fixed seeds.
//
// # Starting together
//
// --start-at takes an RFC 3339 time. [StartAt] converts it to a delay once, from the wall clock,
// then sleeps on the monotonic clock, so a wall-clock step during the wait does not move the
// start. A start more than [MaxStartAhead] away is refused (most likely a time-zone mistake), and
// so is one that has already passed by more than [MaxStartLate]: such a shard would run shifted
// against the others, and the merged result would not be the schedule that was planned.
//
// # Joining
//
// [Merge] checks that the files are the shards of one run (same identity fields in the header,
// same k, every index from 0 to k−1 exactly once, the same tiers, planned counts that partition
// one global set, every record where its shard says it should be) and says precisely what is
// wrong otherwise. The merged file is an ordinary records file: summaries, sweep analysis and
// report read it unchanged. The [MergeReport] gives what merging cannot repair but can show:
// how far the shards' wall-clock anchors of each tier are apart, each shard's own schedule lag,
// and shards whose failure share stands out (for example a gateway limiting connections per
// client).
//
// An anchor is the wall-clock time at a tier's T0 as read by the shard's own host. Their spread
// shows start jitter and how far later tiers drifted apart, so it is a lower bound on the timing
// uncertainty between shards. It cannot show a constant offset between the hosts' clocks: a host
// whose clock is δ ahead starts δ early in real time, yet its own clock reads the agreed start.
// Clock offsets must be checked on the hosts (NTP) before the run.
package shard
