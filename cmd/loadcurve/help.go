package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/loadcurve/loadcurve/cmd/internal/clihelp"
	"github.com/loadcurve/loadcurve/cmd/internal/vllm"
)

// Help: clihelp renders every command's options, grouped in loadcurve's order: the command's
// own uncategorised flags first, then the target, the load, the objectives, the output, …, the
// embedded deployment last, behind --help-sim.
var helpOptions = clihelp.Options{
	Order:    []string{catTarget, catLoad, catObjective, catOutput, catVLLM, catWorkload, catClient, catRehearse},
	Last:     catSim,
	LastFlag: helpSimFlag,
	AllFlag:  helpAllFlag,
	Common:   commonFlags,
	LastIntro: func(command string, n int) string {
		return fmt.Sprintf("The embedded simulated deployment of `%s`: it serves the requests when --base-url is not given.\n"+
			"Its %d flags (a model of a continuous-batching server, or with --sim-model mdc an exact M/D/c queue;\n"+
			"`loadcurve sim` serves the same deployment on an address):\n", command, n)
	},
}

// urfave/cli's shared --help and --version flags are data races when apps run at once (tests).
func init() { cli.HelpFlag, cli.VersionFlag = clihelp.HelpFlag, clihelp.VersionFlag }

// helpSimFlag names the flag that lists the embedded deployment's flags, which the ordinary
// help of run and sweep leaves out.
const helpSimFlag = "help-sim"

// helpAllFlag names the flag that lists every flag of run and sweep, whose ordinary help shows
// the common ones (commonFlags): theirs ran to nearly 200 lines, most of them vLLM's.
const helpAllFlag = "help-all"

// commonFlags are the flags the ordinary help of run and sweep shows, by category: what most
// users set.
var commonFlags = map[string][]string{
	catTarget:     {"base-url", "api-key", "model", "endpoint", "extra-body", "header", "timeout"},
	catLoad:       {"request-rate", "request-rates", "max-concurrencies", "burstiness", "num-requests", "duration", "budget", "max-concurrency", "seed"},
	catObjective:  {"goodput", "target-share", "confidence", "headroom"},
	catOutput:     {"out", "replace", "format", "verbose", "quiet", "config", "resume"},
	catWorkload:   {"workload", "random-input-len", "random-output-len"},
	vllm.Category: {"tokenizer"},
}

// helpAll is run's and sweep's --help-all.
func helpAll() cli.Flag {
	return &cli.BoolFlag{Name: helpAllFlag, Usage: "list every flag of this command, grouped as below (this help shows the common ones) and exit"}
}
