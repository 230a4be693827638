package main

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/loadcurve/loadcurve/arrival"
	"github.com/loadcurve/loadcurve/cmd/internal/vllm"
	"github.com/loadcurve/loadcurve/records"
	"github.com/loadcurve/loadcurve/result"
	"github.com/loadcurve/loadcurve/sweep"
	"github.com/loadcurve/loadcurve/workloads"
)

func runCommand() *cli.Command {
	return &cli.Command{
		Name:      "run",
		Usage:     "send one tier of load to a target and summarise it",
		ArgsUsage: " ",
		Description: "Sends --num-requests requests (or those planned within --duration) on a seeded arrival schedule,\n" +
			"streams every response and prints TTFT, TPOT, ITL, E2EL, client queue time, goodput and compliant\n" +
			"throughput, and the tier's steady state judged against --target-share. Without --base-url it starts\n" +
			"the embedded simulated deployment.",
		Flags: withVLLMFlags("run", concat(targetFlags(), loadFlags("4", 200), clientFlags(), shardFlags(), sourceFlags(), objectiveFlags(), outputFlags(), runInfoFlags(),
			[]cli.Flag{boundedMemoryFlag("summarise on the fly and keep no records in memory, for long runs")},
			vllmResultFlags(), simFlags("sim-"), []cli.Flag{scenarioFlag()})),
		Before: applyScenario,
		Action: runAction,
	}
}

func runAction(c *cli.Context) error {
	spec, errs := arrivalSpec(c)
	n, d, e := loadCount(c)
	errs = append(errs, e...)
	lc, e := readLoadCommand(c, sweep.DefaultSettings())
	errs = append(errs, e...)
	if d > 0 && math.IsInf(spec.Rate, 1) && spec.Ramp == arrival.RampNone {
		errs = append(errs, fmt.Errorf("--duration needs a finite --request-rate (with inf every request is planned at once): use --num-requests"))
	}
	if len(errs) > 0 {
		return usageErrors(errs)
	}
	var sch arrival.Schedule = spec
	src := lc.source
	switch {
	case src.Trace != nil && d > 0:
		return usagef("--duration does not apply to a trace replay: the trace is the schedule (cut it with --num-requests, stretch it with --trace-time-scale)")
	case src.Trace != nil:
		replay, err := arrival.NewReplay(src.TraceOffsets(), src.Trace.Source)
		if err != nil {
			return usagef("--workload %s: %v", src.Spec, err)
		}
		sch = replay
		if !c.IsSet("num-requests") {
			n = 0 // the whole trace
		}
		fmt.Fprintln(c.App.ErrWriter, "loadcurve: the trace is the schedule: --request-rate and --burstiness do not apply")
	case !src.Generated() && !c.IsSet("num-requests") && d == 0:
		n = src.Size() // every request of the file, once
	}
	cfg := sweep.Config{Schedule: sch, Requests: n, Duration: d, MaxConcurrency: lc.client.maxConc, Seed: c.Int64("seed"),
		Settings: lc.settings, Bounded: lc.bounded, StartAt: lc.startAt, Drain: runDrain(lc.target.Target.Timeout, src.Sessions())}
	if errs := flagErrors(cfg.Validate()); len(errs) > 0 {
		return usageErrors(errs)
	}
	if err := sizeOfSet(src, sch, n, d); err != nil {
		return err
	}
	vr, err := readVLLMResult(c, spec, lc.settings)
	if err != nil {
		return err
	}
	if err := vr.checkPath(c, lc.outDir, lc.replace); err != nil {
		return err
	}
	if err := lc.prepareOut(); err != nil {
		return err
	}
	s, err := lc.open(c, records.CommandRun, sch)
	if err != nil {
		return err
	}
	defer s.Close()
	res, err := runExecutor(c.Context, c, s, cfg, vr.tap())
	if lost := recordsLost(err); lost != nil && res != nil && len(res.Tiers) > 0 {
		// The tiers that ran are whole in memory: show and save what can be, then fail.
		lc.recordsLost = true
		return errors.Join(lc.finish(c, s, res), lost)
	}
	if err != nil {
		return err
	}
	for _, t := range res.Tiers {
		if t.Summary.ClientBound {
			fmt.Fprintf(c.App.ErrWriter, "loadcurve: WARNING: tier %d is CLIENT-BOUND: %s. Its latencies describe this client as much as the server.\n",
				t.Tier.Tier, t.Summary.ClientBoundReason)
		}
	}
	if err := lc.finish(c, s, res); err != nil {
		return err
	}
	if c.Context.Err() == nil {
		if err := cutShort(res); err != nil {
			if vr != nil {
				fmt.Fprintln(c.App.ErrWriter, "loadcurve: --save-result: no vLLM result file written: the run did not run to its end (summary.json says so; vLLM's layout cannot)")
			}
			return err
		}
	}
	if c.Context.Err() != nil {
		if vr != nil {
			fmt.Fprintln(c.App.ErrWriter, "loadcurve: --save-result: no vLLM result file written: the run was interrupted (summary.json says so; vLLM's layout cannot)")
		}
		return errInterrupted
	}
	return vr.write(c, res)
}

