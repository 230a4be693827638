package result

import (
	"github.com/loadcurve/loadcurve/measure/records"
)

// Shape is what a result answers, by the command that made it: one tier of one schedule (a
// run), or a sweep of tiers. Whatever depends on which it is asks its Shape, never the command.
type Shape uint8

// The shapes of result.
const (
	// ShapeSweep: a sweep of tiers, answered by its curve's analysis (the capacity and the
	// operating point), written as curve.json with every tier's summary beside it.
	ShapeSweep Shape = iota
	// ShapeRun: one tier of one schedule, answered by that tier's summary (summary.json, vLLM's
	// layout), judged against the target with no curve to fit.
	ShapeRun
)

// ShapeOf is the shape of the result a records file holds, by its header's command.
func ShapeOf(h records.Header) Shape {
	if h.Command == records.CommandRun {
		return ShapeRun
	}
	return ShapeSweep
}

// Shape is the result's shape.
func (r *Result) Shape() Shape { return ShapeOf(r.Header) }

// String names the shape: "run" or "sweep".
func (k Shape) String() string {
	if k == ShapeRun {
		return "run"
	}
	return "sweep"
}

// OneTier reports whether the result is answered by its one tier (a run) rather than by the
// analysis of a curve (a sweep): its request set is that tier's, and its figures are the
// tier's own.
func (k Shape) OneTier() bool { return k == ShapeRun }

// Probes reports whether a burst (a tier at rate inf) of such a result is a probe of the
// saturation rate, off the curve (a sweep's), rather than the tier the result is about (a
// run's).
func (k Shape) Probes() bool { return k == ShapeSweep }

// AnswerName is the file that holds the answer of such a result: SummaryName or CurveName.
func (k Shape) AnswerName() string {
	if k == ShapeRun {
		return SummaryName
	}
	return CurveName
}

// Answer is the document AnswerName holds: the run's summary (RunSummary) or the sweep's curve
// (Curve).
func (r *Result) Answer() (any, error) {
	if r.Shape().OneTier() {
		return r.RunSummary()
	}
	return r.Curve(), nil
}
