// Package resume is `loadcurve sweep --resume DIR` on the command line: which flags a resumed
// sweep may change (how the result is shown and where it goes, not what is measured), the
// interrupted sweep's flags taken from DIR's scenario file, a flag given that would change
// what is measured refused naming the line that set it, the differences of the records header
// named by the flags that set them, and the command line that continues an interrupted sweep.
// What a sweep must keep to resume, and how it resumes, is package sweep's (sweep.Resume).
package resume

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/urfave/cli/v2"

	"github.com/loadcurve/loadcurve/cmd/internal/cliparam"
	"github.com/loadcurve/loadcurve/cmd/internal/flagfile"
	"github.com/loadcurve/loadcurve/curve/result"
	"github.com/loadcurve/loadcurve/curve/sweep"
	"github.com/loadcurve/loadcurve/loadgen/runner"
	"github.com/loadcurve/loadcurve/measure/records"
)

// Flag is sweep's --resume DIR, under category in --help.
func Flag(category string) cli.Flag {
	return &cli.StringFlag{Name: "resume", Category: category, Usage: "continue the interrupted sweep in DIR: its finished tiers are kept, the interrupted one runs again, the search goes on where it stopped " +
		"and the result is written to DIR; flags not given are the sweep's own (DIR's " + result.ScenarioName + "), a flag given must not change what the sweep measures"}
}

// freeFlags may differ from the interrupted sweep's: they change how the result is shown or
// where it goes, not what is measured (the secrets, never written, must be given again).
var freeFlags = map[string]bool{"out": true, "replace": true, "resume": true, "config": true, "format": true, "verbose": true,
	"quiet": true, "plot-formats": true, "api-key": true, "header": true, "ready-check-timeout-sec": true, "help": true, "help-sim": true, "help-all": true}

// notTaken are the interrupted sweep's flags a resume does not take from its scenario:
// where it wrote (the resume writes to DIR) and whether it could replace a result.
var notTaken = map[string]bool{"out": true, "replace": true, "resume": true, "config": true}

// Apply is what sweep's Before does for --resume DIR (nothing without it): claim first locks
// DIR for the whole command, or refuses it when another process is writing it (then nothing of
// it is read); DIR must hold a sweep; every flag given (on the command line or by --config) that changes what is measured
// must have the value the sweep ran with, else the resume is refused naming each that differs;
// every flag not given takes the sweep's value from DIR's scenario.yaml; --out becomes DIR.
// Every problem is returned at once, all of them bad input; warnings go to the command's
// stderr.
func Apply(c *cli.Context, claim func(c *cli.Context, dir string) error) []error {
	dir := c.String("resume")
	if !c.IsSet("resume") {
		return nil
	}
	if err := claim(c, dir); err != nil {
		return []error{err} // another process writes it: nothing of it is read
	}
	r, err := sweep.OpenResumeIn(dir)
	if err != nil {
		return []error{err}
	}
	errs := sweep.CheckResumeOutput(dir, c.String("out"), c.IsSet("out"), c.Bool("replace"))
	scen, err := flagfile.Read(filepath.Join(dir, result.ScenarioName), c.Command.Flags)
	switch {
	case errors.Is(err, os.ErrNotExist):
		fmt.Fprintf(c.App.ErrWriter, "loadcurve: WARNING: --resume %s: no %s there (a sweep writes it when its first tier starts): the command line's flags are taken as the sweep's, and its records are checked against them\n", dir, result.ScenarioName)
	case err != nil:
		errs = append(errs, err)
	}
	if scen != nil {
		for _, d := range scen.Compare(c, freeFlags, sameGoodput(r)) {
			where := "did not set it (" + flagfile.Quoted(d.Want, "its default") + ")"
			if d.Line > 0 {
				where = fmt.Sprintf("ran with %s (%s:%d)", flagfile.Quoted(d.Want, "none"), scen.Path, d.Line)
			}
			errs = append(errs, fmt.Errorf("--%s %s: the interrupted sweep %s; a resumed sweep measures what it measured (leave --%[1]s out, or start a new sweep with another --out)",
				d.Name, flagfile.Quoted(d.Got, `""`), where))
		}
	}
	if len(errs) > 0 {
		return errs
	}
	if o := r.Objectives(); o != "" && !c.IsSet("goodput") {
		if err := c.Set("goodput", o); err != nil {
			errs = append(errs, fmt.Errorf("%s: --goodput %s: %v", r.Path, o, err))
		}
	}
	if scen != nil {
		// A flag this version lacks is passed over: the records' checks catch it, if it mattered.
		errs = append(errs, scen.Take(c, notTaken)...)
	}
	if err := c.Set("out", dir); err != nil {
		errs = append(errs, err)
	}
	return errs
}

