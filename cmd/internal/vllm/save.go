package vllm

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/loadcurve/loadcurve/arrival"
	"github.com/loadcurve/loadcurve/curve/result"
	"github.com/loadcurve/loadcurve/curve/sweep"
)

// Save is what --save-result writes and where: vLLM's result file of a run (ReadSave).
type Save struct {
	dir, name string
	opts      result.VLLMOptions
	// outDir is the run's --out ("" when none): the file may not be one of its result's.
	outDir string
	// replace is --replace: an existing file of that name may be overwritten.
	replace bool
	// append is vLLM's --append-result: the result is appended to the file as one more line.
	append bool
	// requests keeps the per-request arrays as the run's records pass.
	requests *Tap
}

// path is where the file goes, named name: into --result-dir unless name is absolute, as in vLLM.
func (vr *Save) path(name string) string {
	if !filepath.IsAbs(name) && vr.dir != "" {
		return filepath.Join(vr.dir, name)
	}
	return name
}

// clash says why the file may not be written at path, "" when it may: it would be one of the
// files of the run's own result in --out (records.jsonl, summary.json, …), whatever --replace
// says; or it would overwrite an input of the run (the --config file, the --workload file).
func (vr *Save) clash(a Args, path string) string {
	if vr.outDir != "" && samePlace(filepath.Dir(path), vr.outDir) && result.IsFile(filepath.Base(path)) {
		return fmt.Sprintf("%s is a file of the run's own result in --out %s: it would overwrite what the run records there; choose another --result-filename or --result-dir",
			path, filepath.Clean(vr.outDir))
	}
	inputs := []string{a.String("config"), a.String("workload")}
	if _, file, ok := strings.Cut(a.String("workload"), ":"); ok {
		inputs = append(inputs, file)
	}
	for _, in := range inputs {
		if in != "" && sameExistingFile(path, in) {
			return fmt.Sprintf("%s is the run's input %s: choose another --result-filename or --result-dir", path, in)
		}
	}
	return ""
}

// CheckPath refuses, before any load is sent, a --result-filename that would overwrite the
// run's own result or an input, or an existing file without --replace. vLLM's default name is
// known only once the run is done: write checks it then.
func (vr *Save) CheckPath(a Args, outDir string, replace bool) error {
	if vr == nil {
		return nil
	}
	vr.outDir, vr.replace = outDir, replace
	if vr.name == "" {
		return nil
	}
	path := vr.path(vr.name)
	if why := vr.clash(a, path); why != "" {
		return fmt.Errorf("--result-filename: %s", why)
	}
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return fmt.Errorf("--result-filename: %s is a directory: name a file", path)
	} else if err == nil && !replace && !vr.append {
		if st.IsDir() {
			return fmt.Errorf("--result-filename: %s is a directory: name a file", path)
		}
		return fmt.Errorf("--result-filename: %s already exists: choose another name, or pass --replace to overwrite it", path)
	}
	return nil
}

// samePlace reports whether a and b name the same directory (b need not exist yet).
func samePlace(a, b string) bool {
	if sameExistingFile(a, b) {
		return true
	}
	aa, errA := filepath.Abs(a)
	ab, errB := filepath.Abs(b)
	return errA == nil && errB == nil && aa == ab
}

// sameExistingFile reports whether a and b name the same existing file or directory.
func sameExistingFile(a, b string) bool {
	sa, errA := os.Stat(a)
	sb, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(sa, sb)
}

