// Package curve turns the summaries of a sweep's tiers into a load curve and
// judges it: for each tier whether the compliant request share meets the
// objective (with a Wilson score interval, so a short tier is "uncertain"
// rather than failed), whether its queueing was stable (a trend test on
// client queue time plus TTFT against planned time), where raw throughput
// reaches its plateau, where non-compliance turns systematic (the knee), the
// capacity at the objective and the operating point below it.
//
// It also parses the sweep's --request-rates flag ([ParseRates]) and plans
// the tiers of an automatic sweep ([Planner]).
//
// The package is pure computation: no I/O, no clock, and it imports nothing
// else of loadcurve. Every judgement [Analyze] makes is also written out in
// words, with the numbers behind it, in [Analysis.Notes], and the parameters
// that produced it are echoed in [Analysis.Params].
//
// Rates are requests per second. Compliant shares are request shares
// (compliant requests / requests issued, METRICS.md); they are never mixed
// with token shares.
package curve
