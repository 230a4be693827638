// Package timeseries is the second-by-second view of one tier, derived from its records alone
// (so `loadcurve report` reproduces it exactly): how many requests the schedule offered, the
// client sent, completed and failed in each slice of the tier, how many were in flight and
// waiting in the client's queue, the output token rate, and the TTFT and ITL percentiles of the
// requests of each slice. It shows what a tier's summary averages away: the warm-up transient
// before the steady-state window, the drain after the last arrival, and anything that went
// wrong for a while in between.
//
// # Slices
//
// Slice k is [k·d, (k+1)·d) on the records' monotonic offsets from the tier's T0, where d is
// the slice length ([DefaultSlice], 1 s, unless given). The slices run from T0 up to D, the
// latest moment of any record (the end of the last request, the duration of measure's
// summary): ⌈D/d⌉ slices, at least one. The last slice also holds the moment D itself when D
// falls on a slice boundary, so that every moment is in some slice. Means and rates are over
// the whole slice length, the last slice's too (nothing happens after D).
//
// A tier so long that it would need more than [MaxSlices] slices gets a longer slice: the
// smallest whole multiple of d that fits; [Series].Slice says which.
//
// # Columns
//
// A moment that never came (records.Unset) counts nowhere; the columns that need it leave the
// request out.
//
//   - offered: records planned in the slice (every record, issued or not: the schedule).
//   - sent: requests whose sent moment is in the slice.
//   - completed: ok requests whose end is in the slice.
//   - errors: issued requests (dispatched set) that ended in the slice with an http_error,
//     timeout or stream_error; canceled: issued requests canceled, by their end. A request
//     canceled while it waited for a concurrency slot has no end and is in neither.
//   - running: the mean number of requests in flight (from sent to end) over the slice: the
//     exact integral of their count over the slice divided by its length; max_running the
//     largest count at any instant of the slice (a request is in flight on [sent, end)).
//   - waiting_client: the same mean for the client's queue, from planned to slot (requests
//     without a slot moment are left out).
//   - output_tokens_per_s: output tokens received in the slice per second, of every issued
//     request whatever its outcome (measure's raw output), with the rule of measure's steady
//     state: the first token at the first moment, the others spread evenly over (first, last].
//   - ttft_p50_ms, ttft_p99_ms: percentiles of the TTFT (first − sent) of the ok requests whose
//     first moment is in the slice; ttft_n counts them.
//   - itl_p50_ms, itl_p99_ms: percentiles of the inter-token gaps (records.Record.ITL) of ok
//     requests that end in the slice (a gap ends at first plus the gaps up to it); itl_n counts
//     them.
//
// Percentiles are measure's (numpy's default, linear interpolation between closest ranks) and
// NaN, null in JSON and an empty CSV cell, when the slice has no value.
//
// # Cost
//
// Of and [Builder] keep a few durations per request and the request's ITL slice (not a copy).
// Counts, means and token rates are O(1) per request and per slice (difference arrays, exact
// integer arithmetic for the time integrals); max_running sorts the sent and end moments, and
// the percentiles sort each slice's values in one shared buffer: O(n log n) in all.
package timeseries