// sameGoodput compares --goodput with the interrupted sweep's objectives by what they
// mean (sweep.Resume.SameObjectives), not by how they are written.
func sameGoodput(r *sweep.Resume) func(name string, got, want []string) ([]string, []string, bool) {
	return func(name string, got, want []string) ([]string, []string, bool) {
		if name != "goodput" {
			return got, want, false
		}
		want, same := r.SameObjectives(got, want)
		return got, want, same
	}
}

// Open opens the interrupted sweep in dir that --resume continues (nil without --resume): a
// sweep whose tiers start at fixed wall-clock times (runner.CheckResumable: sharded, or given a
// start time) is refused, its slots have passed.
func Open(c *cli.Context, o runner.Options, dir string) (*sweep.Resume, error) {
	if !c.IsSet("resume") {
		return nil, nil
	}
	if err := runner.CheckResumable(o); err != nil {
		return nil, err
	}
	r, err := sweep.OpenResume(dir)
	if err != nil {
		return nil, sweep.ResumeRefused(dir, err)
	}
	return r, nil
}

// HeaderDiffers refuses the resume of the sweep in dir for every difference in what is measured
// between the records header of the interrupted sweep (old) and the one this command would write
// (now), each naming the flags that set it (settingFlags).
func HeaderDiffers(dir string, old, now records.Header) []error {
	var errs []error
	for _, d := range sweep.ResumeDifferences(old, now) {
		errs = append(errs, sweep.ResumeRefused(dir, errors.New(d.Render(settingWithFlags))))
	}
	return errs
}

// Command is the command line that continues an interrupted sweep in dir, with the flags it
// needs again: the secrets, which no file holds.
func Command(c *cli.Context, dir string) string {
	cmd := "loadcurve sweep --resume " + flagfile.ShellWord(dir)
	if c.IsSet("api-key") && os.Getenv("OPENAI_API_KEY") == "" {
		cmd += " --api-key …"
	}
	if len(cliparam.ListOf(c, "header")) > 0 {
		cmd += " --header … (the same headers)"
	}
	return cmd
}

// settingFlags names the flags that set each setting a resumed sweep must keep
// (sweep.ResumeDifferences).
var settingFlags = map[string]string{
	sweep.ResumeTarget:         "--base-url",
	sweep.ResumeSim:            "--sim-*",
	sweep.ResumeSimConfig:      "--sim-*",
	sweep.ResumeSimReplicas:    "--sim-replicas, --sim-balance",
	sweep.ResumeEndpoint:       "--endpoint",
	sweep.ResumeModel:          "--model, or the first of GET /models",
	sweep.ResumeWorkload:       "--workload and its flags",
	sweep.ResumeSchedule:       "--request-rates, --max-concurrencies, --burstiness",
	sweep.ResumeSeed:           "--seed",
	sweep.ResumeMaxConcurrency: "--max-concurrency",
	sweep.ResumeCachePolicy:    "--cache",
	sweep.ResumeExtraBody:      "--extra-body, --ignore-eos",
	sweep.ResumeTimeout:        "--timeout",
	sweep.ResumeRetries:        "--retries",
	sweep.ResumeSettings:       "--goodput, --target-share, --confidence, …",
}

// settingWithFlags names a setting a resumed sweep must keep with the flags that set it: "the
// seed (--seed)".
func settingWithFlags(what string) string {
	if f, ok := settingFlags[what]; ok {
		return "the " + what + " (" + f + ")"
	}
	return "the " + what
}
