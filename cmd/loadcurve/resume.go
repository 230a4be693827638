package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/loadcurve/loadcurve/measure"
	"github.com/loadcurve/loadcurve/records"
	"github.com/loadcurve/loadcurve/runner"
	"github.com/loadcurve/loadcurve/scenario"
	"github.com/loadcurve/loadcurve/sweep"
)

// resumeFlag is sweep's --resume DIR.
func resumeFlag() cli.Flag {
	return &cli.StringFlag{Name: "resume", Category: catOutput, Usage: "continue the interrupted sweep in DIR: its finished tiers are kept, the interrupted one runs again, the search goes on where it stopped " +
		"and the result is written to DIR; flags not given are the sweep's own (DIR's " + ScenarioName + "), a flag given must not change what the sweep measures"}
}

// resumeFreeFlags may differ from the interrupted sweep's: they change how the result is shown or
// where it goes, not what is measured (the secrets, never written, must be given again).
var resumeFreeFlags = map[string]bool{"out": true, "replace": true, "resume": true, "config": true, "format": true, "verbose": true,
	"quiet": true, "api-key": true, "header": true, "ready-check-timeout-sec": true, "help": true, "help-sim": true}

// resumeNotTaken are the interrupted sweep's flags a resume does not take from its scenario:
// where it wrote (the resume writes to DIR) and whether it could replace a result.
var resumeNotTaken = map[string]bool{"out": true, "replace": true, "resume": true, "config": true}

// applyResume is the part of sweep's Before that --resume DIR needs: DIR must hold a sweep; every
// flag given (on the command line or by --config) that changes what is measured must have the
// value the sweep ran with, else the resume is refused naming each that differs; every flag not
// given takes the sweep's value from DIR's scenario.yaml; --out becomes DIR.
func applyResume(c *cli.Context) error {
	dir := c.String("resume")
	if !c.IsSet("resume") {
		return nil
	}
	if dir == "" {
		return usagef("--resume: give the directory of the interrupted sweep (its --out)")
	}
	r, err := sweep.OpenResume(dir)
	if err != nil {
		if errors.Is(err, sweep.ErrNoSweep) {
			return usagef("--resume %s: %v: give the --out directory of a sweep that was interrupted", dir, err)
		}
		return usagef("--resume %s: %v", dir, err)
	}
	var errs []error
	if c.IsSet("out") && !sameDir(c.String("out"), dir) {
		errs = append(errs, fmt.Errorf("--out %s: a resumed sweep writes to the directory it continues, %s: leave --out out", c.String("out"), dir))
	}
	if c.Bool("replace") {
		errs = append(errs, fmt.Errorf("--replace: it would delete the sweep that --resume %s continues", dir))
	}
	path := filepath.Join(dir, ScenarioName)
	scen, lines, err := readResolvedScenario(c, path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		scen = nil
		fmt.Fprintf(c.App.ErrWriter, "loadcurve: WARNING: --resume %s: no %s there (a sweep writes it when its first tier starts): the command line's flags are taken as the sweep's, and its records are checked against them\n", dir, ScenarioName)
	case err != nil:
		errs = append(errs, err)
	}
	names := flagNames(c.Command.Flags)
	for _, f := range c.Command.Flags {
		name := f.Names()[0]
		if resumeFreeFlags[name] || !c.IsSet(name) || scen == nil {
			continue
		}
		want, inDir := scen[name]
		if !inDir {
			want = defaultValues(f)
		}
		got := flagValues(c, f)
		if name == "goodput" {
			if o, ok := headerObjectives(r); ok {
				// The records header states the objectives whole (the scenario lacks those
				// given as positional arguments, vLLM's form).
				want = o
			}
			if got = append(got, objectiveArgs(c)...); sameObjectives(got, want) {
				continue
			}
		}
		if !slices.Equal(got, want) {
			where := "did not set it (" + orQuoted(want, "its default") + ")"
			if inDir {
				where = fmt.Sprintf("ran with %s (%s:%d)", orQuoted(want, "none"), path, lines[name])
			}
			errs = append(errs, fmt.Errorf("--%s %s: the interrupted sweep %s; a resumed sweep measures what it measured (leave --%[1]s out, or start a new sweep with another --out)",
				name, orQuoted(got, `""`), where))
		}
	}
	if len(errs) > 0 {
		return usageErrors(errs)
	}
	if o, ok := headerObjectives(r); ok && !c.IsSet("goodput") {
		for _, v := range o {
			if err := c.Set("goodput", v); err != nil {
				errs = append(errs, fmt.Errorf("%s: --goodput %s: %v", r.Path, v, err))
			}
		}
	}
	for name, vals := range scen {
		canonical, ok := names[name]
		if !ok || resumeNotTaken[canonical] || c.IsSet(canonical) {
			continue // a flag this version lacks is caught by the records' checks, if it mattered
		}
		for _, v := range vals {
			if err := c.Set(canonical, v); err != nil {
				errs = append(errs, fmt.Errorf("%s:%d: --%s %s: %v", path, lines[name], canonical, v, err))
			}
		}
	}
	if err := c.Set("out", dir); err != nil {
		errs = append(errs, err)
	}
	return usageErrors(errs)
}

