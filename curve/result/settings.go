package result

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/loadcurve/loadcurve/curve"
	"github.com/loadcurve/loadcurve/measure"
	"github.com/loadcurve/loadcurve/measure/records"
)

// Settings are everything a result is derived from besides its records: how tiers are
// summarised and how the curve is judged. They travel in the records header
// (records.Settings), so that report, compare and cost reproduce a result from records.jsonl
// alone.
type Settings struct {
	Measure measure.Options
	Params  curve.Params
}

// DefaultSettings are the settings of a result that states none.
func DefaultSettings() Settings {
	return Settings{Measure: measure.Options{MaxScheduleLag: measure.DefaultMaxScheduleLag}, Params: curve.DefaultParams()}
}

// Record returns the settings as the records header keeps them, every default filled in.
func (s Settings) Record() *records.Settings {
	m := s.Measure
	ps := m.Percentiles
	if ps == nil {
		ps = measure.DefaultPercentileList()
	}
	lag := m.MaxScheduleLag
	if lag <= 0 {
		lag = measure.DefaultMaxScheduleLag
	}
	p := s.Params.WithDefaults()
	return &records.Settings{
		Objectives: m.Objectives.String(), Percentiles: ps, PercentileMetrics: m.Metrics,
		WindowWarmupS: m.Warmup.Seconds(), WindowCooldownS: m.Cooldown.Seconds(),
		MaxScheduleLagMs: float64(lag) / 1e6,
		TargetShare:      p.TargetShare, Headroom: p.Headroom, Confidence: p.Confidence, PlateauGain: p.PlateauGain,
	}
}

// SettingsOf reads the settings a records header states. A header without settings (a file of
// an older loadcurve) gives the defaults and a note saying so; settings that do not parse are
// an error naming the field.
func SettingsOf(h records.Header) (Settings, []string, error) {
	rs := h.Settings
	if rs == nil {
		d := DefaultSettings()
		d.Measure.Unit = h.Unit
		return d, []string{"the records header states no settings (an older loadcurve wrote it): the default objectives (none), percentiles and analysis parameters are used; give them as options to change that"}, nil
	}
	var s Settings
	var errs []error
	s.Measure.Unit = h.Unit // the endpoint kind's, kept beside the settings
	if !h.Unit.Valid() {
		errs = append(errs, fmt.Errorf("unit %q: want %q or %q", h.Unit, records.UnitOutputTokens, records.UnitInputTokens))
	}
	if rs.Objectives != "" {
		obj, err := measure.ParseGoodput([]string{rs.Objectives})
		if err != nil {
			errs = append(errs, fmt.Errorf("settings.objectives: %w", err))
		}
		s.Measure.Objectives = obj
	}
	s.Measure.Percentiles = rs.Percentiles
	s.Measure.Metrics = rs.PercentileMetrics
	s.Measure.Warmup = seconds(rs.WindowWarmupS)
	s.Measure.Cooldown = seconds(rs.WindowCooldownS)
	s.Measure.MaxScheduleLag = time.Duration(math.Round(rs.MaxScheduleLagMs * 1e6))
	s.Params = curve.Params{TargetShare: rs.TargetShare, Headroom: rs.Headroom, Confidence: rs.Confidence, PlateauGain: rs.PlateauGain}
	for _, err := range s.Params.Validate() {
		errs = append(errs, fmt.Errorf("settings: %w", err))
	}
	return s, nil, errors.Join(errs...)
}

func seconds(s float64) time.Duration { return time.Duration(math.Round(s * 1e9)) }
