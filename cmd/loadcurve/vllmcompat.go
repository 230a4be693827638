package main

import (
	"fmt"
	"slices"

	"github.com/urfave/cli/v2"

	"github.com/loadcurve/loadcurve/cmd/internal/flagfile"
	"github.com/loadcurve/loadcurve/cmd/internal/vllm"
	"github.com/loadcurve/loadcurve/loadgen"
	"github.com/loadcurve/loadcurve/workloads"
)

// vLLM's `vllm bench serve` command line, accepted by run and sweep: package vllm holds the
// table of vLLM's flags and what each does here; this file makes them flags of run and sweep
// and hands it the command line.

// vllmArgs is the command line as package vllm reads it.
type vllmArgs struct{ c *cli.Context }

func (a vllmArgs) Given(name string) bool      { return isSetHere(a.c, name) }
func (a vllmArgs) String(name string) string   { return a.c.String(name) }
func (a vllmArgs) Int(name string) int         { return a.c.Int(name) }
func (a vllmArgs) Float64(name string) float64 { return a.c.Float64(name) }
func (a vllmArgs) Bool(name string) bool       { return a.c.Bool(name) }

var _ vllm.Args = vllmArgs{}

// vllmCompatFlags are the flags vLLM's client has and the command (run or sweep) has not, with
// what they do here as their usage.
func vllmCompatFlags(command string, existing []cli.Flag) []cli.Flag {
	have := map[string]bool{}
	for _, f := range existing {
		for _, n := range f.Names() {
			have[n] = true
		}
	}
	var out []cli.Flag
	for _, v := range vllm.Flags {
		if have[v.Name] {
			continue
		}
		usage := "vLLM's flag: " + v.Note
		switch {
		case v.Only != "" && v.Only != command:
			usage = "vLLM's flag, refused here: " + v.OnlyWhy
		case v.Kind == vllm.NoEffect:
			usage = "vLLM's flag, no effect here: " + v.Note
		case v.Kind == vllm.Refused:
			usage = "vLLM's flag, refused: " + v.Note
		}
		f := cli.Flag(nil)
		switch v.Type {
		case "bool":
			f = &cli.BoolFlag{Name: v.Name, Category: catVLLMCompat, Usage: usage}
		case "int":
			f = &cli.IntFlag{Name: v.Name, Category: catVLLMCompat, Usage: usage}
		case "float":
			f = &cli.Float64Flag{Name: v.Name, Category: catVLLMCompat, Usage: usage}
		case "list":
			f = &cli.GenericFlag{Name: v.Name, Category: catVLLMCompat, Value: &listValue{}, Usage: usage}
		default:
			f = &cli.StringFlag{Name: v.Name, Category: catVLLMCompat, Usage: usage}
		}
		out = append(out, f)
	}
	return out
}

const catVLLMCompat = "vLLM's other flags (vllm bench serve)"

// isSetHere reports whether the command has the flag and it was given.
func isSetHere(c *cli.Context, name string) bool {
	f, ok := flagfile.ByName(c.Command)[name]
	if !ok {
		return false
	}
	// c.IsSet is cheap for a flag that is set and costs a scan of every flag's names for one
	// that is not, which most of vLLM's are: look at what was set first.
	names := f.Names()
	for _, n := range c.LocalFlagNames() {
		if slices.Contains(names, n) {
			return c.IsSet(name)
		}
	}
	return f.IsSet() // set from the environment
}

// vllmTarget applies vLLM's connection, model and sampling flags to t (readTarget calls it
// before validating t): see vllm.Target.
func vllmTarget(c *cli.Context, t *loadgen.Target) []error {
	return vllm.Target(vllmArgs{c}, t, c.App.ErrWriter)
}

// vllmDataset applies vLLM's dataset flags to the workload: see vllm.Dataset.
func vllmDataset(c *cli.Context, opts *workloads.LoadOptions) (string, []error) {
	return vllm.Dataset(vllmArgs{c}, opts)
}

// vllmSource completes a source read from a dataset file with vLLM's output-length flags and
// --tokenizer's counts: see vllm.Source.
func vllmSource(c *cli.Context, src *workloads.Source) []error {
	return vllm.Source(vllmArgs{c}, src)
}

// applyVLLMCompat applies the vLLM flags that concern the run as a whole: the refusals and the
// flags without effect (stated once), --num-warmups and --disable-tqdm.
func applyVLLMCompat(c *cli.Context, lc *loadCommand) []error {
	errs := vllm.Refusals(vllmArgs{c}, c.Command.Name, c.App.ErrWriter)
	if isSetHere(c, "num-warmups") {
		n := c.Int("num-warmups")
		if n < 0 || n > vllm.MaxWarmups {
			errs = append(errs, fmt.Errorf("--num-warmups must be in [0, %d], got %d", vllm.MaxWarmups, n))
		}
		lc.target.Warmups = n
	}
	if isSetHere(c, "disable-tqdm") && c.Bool("disable-tqdm") {
		lc.progress = false
	}
	return errs
}

// withVLLMFlags completes a command's flags (run, sweep) with the vLLM flags it lacks.
func withVLLMFlags(command string, flags []cli.Flag) []cli.Flag {
	return append(flags, vllmCompatFlags(command, flags)...)
}
