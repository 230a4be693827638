package curve

import (
	"math"
	"strconv"

	"github.com/loadcurve/loadcurve/internal/field"
)

// Documented defaults of [Params].
const (
	// DefaultTargetShare is the compliant request share a tier must reach:
	// 99 % of issued requests ok, within every objective and passing the
	// quality check.
	DefaultTargetShare = 0.99
	// DefaultHeadroom is the fraction of capacity kept in reserve for bursts
	// and recovery: the operating point is capacity·(1 − 0.2). Headroom is a
	// business input with no universal value (the seed article, section 4);
	// 20 % is a neutral starting point that every analysis echoes, not a
	// recommendation.
	DefaultHeadroom = 0.2
	// DefaultPlateauGain: raw throughput is on its plateau once doubling the
	// offered load gains less than 5 % more raw output.
	DefaultPlateauGain = 0.05
	// DefaultConfidence is the two-sided confidence of the Wilson intervals.
	DefaultConfidence = 0.95
)

// Params are the judgements an analysis rests on. [Analyze] echoes the
// values it used in [Analysis.Params].
//
// A zero TargetShare, PlateauGain or Confidence means its default (none of
// them can be 0). A zero Headroom is honoured as "no headroom", so a caller
// that wants the default headroom passes DefaultHeadroom or starts from
// [DefaultParams].
type Params struct {
	// TargetShare is the compliant request share a tier must reach, in (0, 1].
	TargetShare float64 `json:"target_share"`
	// Headroom is the fraction of capacity kept in reserve, in [0, 1): the
	// operating point is capacity·(1 − Headroom).
	Headroom float64 `json:"headroom"`
	// PlateauGain is the relative raw-throughput gain per doubling of offered
	// load below which the curve is on its plateau, in (0, 1).
	PlateauGain float64 `json:"plateau_gain"`
	// Confidence is the two-sided confidence of the Wilson intervals, in (0, 1).
	Confidence float64 `json:"confidence"`
}

// DefaultParams returns every default, headroom included.
func DefaultParams() Params {
	return Params{
		TargetShare: DefaultTargetShare,
		Headroom:    DefaultHeadroom,
		PlateauGain: DefaultPlateauGain,
		Confidence:  DefaultConfidence,
	}
}

// WithDefaults fills a zero TargetShare, PlateauGain or Confidence with its
// default. Headroom is left as it is.
func (p Params) WithDefaults() Params {
	if p.TargetShare == 0 {
		p.TargetShare = DefaultTargetShare
	}
	if p.PlateauGain == 0 {
		p.PlateauGain = DefaultPlateauGain
	}
	if p.Confidence == 0 {
		p.Confidence = DefaultConfidence
	}
	return p
}

// Validate returns every invalid field at once (nil when all are valid), each a field.Error
// named as the command line names the parameter (target-share, headroom, plateau-gain,
// confidence). A zero TargetShare, PlateauGain or Confidence takes its default and is valid;
// a TargetShare given as zero is the caller's to refuse (it cannot tell "zero" from "unset").
func (p Params) Validate() []error {
	p = p.WithDefaults()
	var errs []error
	if !(p.TargetShare > 0 && p.TargetShare <= 1) {
		errs = append(errs, field.Errorf("target-share", "%s: must be in (0, 1], the share of issued requests that must be compliant (e.g. %g)",
			fmtParam(p.TargetShare), DefaultTargetShare))
	}
	if !(p.Headroom >= 0 && p.Headroom < 1) {
		errs = append(errs, field.Errorf("headroom", "%s: must be in [0, 1), the fraction of capacity kept in reserve (e.g. %g)",
			fmtParam(p.Headroom), DefaultHeadroom))
	}
	if !(p.PlateauGain > 0 && p.PlateauGain < 1) {
		errs = append(errs, field.Errorf("plateau-gain", "%s: must be in (0, 1), the raw-throughput gain per doubling of load below which the curve is flat (e.g. %g)",
			fmtParam(p.PlateauGain), DefaultPlateauGain))
	}
	if !(p.Confidence > 0 && p.Confidence < 1) {
		errs = append(errs, field.Errorf("confidence", "%s: must be in (0, 1), the confidence of the compliance intervals (e.g. %g)",
			fmtParam(p.Confidence), DefaultConfidence))
	}
	return errs
}

// resolve returns the parameters an analysis uses: defaults for zero fields,
// and the default in place of every invalid field, with a note saying so.
func (p Params) resolve() (Params, []string) {
	q := p.WithDefaults()
	var notes []string
	for _, err := range q.Validate() {
		notes = append(notes, "invalid parameter, the default is used instead: "+err.Error())
	}
	if !(q.TargetShare > 0 && q.TargetShare <= 1) {
		q.TargetShare = DefaultTargetShare
	}
	if !(q.Headroom >= 0 && q.Headroom < 1) {
		q.Headroom = DefaultHeadroom
	}
	if !(q.PlateauGain > 0 && q.PlateauGain < 1) {
		q.PlateauGain = DefaultPlateauGain
	}
	if !(q.Confidence > 0 && q.Confidence < 1) {
		q.Confidence = DefaultConfidence
	}
	return q, notes
}

func fmtParam(v float64) string {
	if math.IsNaN(v) {
		return "NaN"
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}
