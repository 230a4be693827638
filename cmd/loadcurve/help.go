package main

import (
	"fmt"
	"slices"

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
}

// urfave/cli's shared --help and --version flags are data races when apps run at once (tests).
func init() { cli.HelpFlag, cli.VersionFlag = clihelp.HelpFlag, clihelp.VersionFlag }

// helpSimFlag names the flag that lists the embedded deployment's flags, which the ordinary
// help of run and sweep leaves out.
const helpSimFlag = "help-sim"

// helpSim is --help-sim: it lists the embedded deployment's flags of the command.
func helpSim(c *cli.Context) error {
	w := c.App.Writer
	n := 0
	for _, f := range c.Command.Flags {
		if cf, ok := f.(cli.CategorizableFlag); ok && cf.GetCategory() == catSim && !slices.Contains(f.Names(), helpSimFlag) {
			n++
		}
	}
	fmt.Fprintf(w, "The embedded simulated deployment of `%s`: it serves the requests when --base-url is not given.\n", c.Command.HelpName)
	fmt.Fprintf(w, "Its %d flags (a model of a continuous-batching server, or with --sim-model mdc an exact M/D/c queue;\n", n)
	fmt.Fprintln(w, "`loadcurve sim` serves the same deployment on an address):")
	fmt.Fprintln(w)
	helpOptions.WriteLast(w, c.Command.Flags, clihelp.Width(w))
	return nil
}
