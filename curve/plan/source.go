package plan

import (
	"errors"
	"time"

	"github.com/loadcurve/loadcurve/internal/field"
)

// The inputs a ForecastSource names in its field errors.
const (
	FieldPeak         = "peak"
	FieldProfile      = "profile"
	FieldProfileTrace = "profile-trace"
)

// The refusals of a ForecastSource that give no forecast, or more than one.
var (
	ErrNoForecast    = errors.New("no forecast given")
	ErrManyForecasts = errors.New("more than one forecast given")
)

// ForecastSource is where a plan's forecast comes from: exactly one of a flat peak, a profile
// file (ReadProfileFile) or a trace (FromTrace, counted in buckets of Bucket). Nil: not given (a
// profile given as "" counts as given, and gives no forecast).
type ForecastSource struct {
	Peak    *float64
	Profile *string
	Trace   *string
	Bucket  time.Duration
}

// Read returns the forecast. Every problem is a *field.Error naming the input (FieldPeak,
// FieldProfile, FieldProfileTrace): none given (ErrNoForecast) and more than one
// (ErrManyForecasts) are sentences naming the three, and so is a trace that was read but makes
// no forecast (a *TraceError).
func (s ForecastSource) Read() (Forecast, error) {
	given := 0
	for _, set := range []bool{s.Peak != nil, s.Profile != nil, s.Trace != nil} {
		if set {
			given++
		}
	}
	switch {
	case given > 1:
		return Forecast{}, refusal{field.Sentencef(FieldPeak, "%v, %v and %v: give one forecast",
			field.Ref(FieldPeak), field.Ref(FieldProfile), field.Ref(FieldProfileTrace)), ErrManyForecasts}
	case s.Trace != nil:
		f, err := FromTrace(*s.Trace, s.Bucket)
		var te *TraceError
		switch {
		case errors.As(err, &te):
			err = field.Sentencef(FieldProfileTrace, "%v %w", field.Ref(FieldProfileTrace), err)
		case err != nil:
			err = field.Errorf(FieldProfileTrace, "%w", err)
		}
		return f, err
	case s.Profile != nil && *s.Profile != "":
		f, err := ReadProfileFile(*s.Profile)
		if err != nil {
			return Forecast{}, field.Errorf(FieldProfile, "%w", err)
		}
		return f, nil
	case s.Peak != nil:
		if !(*s.Peak > 0) {
			return Forecast{}, field.Errorf(FieldPeak, "a forecast peak in req/s > 0, got %v", *s.Peak)
		}
		return PeakForecast(*s.Peak), nil
	}
	return Forecast{}, refusal{field.Sentencef(FieldPeak, "plan: give the forecast: %v RATE, %v FILE.csv or %v TRACE",
		field.Ref(FieldPeak), field.Ref(FieldProfile), field.Ref(FieldProfileTrace)), ErrNoForecast}
}

// refusal is a field error that is also one of the sentinel errors a caller may test for
// (errors.Is): it reads as the field error.
type refusal struct {
	error
	is error
}

func (r refusal) Unwrap() []error { return []error{r.error, r.is} }
