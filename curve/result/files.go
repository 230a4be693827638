package result

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"

	"github.com/loadcurve/loadcurve/curve"
	"github.com/loadcurve/loadcurve/measure"
	"github.com/loadcurve/loadcurve/measure/records"
)

// CurveFile is curve.json: a sweep's identity and settings (in Run), every tier's summary in
// the order they ran, the analysis, and the repetitions when there were several.
type CurveFile struct {
	Run           records.Header          `json:"run"`
	Complete      bool                    `json:"complete"`
	TargetSeconds float64                 `json:"target_seconds"`
	Tiers         []measure.Summary       `json:"tiers"`
	Analysis      curve.Analysis          `json:"analysis"`
	Repeats       []Repetition            `json:"repeats,omitempty"`
	Spread        *Spread                 `json:"spread,omitempty"`
	ServerMetrics map[int]json.RawMessage `json:"server_metrics,omitempty"`
	Notes         []string                `json:"notes,omitempty"`
}

// Curve returns the result as curve.json holds it.
func (r *Result) Curve() CurveFile {
	cf := CurveFile{Run: r.Header, Complete: r.Complete, TargetSeconds: r.TargetSeconds, Analysis: r.Analysis,
		Repeats: r.Repeats, Spread: r.Spread(), Notes: r.Notes}
	cf.Run.Settings = r.Settings.Record()
	for _, t := range r.Tiers {
		cf.Tiers = append(cf.Tiers, t.Summary)
		if t.Server != nil {
			if cf.ServerMetrics == nil {
				cf.ServerMetrics = map[int]json.RawMessage{}
			}
			cf.ServerMetrics[t.Tier.Tier] = t.Server
		}
	}
	return cf
}

// RunFile is summary.json of a run: the tier's summary with vLLM's keys at the top level, the
// run's identity and settings under "run", what the target's metrics endpoint said under
// "server_metrics", and the verdict of the tier against the target share under "verdict".
// Beside the summary's keys, the top level holds the rest of what vLLM's --save-result writes
// (VLLMIdentityKeys: date, backend, endpoint_type, label, model_id, tokenizer_id, num_prompts,
// max_output_tokens_per_s, max_concurrent_requests) and, as vLLM merges them, the --metadata
// pairs.
type RunFile struct {
	Run     records.Header
	Summary measure.Summary
	Server  json.RawMessage
	Verdict *curve.PointVerdict
	// Peak is vLLM's peak figures of the tier, nil when they were not computed (no records in
	// memory or on file): written null.
	Peak *Peak
}

// RunSummary returns a run's result as summary.json holds it (the first curve tier).
func (r *Result) RunSummary() (RunFile, error) {
	for _, t := range r.Tiers {
		if t.Tier.CurveRole() {
			f := RunFile{Run: r.Header, Summary: t.Summary, Server: t.Server}
			f.Run.Settings = r.Settings.Record()
			if pk, ok := r.Peaks[t.Tier.Tier]; ok {
				f.Peak = &pk
			}
			for i := range r.Analysis.Points {
				if r.Analysis.Points[i].Tier == t.Tier.Tier {
					f.Verdict = &r.Analysis.Points[i]
				}
			}
			return f, nil
		}
	}
	return RunFile{}, errors.New("the result has no tier")
}

// MarshalJSON flattens the summary's keys and adds the others beside them.
func (f RunFile) MarshalJSON() ([]byte, error) {
	sum, err := json.Marshal(f.Summary)
	if err != nil {
		return nil, err
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(sum, &m); err != nil {
		return nil, err
	}
	h, err := json.Marshal(f.Run)
	if err != nil {
		return nil, err
	}
	m["run"] = h
	for k, v := range f.vllmIdentity() {
		m[k] = v
	}
	for _, p := range f.Run.Metadata {
		if _, taken := m[p.Key]; !taken { // refused by --metadata; the pair stays under "run"
			v, err := json.Marshal(p.Value)
			if err != nil {
				return nil, err
			}
			m[p.Key] = v
		}
	}
	if f.Server != nil {
		m["server_metrics"] = f.Server
	}
	if f.Verdict != nil {
		v, err := json.Marshal(f.Verdict)
		if err != nil {
			return nil, err
		}
		m["verdict"] = v
	}
	return json.Marshal(m)
}

// UnmarshalJSON reads what MarshalJSON writes.
func (f *RunFile) UnmarshalJSON(b []byte) error {
	var parts struct {
		Run                   records.Header      `json:"run"`
		Server                json.RawMessage     `json:"server_metrics"`
		Verdict               *curve.PointVerdict `json:"verdict"`
		MaxOutputTokensPerS   *measure.Number     `json:"max_output_tokens_per_s"`
		MaxConcurrentRequests *int                `json:"max_concurrent_requests"`
	}
	if err := json.Unmarshal(b, &parts); err != nil {
		return fmt.Errorf("summary.json: %w", err)
	}
	var s measure.Summary
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	*f = RunFile{Run: parts.Run, Summary: s, Server: parts.Server, Verdict: parts.Verdict}
	if parts.MaxOutputTokensPerS != nil && parts.MaxConcurrentRequests != nil {
		f.Peak = &Peak{MaxOutputTokensPerS: float64(*parts.MaxOutputTokensPerS), MaxConcurrentRequests: *parts.MaxConcurrentRequests}
	}
	return nil
}

// ReadCurve reads curve.json.
func ReadCurve(path string) (CurveFile, error) {
	var cf CurveFile
	b, err := os.ReadFile(path)
	if err != nil {
		return cf, fmt.Errorf("read %s: %w", path, err)
	}
	if err := json.Unmarshal(b, &cf); err != nil {
		return cf, fmt.Errorf("%s: not a loadcurve curve.json: %w", path, err)
	}
	return cf, nil
}

// ReadRunFile reads a run's summary.json.
func ReadRunFile(path string) (RunFile, error) {
	var f RunFile
	b, err := os.ReadFile(path)
	if err != nil {
		return f, fmt.Errorf("read %s: %w", path, err)
	}
	if err := json.Unmarshal(b, &f); err != nil {
		return f, fmt.Errorf("%s: not a loadcurve summary.json: %w", path, err)
	}
	return f, nil
}
