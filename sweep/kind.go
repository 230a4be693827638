package sweep

import (
	"github.com/loadcurve/loadcurve/records"
	"github.com/loadcurve/loadcurve/result"
)

// Kind is what a result answers, by the command that made it: one tier of one schedule (a
// run), or a sweep of tiers. Whatever depends on which it is asks its Kind, never the command.
type Kind uint8

// The kinds of result.
const (
	// KindSweep: a sweep of tiers, answered by its curve's analysis (the capacity and the
	// operating point), written as curve.json with every tier's summary beside it.
	KindSweep Kind = iota
	// KindRun: one tier of one schedule, answered by that tier's summary (summary.json, vLLM's
	// layout), judged against the target with no curve to fit.
	KindRun
)

// KindOf is the kind of the result a records file holds, by its header's command.
func KindOf(h records.Header) Kind {
	if h.Command == records.CommandRun {
		return KindRun
	}
	return KindSweep
}

// madeBySweep reports whether a records file's header says the sweep command wrote it: a
// file of another command, or of none, is not a sweep's to resume.
func madeBySweep(h records.Header) bool { return h.Command == records.CommandSweep }

// Kind is the result's kind.
func (r *Result) Kind() Kind { return KindOf(r.Header) }

// String names the kind: "run" or "sweep".
func (k Kind) String() string {
	if k == KindRun {
		return "run"
	}
	return "sweep"
}

// OneTier reports whether the result is answered by its one tier (a run) rather than by the
// analysis of a curve (a sweep): its request set is that tier's, and its figures are the
// tier's own.
func (k Kind) OneTier() bool { return k == KindRun }

// Probes reports whether a burst (a tier at rate inf) of such a result is a probe of the
// saturation rate, off the curve (a sweep's), rather than the tier the result is about (a
// run's).
func (k Kind) Probes() bool { return k == KindSweep }

// AnswerName is the file that holds the answer of such a result: result.SummaryName or result.CurveName.
func (k Kind) AnswerName() string {
	if k == KindRun {
		return result.SummaryName
	}
	return result.CurveName
}

// Answer is the document AnswerName holds: the run's summary (RunSummary) or the sweep's curve
// (Curve).
func (r *Result) Answer() (any, error) {
	if r.Kind().OneTier() {
		return r.RunSummary()
	}
	return r.Curve(), nil
}
