// Package plan turns a deployment's verified operating point into a capacity
// plan for a demand forecast: how many replicas the forecast needs, what they
// cost per month provisioned for the peak ("static") and scaled with the
// profile ("following"), what each effective (compliant) output token then
// costs once the idle capacity that is paid for is counted, and, for two
// deployments, which is cheaper for the forecast and at which forecast levels
// the cheaper one changes: the seed article's cost reversal on a load axis.
//
// # Inputs
//
// A [Deployment] is one replica as a sweep measured it: the request rate it
// carries at its operating point (package curve's OperatingPoint.Rate, the
// capacity less the headroom), its capacity, the compliant and raw output
// tokens per request there, and its hourly cost. The operating point already
// holds the headroom; the plan adds none. This package plans from whatever
// operating rate it is given: whether that operating point was verified by a
// confirmation tier is the caller's check ([FromAnalysis] reports it), and a
// plan built on an unverified point inherits its doubt.
//
// A [Forecast] is demand in requests per second as a step function over one
// period (a day, say) that repeats to fill the month. [ReadProfileCSV] reads
// one from a file; [PeakForecast] is a flat one.
//
// # Rules
//
// Scale-out: N replicas behind a load balancer are assumed to split the
// requests evenly, each seeing rate/N with the burstiness the sweep measured.
// So a demand of r req/s needs ⌈r / operating rate⌉ replicas, and the peak
// needs N = ⌈peak / operating rate⌉.
//
// Following the profile: replicas(t) = max(1, ⌈max{rate(s) : t ≤ s ≤ t+lag} /
// operating rate⌉). Replicas are started [Options].ScaleUpLag ahead of the
// demand that needs them (they must be serving by then) and stopped as soon as
// the demand falls; at least one replica always runs, even when the forecast
// says 0 (a deployment that scales to zero pays a cold start its operating
// point never measured). Because the profile repeats, the lag looks across
// the end of the period into the next one.
//
// Money: monthly cost = replica-hours per month × cost per hour; a month is
// [Options].HoursPerMonth (730 by default) and one period's replica-hours are
// scaled by HoursPerMonth / period. Effective tokens per month = requests per
// month × compliant tokens per request. The cost per million effective tokens
// divides what is paid (every replica-hour, busy or idle) by what is
// delivered (the tokens the forecast demands), so it is higher than the
// operating point's own unit cost whenever replicas idle. Tokens per request
// are counted in the records at the operating point ([FromResult]: the
// confirmation's steady-state window), never a ratio of rates; a replica that
// carries less load is assumed to comply at least as often (the load curve's
// monotone fit assumes the same), so the effective output is not overstated.
//
// Payback: package cost's rule ([cost.Move]), so that plan and cost say the
// same: the move to the deployment with the higher one-time cost pays back
// only when its net savings per month at equal effective volume are positive.
//
// Comparison: the cheaper deployment is the one with the lower cost per
// million effective tokens (with equal compliant tokens per request that is
// also the lower monthly cost). Because replica counts are whole, costs are
// step functions of the forecast's level; [CompareDeployments] walks every step
// boundary of both deployments exactly (no sampling), so no reversal between
// grid points is missed, and proves where no further reversal is possible.
//
// Inputs: a forecast has exactly one source ([ForecastSource]: a flat peak, a
// profile file, or a trace's arrivals, [FromTrace]); two results are planned
// against each other only under the same objectives, and what package
// compare's check finds differs is stated ([ComparabilityOf]); one deployment
// or two make the plan's file ([NewDocument], [Document.Write]: plan.json).
//
// The planning is pure arithmetic: no clock and no I/O except the readers of a
// forecast ([ReadProfileCSV], [ReadProfileFile], [FromTrace]) and
// [Document.Write]; a rehearsal ([Try]) runs on the runner it is given.
package plan
