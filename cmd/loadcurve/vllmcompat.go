package main

import (
	"github.com/urfave/cli/v2"

	"github.com/loadcurve/loadcurve/cmd/internal/vllm"
	"github.com/loadcurve/loadcurve/loadgen"
	"github.com/loadcurve/loadcurve/workloads"
)

// vLLM's `vllm bench serve` command line, accepted by run and sweep: package vllm holds the
// table of vLLM's flags, what each does here and the flags run and sweep lack; this file hands
// it the command line.

// withVLLMFlags completes a command's flags (run, sweep) with the vLLM flags it lacks.
func withVLLMFlags(command string, flags []cli.Flag) []cli.Flag {
	return append(flags, vllm.CLIFlags(command, flags, func() cli.Generic { return &listValue{} })...)
}

// vllmTarget applies vLLM's connection, model and sampling flags to t (readTarget calls it
// before validating t): see vllm.Target.
func vllmTarget(c *cli.Context, t *loadgen.Target) []error {
	return vllm.Target(vllm.ArgsOf(c), t, c.App.ErrWriter)
}

// vllmDataset applies vLLM's dataset flags to the workload: see vllm.Dataset.
func vllmDataset(c *cli.Context, opts *workloads.LoadOptions) (string, []error) {
	return vllm.Dataset(vllm.ArgsOf(c), opts)
}

// vllmSource completes a source read from a dataset file with vLLM's output-length flags and
// --tokenizer's counts: see vllm.Source.
func vllmSource(c *cli.Context, src *workloads.Source) []error {
	return vllm.Source(vllm.ArgsOf(c), src)
}

// applyVLLMCompat applies the vLLM flags that concern the run as a whole: see vllm.ReadRun.
func applyVLLMCompat(c *cli.Context, lc *loadCommand) []error {
	r, errs := vllm.ReadRun(vllm.ArgsOf(c), c.Command.Name, c.App.ErrWriter)
	if r.WarmupsGiven {
		lc.target.Warmups = r.Warmups
	}
	if r.Quiet {
		lc.progress = false
	}
	return errs
}
