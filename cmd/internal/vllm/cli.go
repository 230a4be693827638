package vllm

import (
	"fmt"
	"io"
	"slices"

	"github.com/urfave/cli/v2"

	"github.com/loadcurve/loadcurve/cmd/internal/cliparam"
	"github.com/loadcurve/loadcurve/cmd/internal/flagfile"
)

// Category is the --help heading of the vLLM flags a command (run, sweep) does not have as its
// own: WithFlags.
const Category = "vLLM's other flags (vllm bench serve)"

// WithFlags completes a command's flags (run, sweep) with the flags of Flags it lacks, each with
// what it does here as its usage, under Category.
func WithFlags(command string, existing []cli.Flag) []cli.Flag {
	have := map[string]bool{}
	for _, f := range existing {
		for _, n := range f.Names() {
			have[n] = true
		}
	}
	var out []cli.Flag
	for _, v := range Flags {
		if have[v.Name] {
			continue
		}
		usage := "vLLM's flag: " + v.Note
		switch {
		case v.Only != "" && v.Only != command:
			usage = "vLLM's flag, refused here: " + v.OnlyWhy
		case v.Kind == NoEffect:
			usage = "vLLM's flag, no effect here: " + v.Note
		case v.Kind == Refused:
			usage = "vLLM's flag, refused: " + v.Note
		}
		var f cli.Flag
		switch v.Type {
		case "bool":
			f = &cli.BoolFlag{Name: v.Name, Category: Category, Usage: usage}
		case "int":
			f = &cli.IntFlag{Name: v.Name, Category: Category, Usage: usage}
		case "float":
			f = &cli.Float64Flag{Name: v.Name, Category: Category, Usage: usage}
		case "list":
			f = &cli.GenericFlag{Name: v.Name, Category: Category, Value: &cliparam.List{}, Usage: usage}
		default:
			f = &cli.StringFlag{Name: v.Name, Category: Category, Usage: usage}
		}
		out = append(out, f)
	}
	return slices.Concat(existing, out) // a new slice: existing's array is the caller's
}

// Given reports whether c's command has the flag called name and it was given: on the command
// line, by a scenario file, or from the environment. It is Args.Given for a urfave/cli command.
func Given(c *cli.Context, name string) bool {
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

// ArgsOf is c's command line as the rules read it (Args): by flag name, Given as above.
func ArgsOf(c *cli.Context) Args { return cliArgs{c} }

type cliArgs struct{ *cli.Context }

func (a cliArgs) Given(name string) bool { return Given(a.Context, name) }

// Run is what the vLLM flags that concern a run as a whole ask of it: Run reads them.
type Run struct {
	// Warmups is --num-warmups when it was given (WarmupsGiven).
	Warmups      int
	WarmupsGiven bool
	// Quiet is --disable-tqdm: no progress display.
	Quiet bool
}

// ReadRun reads the vLLM flags that concern the run as a whole: the refusals and the flags
// without effect (stated once on notes, see Refusals), --num-warmups (in [0, MaxWarmups]) and
// --disable-tqdm.
func ReadRun(a Args, command string, notes io.Writer) (Run, []error) {
	errs := Refusals(a, command, notes)
	var r Run
	if a.Given("num-warmups") {
		r.Warmups, r.WarmupsGiven = a.Int("num-warmups"), true
		if r.Warmups < 0 || r.Warmups > MaxWarmups {
			errs = append(errs, fmt.Errorf("--num-warmups must be in [0, %d], got %d", MaxWarmups, r.Warmups))
		}
	}
	r.Quiet = a.Given("disable-tqdm") && a.Bool("disable-tqdm")
	return r, errs
}