// readResolvedScenario reads a scenario.yaml that a sweep wrote: flag name to values, and the
// line of each.
func readResolvedScenario(c *cli.Context, path string) (map[string][]string, map[string]int, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, err
	}
	entries, err := scenario.Parse(b)
	if err != nil {
		var se *scenario.Error
		if errors.As(err, &se) && se.Line > 0 {
			return nil, nil, fmt.Errorf("%s:%d: not a scenario: %v", path, se.Line, se.Err)
		}
		return nil, nil, fmt.Errorf("%s: %v", path, err)
	}
	out, lines := map[string][]string{}, map[string]int{}
	names := flagNames(c.Command.Flags)
	for _, e := range entries {
		if e.ValueErr != nil {
			return nil, nil, fmt.Errorf("%s:%d: --%s: %v", path, e.ValueLine, e.Name, e.ValueErr)
		}
		name := e.Name
		if canonical, ok := names[name]; ok {
			name = canonical
		}
		out[name], lines[name] = e.Values, e.Line
	}
	return out, lines, nil
}

// headerObjectives are the objectives the records header of the sweep states, when it states
// any.
func headerObjectives(r *sweep.Resume) ([]string, bool) {
	if st := r.Header.Settings; st != nil && st.Objectives != "" {
		return []string{st.Objectives}, true
	}
	return nil, false
}

// objectiveArgs are the positional arguments that continue --goodput (vLLM's space-separated
// form, as objectives reads them).
func objectiveArgs(c *cli.Context) []string {
	var out []string
	for _, a := range c.Args().Slice() {
		if strings.Contains(a, ":") {
			out = append(out, a)
		}
	}
	return out
}

// sameObjectives reports whether two --goodput values state the same objectives, however
// written ("ttft:500 tpot:50" or "ttft:500" "tpot:50", in any order).
func sameObjectives(a, b []string) bool {
	oa, errA := measure.ParseGoodput(a)
	ob, errB := measure.ParseGoodput(b)
	return errA == nil && errB == nil && oa.String() == ob.String()
}

// flagValues are a flag's values as the resolved scenario writes them.
func flagValues(c *cli.Context, f cli.Flag) []string {
	name := f.Names()[0]
	switch f.(type) {
	case *cli.StringSliceFlag:
		return c.StringSlice(name)
	case *cli.GenericFlag:
		if l, ok := c.Generic(name).(*listValue); ok {
			return l.vals
		}
		return []string{fmt.Sprint(c.Generic(name))}
	case *cli.BoolFlag:
		return []string{strconv.FormatBool(c.Bool(name))}
	case *cli.DurationFlag:
		return []string{c.Duration(name).String()}
	case *cli.IntFlag:
		return []string{strconv.Itoa(c.Int(name))}
	case *cli.Int64Flag:
		return []string{strconv.FormatInt(c.Int64(name), 10)}
	case *cli.Float64Flag:
		return []string{strconv.FormatFloat(c.Float64(name), 'g', -1, 64)}
	case *cli.StringFlag:
		return []string{c.String(name)}
	}
	return nil
}