// --- vLLM's result file ---

func vllmResultFlags() []cli.Flag {
	return []cli.Flag{
		&cli.BoolFlag{Name: "save-result", Category: catVLLM, Usage: "also write the result in the layout of vLLM's --save-result file (vLLM's keys only, its default statistics: ttft, tpot, itl at p99 unless --percentile-metrics or --metric-percentiles say otherwise), for tools that read vLLM's results"},
		&cli.StringFlag{Name: "result-dir", Category: catVLLM, DefaultText: "the current directory, as vLLM", Usage: "directory of the --save-result file (implies --save-result)"},
		&cli.StringFlag{Name: "result-filename", Category: catVLLM, DefaultText: "vLLM's, {label}-{rate}qps[-concurrency{N}]-{model}-{date}.json", Usage: "name of the --save-result file (implies --save-result); an existing file is replaced only with --replace, and never one of the run's own result in --out"},
	}
}

// vllmResult is what --save-result writes and where.
type vllmResult struct {
	dir, name string
	opts      sweep.VLLMOptions
	// outDir is the run's --out ("" when none): the file may not be one of its result's.
	outDir string
	// replace is --replace: an existing file of that name may be overwritten.
	replace bool
	// append is vLLM's --append-result: the result is appended to the file as one more line.
	append bool
	// requests keeps the per-request arrays as the run's records pass.
	requests *vllm.Tap
}

// path is where the file goes, named name: into --result-dir unless name is absolute, as in vLLM.
func (vr *vllmResult) path(name string) string {
	if !filepath.IsAbs(name) && vr.dir != "" {
		return filepath.Join(vr.dir, name)
	}
	return name
}

// clash says why the file may not be written at path, "" when it may: it would be one of the
// files of the run's own result in --out (records.jsonl, summary.json, …), whatever --replace
// says; or it would overwrite an input of the run (the --config file, the --workload file).
func (vr *vllmResult) clash(c *cli.Context, path string) string {
	if vr.outDir != "" && samePlace(filepath.Dir(path), vr.outDir) && result.IsFile(filepath.Base(path)) {
		return fmt.Sprintf("%s is a file of the run's own result in --out %s: it would overwrite what the run records there; choose another --result-filename or --result-dir",
			path, filepath.Clean(vr.outDir))
	}
	inputs := []string{c.String("config"), c.String("workload")}
	if _, file, ok := strings.Cut(c.String("workload"), ":"); ok {
		inputs = append(inputs, file)
	}
	for _, in := range inputs {
		if in != "" && sameExistingFile(path, in) {
			return fmt.Sprintf("%s is the run's input %s: choose another --result-filename or --result-dir", path, in)
		}
	}
	return ""
}

