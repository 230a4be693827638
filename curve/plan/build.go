package plan

import (
	"fmt"

	"github.com/loadcurve/loadcurve/curve/result"
	"github.com/loadcurve/loadcurve/internal/field"
)

// Input is one sweep result a plan reads: the deployment's side (Sides), the directory it was
// read from, and the result rebuilt from its records; Loaded is nil when it could not be read
// (the reader's error is the caller's): the side's own settings are still checked, and no
// document is made.
type Input struct {
	Side, Dir string
	Loaded    *result.Loaded
}

// Deployments are the one or two deployments a plan compares, as the settings say: each
// input's verified operating point (FromResult, CheckVerified) at its costs (Costs), two inputs
// checked comparable (CheckComparable: the findings). Every problem is returned at once, each
// naming its side; the warnings, texts that may refer to inputs (field.Ref), go to warn, and
// the comparability's differences, a line each, to detail before the judgement on them.
func (s Settings) Deployments(ins []Input, warn, detail func(string)) ([]Deployment, *Comparability, []error) {
	var errs []error
	var ds []Deployment
	for i, in := range ins {
		perHour, oneTime, err := s.Costs(i)
		if err != nil {
			errs = append(errs, err)
		}
		if in.Loaded == nil {
			continue
		}
		// The result's axis says what its rates count: a plan refuses sessions and users.
		d, verified, err := FromResult(in.Side, in.Loaded.Result, in.Loaded.File)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s (%s): %w", in.Side, in.Dir, err))
			continue
		}
		warning, err := s.CheckVerified(in.Side, in.Dir, d, verified)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		note(warn, warning)
		d.CostPerHour, d.OneTimeCost = perHour, oneTime
		ds = append(ds, d)
	}
	var k *Comparability
	if len(errs) == 0 && len(ds) == 2 { // both read and planned: only then are they compared
		var warning string
		var err error
		k, warning, err = s.CheckComparable(ins[0].Loaded.Result, ins[1].Loaded.Result, ins[0].Dir, ins[1].Dir)
		if k != nil {
			for _, d := range k.Differences {
				detail(d)
			}
		}
		if err != nil {
			errs = append(errs, err)
		}
		note(warn, warning)
	}
	if len(ds) < len(ins) {
		return nil, nil, errs
	}
	return ds, k, errs
}

// Document plans the forecast f for the deployments (Deployments, with their comparability k)
// under the settings (NewDocument); the forecast's warnings go to warn.
func (s Settings) Document(f Forecast, ds []Deployment, k *Comparability, warn func(string)) (Document, error) {
	for _, w := range f.Warnings {
		warn(w)
	}
	opts := s.Options(k)
	for _, err := range opts.Validate() {
		if fe := field.Of(err); fe != nil && fe.Name == FieldCurrency {
			return Document{}, err
		}
	}
	return NewDocument(f, opts, ds...)
}

func note(warn func(string), warning string) {
	if warning != "" {
		warn(warning)
	}
}
