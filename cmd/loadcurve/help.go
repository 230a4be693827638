package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/loadcurve/loadcurve/cmd/internal/clihelp"
)

// Help: clihelp renders every command's options, grouped in loadcurve's order: the command's
// own uncategorised flags first, then the target, the load, the objectives, the output, …, the
// embedded deployment last, behind --help-sim.
var helpOptions = clihelp.Options{
	Order:    []string{catTarget, catLoad, catObjective, catOutput, catVLLM, catWorkload, catClient, catRehearse},
	Last:     catSim,
	LastFlag: helpSimFlag,
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
