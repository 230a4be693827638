package result

import (
	"strconv"
	"strings"
	"time"

	"github.com/loadcurve/loadcurve/curve"
	"github.com/loadcurve/loadcurve/internal/field"
	"github.com/loadcurve/loadcurve/internal/param"
	"github.com/loadcurve/loadcurve/measure"
)

// Names of the analysis settings that have no Field constant elsewhere: curve's parameters
// are named as curve.Params.Validate names them.
const (
	FieldMaxScheduleLag = "schedule-lag floor"
	FieldTargetShare    = "target-share"
	FieldConfidence     = "confidence"
	FieldHeadroom       = "headroom"
	FieldWarmup         = "warm-up window"
	FieldCooldownWindow = "cool-down window"
	FieldBounded        = "bounded memory"
)

// Inputs declares the analysis settings but the objectives (their params; Params is curve's),
// bound to s: the percentiles and the metrics read as measure.ParsePercentiles and
// ParsePercentileMetrics read them, the windows, the schedule-lag floor, and curve's target
// share, confidence and headroom. Applied over a result's settings (OrDefaults), the settings
// not given keep the result's values; read them back with Check.
func (s *Settings) Inputs() []param.Param {
	m, p := &s.Measure, &s.Params
	return []param.Param{
		param.Var(measure.FieldPercentiles, percentilesText{&m.Percentiles}, "percentiles to report"),
		param.Var(measure.FieldPercentileMetrics, metricsText{&m.Metrics}, "metrics to report statistics for, comma-separated among "+strings.Join(measure.MetricNames(), ",")).
			Default("all; vLLM's is ttft,tpot,itl"),
		param.Duration(FieldWarmup, &m.Warmup, "a fixed steady-state window: leave out of the metrics the requests planned in the tier's first DURATION, e.g. 10s").
			Default("sized from the time in system for the decisions, none for vLLM's keys"),
		param.Duration(FieldCooldownWindow, &m.Cooldown, "a fixed steady-state window: leave out of the metrics the requests planned in the tier's last DURATION, e.g. 5s").Default("none"),
		param.Duration(FieldMaxScheduleLag, &m.MaxScheduleLag, "schedule-lag p99 below which the client never counts; above it, a tier is client_bound when the lag made its arrivals burstier than planned or entered what was measured"),
		param.Float(FieldTargetShare, &p.TargetShare, "compliant request share a rate must reach to meet the objectives, in (0,1]"),
		param.Float(FieldConfidence, &p.Confidence, "confidence of the verdicts and intervals, in (0,1)"),
		param.Float(FieldHeadroom, &p.Headroom, "operating point = capacity × (1 − headroom); a business choice, in [0,1)"),
	}
}

// OrDefaults returns s with the defaults where a result left a setting unstated: the
// percentiles, the schedule-lag floor, the target share and the confidence, and the headroom
// when it states no curve parameter at all (a headroom of zero is a choice).
func (s Settings) OrDefaults() Settings {
	if s.Measure.Percentiles == nil {
		s.Measure.Percentiles = measure.DefaultPercentileList()
	}
	if s.Measure.MaxScheduleLag <= 0 {
		s.Measure.MaxScheduleLag = measure.DefaultMaxScheduleLag
	}
	if s.Params == (curve.Params{}) {
		s.Params.Headroom = curve.DefaultHeadroom
	}
	if s.Params.TargetShare == 0 {
		s.Params.TargetShare = curve.DefaultTargetShare
	}
	if s.Params.Confidence == 0 {
		s.Params.Confidence = curve.DefaultConfidence
	}
	return s
}

// Check returns the settings the params (Inputs, applied) read, curve's defaults filled in
// (curve.Params.WithDefaults), and every problem: windows >= 0, a schedule-lag floor > 0, a
// target share and a confidence given as zero (curve's zero is its default), curve's ranges.
func (s Settings) Check(ps []param.Param) (Settings, []error) {
	var errs []error
	for _, w := range []struct {
		name string
		d    *time.Duration
	}{{FieldWarmup, &s.Measure.Warmup}, {FieldCooldownWindow, &s.Measure.Cooldown}} {
		if *w.d < 0 {
			errs = append(errs, field.Errorf(w.name, "must be >= 0, got %v", *w.d))
		}
	}
	if s.Measure.MaxScheduleLag <= 0 {
		errs = append(errs, field.Errorf(FieldMaxScheduleLag, "must be > 0, got %v", s.Measure.MaxScheduleLag))
	}
	if s.Params.TargetShare == 0 && param.IsGiven(ps, FieldTargetShare) {
		errs = append(errs, field.Errorf(FieldTargetShare, "must be in (0, 1], got 0"))
	}
	if s.Params.Confidence == 0 && param.IsGiven(ps, FieldConfidence) {
		errs = append(errs, field.Errorf(FieldConfidence, "must be in (0, 1), got 0"))
	}
	s.Params = s.Params.WithDefaults()
	return s, append(errs, s.Params.Validate()...)
}

type percentilesText struct{ p *[]float64 }

func (t percentilesText) String() string {
	if *t.p == nil {
		return measure.DefaultPercentiles
	}
	parts := make([]string, len(*t.p))
	for i, v := range *t.p {
		parts[i] = strconv.FormatFloat(v, 'g', -1, 64)
	}
	return strings.Join(parts, ",")
}
func (t percentilesText) Set(s string) (err error) {
	*t.p, err = measure.ParsePercentiles(s)
	return err
}

type metricsText struct{ p *[]string }

func (t metricsText) String() string { return strings.Join(*t.p, ",") }
func (t metricsText) Set(s string) (err error) {
	*t.p, err = measure.ParsePercentileMetrics(s)
	return err
}

// CheckBounded returns an error when summaries computed as records arrive (bounded memory)
// cannot apply the settings: a cool-down window ends at a time known only at the tier's end.
func CheckBounded(m measure.Options) error {
	if m.Cooldown > 0 {
		return field.Errorf(FieldBounded, "cannot apply %v: the window's end depends on the tier's length, known only at its end (run without it, then `loadcurve report %v` on the records)",
			field.Ref(FieldCooldownWindow), field.Ref(FieldCooldownWindow))
	}
	return nil
}