// checkPath refuses, before any load is sent, a --result-filename that would overwrite the
// run's own result or an input, or an existing file without --replace. vLLM's default name is
// known only once the run is done: write checks it then.
func (vr *vllmResult) checkPath(c *cli.Context, outDir string, replace bool) error {
	if vr == nil {
		return nil
	}
	vr.outDir, vr.replace = outDir, replace
	if vr.name == "" {
		return nil
	}
	path := vr.path(vr.name)
	if why := vr.clash(c, path); why != "" {
		return usagef("--result-filename: %s", why)
	}
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return usagef("--result-filename: %s is a directory: name a file", path)
	} else if err == nil && !replace && !vr.append {
		if st.IsDir() {
			return usagef("--result-filename: %s is a directory: name a file", path)
		}
		return usagef("--result-filename: %s already exists: choose another name, or pass --replace to overwrite it", path)
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

// readVLLMResult reads --save-result, --result-dir and --result-filename (nil: none asked).
// vLLM's defaults choose the statistics unless --percentile-metrics or --metric-percentiles
// were given.
func readVLLMResult(c *cli.Context, spec arrival.Spec, s sweep.Settings) (*vllmResult, error) {
	appendTo := isSetHere(c, "append-result") && c.Bool("append-result")
	if !c.Bool("save-result") && !c.IsSet("result-dir") && !c.IsSet("result-filename") && !appendTo {
		if isSetHere(c, "save-detailed") {
			fmt.Fprintln(c.App.ErrWriter, "loadcurve: --save-detailed: no effect without --save-result (as in vLLM)")
		}
		return nil, nil
	}
	vr := &vllmResult{dir: c.String("result-dir"), name: c.String("result-filename"), append: appendTo}
	vr.opts.Detailed = isSetHere(c, "save-detailed") && c.Bool("save-detailed")
	if isSetHere(c, "tokenizer") {
		vr.opts.TokenizerID = c.String("tokenizer")
	}
	if isSetHere(c, "backend") {
		vr.opts.Backend = c.String("backend")
	}
	if c.IsSet("result-filename") && (vr.name == "" || strings.HasSuffix(vr.name, "/")) {
		return nil, usagef("--result-filename must name a file, got %q", vr.name)
	}
	if c.IsSet("percentile-metrics") {
		for _, m := range s.Measure.Metrics {
			if slices.Contains(sweep.VLLMMetrics, m) {
				vr.opts.Metrics = append(vr.opts.Metrics, m)
			}
		}
		if vr.opts.Metrics == nil {
			return nil, usagef("--save-result: --percentile-metrics %s names none of the metrics vLLM reports (%s)",
				strings.Join(s.Measure.Metrics, ","), strings.Join(sweep.VLLMMetrics, ","))
		}
	}
	if c.IsSet("metric-percentiles") {
		vr.opts.Percentiles = s.Measure.Percentiles
	}
	if spec.Ramp != arrival.RampNone {
		vr.opts.Ramp = &sweep.VLLMRamp{Strategy: spec.Ramp.String(), Start: spec.RampStart, End: spec.RampEnd}
	}
	return vr, nil
}

// write writes the vLLM-layout file of a run's result: into --result-dir (created if need be),
// under --result-filename or vLLM's default name; an absolute --result-filename stands alone,
// as in vLLM.
func (vr *vllmResult) write(c *cli.Context, res *sweep.Result) error {
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
	if why := vr.clash(c, path); why != "" {
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
	fmt.Fprintf(c.App.ErrWriter, "loadcurve: wrote the result in vLLM's layout to %s\n", path)
	return nil
}

// sizeOfSet refuses, before anything is sent or made, a tier whose request set would be too
// large to hold or to generate (workloads.MaxRequests, MaxPromptWords): n requests (sessions),
// or those an arrival process is expected to plan within d.
func sizeOfSet(src *workloads.Source, sch arrival.Schedule, n int, d time.Duration) error {
	if sp, ok := sch.(arrival.Spec); ok && n == 0 && d > 0 {
		exp := sp.Expected(d)
		if math.IsInf(exp, 1) || exp > arrival.MaxArrivals {
			return nil // refused with the schedule
		}
		n = int(math.Ceil(exp))
	}
	if n <= 0 {
		return nil // a replay: the trace's own requests
	}
	if err := src.CheckSize(n); err != nil {
		return usageError{err}
	}
	return nil
}

// runDrain: a run has no next tier to protect, so its stragglers may run until their own
// --timeout (a day when there is none). A run of sessions waits for every session's turns (a
// day at most): their arrival phase ends when the last session starts, but its later turns
// come after think times and the turns before them, each bounded by --timeout, which is per
// request (a drain of --timeout + 1 s once canceled 18 of 80 turns with --think-time 2s
// --timeout 3s).
func runDrain(timeout time.Duration, sessions bool) time.Duration {
	if timeout <= 0 || sessions {
		return 24 * time.Hour
	}
	return timeout + time.Second
}

// cutShort is the error of a run, not interrupted, whose tier did not run to its end: requests
// canceled by the drain deadline, or never sent. Its records and summary are written (and say
// which); the exit status must say it too.
func cutShort(res *sweep.Result) error {
	for _, t := range res.Tiers {
		s := t.Summary
		if s.Complete {
			continue
		}
		return fmt.Errorf("the run did not run to its end: %d of %d planned requests were canceled before they ended (each record's error says why, e.g. the drain deadline after the arrivals; summary.json has \"complete\": false)",
			s.Outcomes[records.Canceled.String()], s.Planned)
	}
	return nil
}
