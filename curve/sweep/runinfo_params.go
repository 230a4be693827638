package sweep

import (
	"github.com/loadcurve/loadcurve/internal/field"
	"github.com/loadcurve/loadcurve/internal/param"
	"github.com/loadcurve/loadcurve/measure/records"
)

// Names of what a run is called and carries along.
const (
	FieldLabel    = "label"
	FieldMetadata = "metadata"
)

// RunNaming is what the user calls a run and carries along with it, as given: a label
// (CheckName) and KEY=VALUE pairs (ParseMetadata).
type RunNaming struct {
	Label    string
	Metadata []string
}

// Params declares the settings, bound to r.
func (r *RunNaming) Params() []param.Param {
	return []param.Param{
		param.String(FieldLabel, &r.Label, "a name for the run, kept in records.jsonl and written into summary.json and curve.json (vLLM's --label)"),
		param.Strings(FieldMetadata, &r.Metadata, "KEY=VALUE kept with the run (repeatable; vLLM's --metadata): in records.jsonl, at the top level of summary.json, under run.metadata in curve.json"),
	}
}

// Check returns the metadata the pairs give (ParseMetadata) and every problem of the label
// (CheckName) and of the pairs, each a sentence that names its input.
func (r RunNaming) Check() (records.Metadata, []error) {
	var errs []error
	if why := CheckName(r.Label); why != "" {
		errs = append(errs, field.Sentencef(FieldLabel, "%v: %s", field.Ref(FieldLabel), why))
	}
	md, bad := ParseMetadata(r.Metadata)
	for _, e := range bad {
		errs = append(errs, field.Sentencef(FieldMetadata, "%v %w", field.Ref(FieldMetadata), e))
	}
	return md, errs
}
