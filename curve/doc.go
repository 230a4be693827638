// Package curve judges a sweep: from the tiers' summaries ([measure.Summary],
// each with its steady state) it gives every tier a verdict on its compliant
// request share (meets, fails, uncertain, insufficient or excluded, from a
// Wilson interval on the tier's effective sample), fits the share against the
// realised rate (isotonic regression over all tiers), and from the fit
// derives the capacity at the objective with its interval, the knee, the
// plateau, and the operating point below the capacity, with the tier that
// confirmed it. docs/DECISIONS.md states every rule.
//
// The package is pure computation: no I/O and no clock. Every judgement
// [Analyze] makes is also written out in words, with the numbers behind it,
// in [Analysis.Notes], and the parameters that produced it are echoed in
// [Analysis.Params]. Planning tiers and running them is package sweep's job.
//
// Rates are requests per second. Compliant shares are request shares
// (compliant requests / requests issued, METRICS.md); they are never mixed
// with token shares.
package curve
