// Package measure turns the records of one tier into a Summary: the metrics of METRICS.md,
// latency objectives (vLLM's --goodput syntax), compliance, and percentiles computed the way
// numpy computes them, so that numbers from `vllm bench serve` and from loadcurve can share a
// table. Where vLLM's benchmark client defines a metric, the formula and the JSON key match it;
// everything else is ours and is defined here.
//
// # Which requests enter which number
//
//   - Issued: records whose dispatched moment is set. Records never dispatched are ignored
//     except for the whole-tier checks (realised rate, Complete).
//   - Completed (vLLM's "completed"): issued requests with outcome ok. Failed (vLLM's "failed"):
//     issued requests with any other outcome, so Completed + Failed = Issued = Σ Outcomes.
//   - Latency statistics TTFT, TPOT, ITL, E2EL and e2el_including_client_queue use ok requests
//     only. ITL pools every gap of every ok request. TPOT is left out for requests with one
//     output token or fewer.
//   - client_queue_time and schedule_lag use every issued request (a failed request waited for
//     its slot and was released late just the same); client_queue_time needs the slot moment,
//     so a request cancelled while waiting for the gate is not in it.
//   - total_input_tokens and total_output_tokens (vLLM's) count ok requests only;
//     raw output counts the output tokens of every issued request whatever its outcome.
//   - Good request (counted by request_goodput): ok and every given latency objective met.
//     With only vLLM's keys (ttft, tpot, e2el) this is exactly vLLM's goodput: a value equal to
//     the objective meets it, and a request with TPOT undefined meets a TPOT objective.
//   - Compliant request: good and its quality check did not fail (unchecked counts as passed).
//     compliant_request_share = compliant / issued; compliant_token_share = compliant output
//     tokens / raw output tokens. They are different quantities.
//
// # Statistics
//
// mean, std (population, ddof 0), median (numpy's np.median: the mean of the two middle
// values for an even count) and percentiles (numpy's default, Hyndman–Fan type 7, see
// Percentile) are in milliseconds. A metric with no values has Count 0 and NaN statistics,
// written as null in JSON; vLLM writes 0 there, which would read as a perfect latency.
//
// # Undefined quantities
//
// Any ratio whose denominator is zero (a throughput over a zero duration, a share of zero
// issued requests or zero raw tokens, a ratio over zero issued requests) is NaN in the Go
// value and null in JSON, never 0: 0 would be a claim. A rate over a zero span with a positive
// count (every request planned at T0) is +Inf, written "inf" like vLLM's request_rate.
//
// # Duration and the steady-state window
//
// Duration runs from T0 to the latest end over all records of the tier (the drain after the
// last arrival is included, as vLLM does). With a window (Options.Warmup, Options.Cooldown)
// only requests planned inside [Warmup, D-Cooldown] are counted, where D is that whole-tier
// duration, and every throughput is divided by the window's length (D-Cooldown-Warmup)
// instead: in a steady state, requests arriving in the window complete at the rate they
// arrive, so this estimates the steady throughput without the ramp-up and the drain. The
// summary's Window field says so. The offered-load rates (realised, delivered) and Complete
// always describe the whole tier.
package measure
