package plan

import (
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/loadcurve/loadcurve/curve/compare"
	"github.com/loadcurve/loadcurve/curve/result"
	"github.com/loadcurve/loadcurve/workloads"
)

// Write writes the document to path as plan.json holds it (Encode).
func (d Document) Write(path string) error {
	b, err := d.Encode()
	if err != nil {
		return err
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		return fmt.Errorf("write plan.json: %w", err)
	}
	return nil
}

// ObjectivesDiffer refuses to plan two results judged under different objectives: their
// operating points answer different questions.
type ObjectivesDiffer struct {
	// A and B are the objectives of each result, as written (measure.Objectives.String).
	A, B string
}

func (e *ObjectivesDiffer) Error() string {
	return fmt.Sprintf("A and B were judged under different objectives (%q and %q): their operating points do not answer the same question", e.A, e.B)
}

// ComparabilityOf is what a plan of a against b may claim of how they were measured: package
// compare's check, as compare applies it (what must agree for two results to share a table),
// once both were judged under the same objectives (an *ObjectivesDiffer otherwise).
func ComparabilityOf(a, b *result.Result) (*Comparability, error) {
	oa, ob := a.Settings.Measure.Objectives.String(), b.Settings.Measure.Objectives.String()
	if oa != ob {
		return nil, &ObjectivesDiffer{A: oa, B: ob}
	}
	k := &Comparability{}
	for _, m := range compare.Check(compare.IdentityOf(a), compare.IdentityOf(b)) {
		k.Differences = append(k.Differences, m.String())
	}
	return k, nil
}

// ReadProfileFile reads a forecast's profile from a CSV file of time,rate lines
// (ReadProfileCSV, its problems named by the file's path and line).
func ReadProfileFile(path string) (Forecast, error) {
	fh, err := os.Open(path)
	if err != nil {
		return Forecast{}, err
	}
	defer fh.Close()
	return ReadProfileCSV(fh, path)
}

// ErrNotATrace is a workload, read as a forecast's trace, that holds no arrival times.
var ErrNotATrace = errors.New("not a trace (want azure:FILE, mooncake:FILE or FILE.csv)")

// TraceError is a trace that was read but makes no forecast (ErrNotATrace, or FromArrivals's
// refusal): "SPEC: reason".
type TraceError struct {
	Spec string
	Err  error
}

func (e *TraceError) Error() string { return e.Spec + ": " + e.Err.Error() }
func (e *TraceError) Unwrap() error { return e.Err }

// FromTrace is the forecast the arrivals of the trace spec (workloads.Load's spec: azure:FILE,
// mooncake:FILE, FILE.csv) make, counted in buckets of bucket (FromArrivals). A trace that could
// not be read returns workloads' error; one that makes no forecast, a *TraceError.
func FromTrace(spec string, bucket time.Duration) (Forecast, error) {
	_, tr, err := workloads.Load(spec, workloads.LoadOptions{TimeScale: 1})
	if err != nil {
		return Forecast{}, err
	}
	if tr == nil {
		return Forecast{}, &TraceError{Spec: spec, Err: ErrNotATrace}
	}
	f, err := FromArrivals(tr.Offsets, bucket)
	if err != nil {
		return Forecast{}, &TraceError{Spec: spec, Err: err}
	}
	return f, nil
}

// NewDocument is the plan of one deployment for the forecast f (Plan), or of two, A against B
// (CompareDeployments); any other number is refused.
func NewDocument(f Forecast, o Options, ds ...Deployment) (Document, error) {
	switch len(ds) {
	case 1:
		r, err := Plan(ds[0], f, o)
		if err != nil {
			return Document{}, err
		}
		return Document{Plans: []Result{r}}, nil
	case 2:
		x, err := CompareDeployments(ds[0], ds[1], f, o)
		if err != nil {
			return Document{}, err
		}
		return Document{Plans: []Result{x.A, x.B}, Comparison: &x}, nil
	}
	return Document{}, fmt.Errorf("a plan is of one deployment or of two, A against B; got %d", len(ds))
}
