package sweep

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/loadcurve/loadcurve/curve"
	"github.com/loadcurve/loadcurve/measure"
	"github.com/loadcurve/loadcurve/records"
)

// Names of the files of a result directory.
const (
	RecordsName = "records.jsonl"
	CurveName   = "curve.json"
	SummaryName = "summary.json"
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

// WriteJSON writes v as indented JSON to dir/name, through a temporary file renamed into place.
func WriteJSON(dir, name string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("encode %s: %w", name, err)
	}
	path := filepath.Join(dir, name)
	tmp := filepath.Join(dir, "."+name+".tmp")
	if err := os.WriteFile(tmp, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
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

// ResultFiles are the names a result directory may hold (the records, the derived files, the
// rendered ones): what --out replaces as a whole, and what marks a directory as holding a result.
var ResultFiles = []string{RecordsName, CurveName, SummaryName, "curve.csv", "report.html", "merge.json", ScenarioName}

// ScenarioName is the resolved scenario a run, sweep or comparison writes with its result: every
// flag it ran with, as YAML that --config reads back.
const ScenarioName = "scenario.yaml"

// HoldsResult reports whether dir holds a loadcurve result (any of ResultFiles, or a tier
// summary or plot written by one).
func HoldsResult(dir string) (bool, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	for _, e := range entries {
		if isResultFile(e.Name()) {
			return true, nil
		}
	}
	return false, nil
}

// ClearResult removes every file of a result from dir (and nothing else), so that a new result
// written there is not mixed with pieces of an old one; keep names a file to leave in place (the
// records file a report derives from), "" for none.
func ClearResult(dir, keep string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if keep != "" && sameFile(filepath.Join(dir, e.Name()), keep) {
			continue
		}
		if !e.IsDir() && isResultFile(e.Name()) {
			if err := os.Remove(filepath.Join(dir, e.Name())); err != nil {
				return err
			}
		}
	}
	return nil
}

// IsResultFile reports whether a file of this name in a result directory belongs to the
// result (one of ResultFiles, a tier summary, a plot, a time series): what a run writes there
// and what --replace clears.
func IsResultFile(name string) bool { return isResultFile(name) }

func isResultFile(name string) bool {
	for _, f := range ResultFiles {
		if name == f {
			return true
		}
	}
	for _, pattern := range []string{"summary_tier*.json", "throughput.*", "latency_*.*", "share.*", "compare.*", "timeseries*", "interrupted_tier*.jsonl"} {
		if m, _ := filepath.Match(pattern, name); m && (pattern[len(pattern)-1] != '*' || plotExt(name)) {
			return true
		}
	}
	return false
}

func plotExt(name string) bool {
	switch filepath.Ext(name) {
	case ".svg", ".png", ".json", ".csv":
		return true
	}
	return false
}

// sameFile reports whether a and b name the same existing file.
func sameFile(a, b string) bool {
	fa, errA := os.Stat(a)
	fb, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(fa, fb)
}