// defaultValues are a flag's default values, as flagValues writes them.
func defaultValues(f cli.Flag) []string {
	switch f := f.(type) {
	case *cli.StringSliceFlag:
		if f.Value == nil {
			return nil
		}
		return f.Value.Value()
	case *cli.GenericFlag:
		if _, ok := f.Value.(*listValue); ok {
			return nil
		}
		return []string{fmt.Sprint(f.Value)}
	case *cli.BoolFlag:
		return []string{strconv.FormatBool(f.Value)}
	case *cli.DurationFlag:
		return []string{f.Value.String()}
	case *cli.IntFlag:
		return []string{strconv.Itoa(f.Value)}
	case *cli.Int64Flag:
		return []string{strconv.FormatInt(f.Value, 10)}
	case *cli.Float64Flag:
		return []string{strconv.FormatFloat(f.Value, 'g', -1, 64)}
	case *cli.StringFlag:
		return []string{f.Value}
	}
	return nil
}

// orQuoted writes values for a message: one quoted, several as a list, none as alt.
func orQuoted(vals []string, alt string) string {
	switch len(vals) {
	case 0:
		return alt
	case 1:
		return strconv.Quote(vals[0])
	}
	q := make([]string, len(vals))
	for i, v := range vals {
		q[i] = strconv.Quote(v)
	}
	return strings.Join(q, " ")
}

// sameDir reports whether a and b name the same directory.
func sameDir(a, b string) bool {
	if filepath.Clean(a) == filepath.Clean(b) {
		return true
	}
	fa, errA := os.Stat(a)
	fb, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(fa, fb)
}

// resumeSettingFlags names each setting a resumed sweep must keep (sweep.ResumeDifferences) as
// the user gives it.
var resumeSettingFlags = map[string]string{
	sweep.ResumeTarget:         "the target (--base-url)",
	sweep.ResumeSim:            "the embedded deployment (--sim-*)",
	sweep.ResumeSimConfig:      "the embedded deployment's configuration (--sim-*)",
	sweep.ResumeSimReplicas:    "the embedded deployment's replicas (--sim-replicas, --sim-balance)",
	sweep.ResumeEndpoint:       "the endpoint (--endpoint)",
	sweep.ResumeModel:          "the model (--model, or the first of GET /models)",
	sweep.ResumeWorkload:       "the workload (--workload and its flags)",
	sweep.ResumeSchedule:       "the schedule (--request-rates, --max-concurrencies, --burstiness)",
	sweep.ResumeSeed:           "the seed (--seed)",
	sweep.ResumeMaxConcurrency: "the concurrency cap (--max-concurrency)",
	sweep.ResumeCachePolicy:    "the cache policy (--cache)",
	sweep.ResumeExtraBody:      "the extra body (--extra-body, --ignore-eos)",
	sweep.ResumeTimeout:        "the request timeout (--timeout)",
	sweep.ResumeRetries:        "the retries (--retries)",
	sweep.ResumeSettings:       "the objectives and analysis settings (--goodput, --target-share, --confidence, …)",
}

// resumeHeaderDiffers says, naming the flags, every difference in what is measured between the
// records header of the interrupted sweep and the one this command would write.
func resumeHeaderDiffers(old, now records.Header) []error {
	var errs []error
	for _, d := range sweep.ResumeDifferences(old, now) {
		what, ok := resumeSettingFlags[d.What]
		if !ok {
			what = "the " + d.What
		}
		errs = append(errs, fmt.Errorf("%s: the interrupted sweep's records say %s, this sweep's would say %s", what, d.Was, d.Is))
	}
	return errs
}

// resumeFingerprint returns the workload fingerprint a planned tier's request set has, as the
// session computes it before sending (runner.Session.RunTier), for the executor to check the kept
// tiers against.
func resumeFingerprint(src runner.Options) func(sweep.Plan) (string, error) {
	return func(p sweep.Plan) (string, error) {
		set, _, err := src.Workload.TierSet(p.Requests(), p.Tier.Seed)
		if err != nil {
			return "", err
		}
		return set.Fingerprint, nil
	}
}

// resumeCommand is the command line that continues an interrupted sweep in dir, with the flags
// it needs again: the secrets, which no file holds.
func resumeCommand(c *cli.Context, dir string) string {
	cmd := "loadcurve sweep --resume " + shellWord(dir)
	if c.IsSet("api-key") && os.Getenv("OPENAI_API_KEY") == "" {
		cmd += " --api-key …"
	}
	if len(listOf(c, "header")) > 0 {
		cmd += " --header … (the same headers)"
	}
	return cmd
}

// shellWord quotes s for a POSIX shell when it needs it.
func shellWord(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=:@%+,") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