// ReadSave reads --save-result, --result-dir and --result-filename (nil: none asked).
// vLLM's defaults choose the statistics unless --percentile-metrics or --metric-percentiles
// were given.
func ReadSave(a Args, notes io.Writer, spec arrival.Spec, s result.Settings) (*Save, error) {
	appendTo := a.Given("append-result") && a.Bool("append-result")
	if !a.Bool("save-result") && !a.Given("result-dir") && !a.Given("result-filename") && !appendTo {
		if a.Given("save-detailed") {
			fmt.Fprintln(notes, "loadcurve: --save-detailed: no effect without --save-result (as in vLLM)")
		}
		return nil, nil
	}
	vr := &Save{dir: a.String("result-dir"), name: a.String("result-filename"), append: appendTo}
	vr.opts.Detailed = a.Given("save-detailed") && a.Bool("save-detailed")
	if tok, _, err := Tokenizer(a); err == nil && tok != nil {
		vr.opts.TokenizerID = a.String("tokenizer") // vLLM's tokenizer_id: the name the tokenizer was given by
		if !a.Given("tokenizer") {
			vr.opts.TokenizerID = a.String("model")
		}
	}
	if a.Given("backend") {
		vr.opts.Backend = a.String("backend")
	}
	if a.Given("result-filename") && (vr.name == "" || strings.HasSuffix(vr.name, "/")) {
		return nil, fmt.Errorf("--result-filename must name a file, got %q", vr.name)
	}
	if a.Given("percentile-metrics") {
		for _, m := range s.Measure.Metrics {
			if slices.Contains(result.VLLMMetrics, m) {
				vr.opts.Metrics = append(vr.opts.Metrics, m)
			}
		}
		if vr.opts.Metrics == nil {
			return nil, fmt.Errorf("--save-result: --percentile-metrics %s names none of the metrics vLLM reports (%s)",
				strings.Join(s.Measure.Metrics, ","), strings.Join(result.VLLMMetrics, ","))
		}
	}
	if a.Given("metric-percentiles") {
		vr.opts.Percentiles = s.Measure.Percentiles
	}
	if spec.Ramp != arrival.RampNone {
		vr.opts.Ramp = &result.VLLMRamp{Strategy: spec.Ramp.String(), Start: spec.RampStart, End: spec.RampEnd}
	}
	return vr, nil
}

// Write writes the vLLM-layout file of a run's result: into --result-dir (created if need be),
// under --result-filename or vLLM's default name; an absolute --result-filename stands alone,
// as in vLLM.
func (vr *Save) Write(res *result.Result, a Args, notes io.Writer) error {
	if vr == nil {
		return nil
	}
	if vr.requests != nil {
		vr.opts.PerRequest = vr.requests.Arrays()
	}
	b, err := res.VLLMResult(vr.opts)
	if err != nil {
		return fmt.Errorf("--save-result: %w", err)
	}
	name := vr.name
	if name == "" {
		if name, err = res.VLLMFileName(vr.opts.Ramp); err != nil {
			return fmt.Errorf("--save-result: %w", err)
		}
	}
	path := vr.path(name)
	if why := vr.clash(a, path); why != "" {
		return fmt.Errorf("--save-result: not written: %s", why)
	}
	if dir := filepath.Dir(path); dir != "." {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("--save-result: %w", err)
		}
	}
	flags := os.O_WRONLY | os.O_CREATE | os.O_TRUNC
	switch {
	case vr.append:
		// vLLM's --append-result: one JSON object a line, a newline before each but the first.
		flags = os.O_WRONLY | os.O_CREATE | os.O_APPEND
		b = bytes.TrimSuffix(b, []byte("\n"))
		if st, err := os.Stat(path); err == nil && st.Size() > 0 {
			b = append([]byte("\n"), b...)
		}
	case !vr.replace:
		flags |= os.O_EXCL // checked before the run when named; vLLM's default name only now
	}
	f, err := os.OpenFile(path, flags, 0o644)
	if errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("--save-result: %s already exists: not overwritten (the run's own result is complete; pass --replace to overwrite such a file, or give --result-filename)", path)
	}
	if err != nil {
		return fmt.Errorf("--save-result: %w", err)
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return fmt.Errorf("--save-result: %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("--save-result: %s: %w", path, err)
	}
	fmt.Fprintf(notes, "loadcurve: wrote the result in vLLM's layout to %s\n", path)
	return nil
}

// Tap returns the executor option that keeps the per-request arrays of the result file (none
// when no file is asked for: vr nil).
func (vr *Save) Tap() func(*sweep.Executor) {
	return func(x *sweep.Executor) {
		if vr == nil {
			return
		}
		vr.requests = NewTap(x.Runner, vr.opts.Detailed)
		x.Runner = vr.requests
	}
}
