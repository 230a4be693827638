package main

import (
	"fmt"
	"net"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/loadcurve/loadcurve/cmd/internal/cliparam"
	"github.com/loadcurve/loadcurve/internal/param"
	"github.com/loadcurve/loadcurve/loadgen/sim"
)

// simFlags returns a flag for every sim parameter, named prefix+param (prefix "sim-" on run and
// sweep, where they are a category of their own, listed by --help-sim; none on `loadcurve sim`,
// whose flags they are). Unset flags keep the profile's value.
func simFlags(prefix string) []cli.Flag {
	cat := ""
	if prefix != "" {
		cat = catSim
	}
	s := sim.DefaultSettings()
	cfg, _ := sim.Profile(sim.ProfileDefault) // the defaults the flags show
	flags := cliparam.Concat(bind.Flags(cat, cliparam.Prefixed(prefix, s.Params(prefix != ""))), bind.Flags(cat, cliparam.Prefixed(prefix, cfg.Params())))
	q := sim.DefaultQueueConfig()
	for _, p := range q.Params() {
		if p.Field != sim.FieldModelName { // the engine's flag names the model for both
			flags = append(flags, bind.Flags(cat, cliparam.Prefixed(prefix, []param.Param{p}))...)
		}
	}
	if prefix != "" {
		flags = append(flags, &cli.BoolFlag{Name: helpSimFlag, Category: cat,
			Usage: fmt.Sprintf("list the %d --%s* flags of the embedded deployment (its profile, engine, faults, replicas, or an exact M/D/c queue) and exit", len(flags), prefix)})
	}
	return flags
}

// simDeployment reads the simulated deployment from its flags (prefix "sim-" on run and sweep,
// which embed it): its settings, then the server they pick (sim.Settings.Configure), the queue
// from its flags given (the model's name is the engine's flag, whose default is the engine's)
// or the profile with its tunables' flags given.
func simDeployment(c *cli.Context, prefix string) (sim.Settings, sim.Deployment, error) {
	s, embedded := sim.DefaultSettings(), prefix != ""
	errs := append(bind.Apply(c, cliparam.Prefixed(prefix, s.Params(embedded)), false), s.Check(embedded)...)
	if len(errs) > 0 {
		return s, sim.Deployment{}, usageErrors(simFlagErrors(prefix, errs))
	}
	d, errs := s.Configure(func(ps []param.Param) []error { return bind.Apply(c, cliparam.Prefixed(prefix, ps), true) },
		func(name string) (string, bool) { return c.String(prefix + name), c.IsSet(prefix + name) })
	return s, d, usageErrors(simFlagErrors(prefix, errs))
}

// simFlagErrors writes the sim's field errors with the flags that give them on this command:
// the sim names its inputs as its own flags, which run and sweep give with prefix ("sim-").
func simFlagErrors(prefix string, errs []error) []error {
	out := make([]error, len(errs))
	for i, e := range errs {
		out[i] = cliparam.Render(e, func(n string) string { return "--" + prefix + strings.TrimPrefix(n, prefix) })
	}
	return out
}

func simCommand() *cli.Command {
	return &cli.Command{
		Name:  "sim",
		Usage: "serve the simulated deployment (an OpenAI-compatible continuous-batching server model) on an address",
		Description: "A model of a continuous-batching inference server, not a measurement of any hardware.\n" +
			"Endpoints: POST /v1/chat/completions, POST /v1/completions, GET /v1/models, GET /health, GET /metrics.",
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "addr", Value: "127.0.0.1:8000", Usage: "listen address"},
		}, simFlags("")...),
		Action: func(c *cli.Context) error {
			_, d, err := simDeployment(c, "")
			if err != nil {
				return err
			}
			handler, stop, err := d.Start()
			if err != nil {
				return usageError{err}
			}
			defer stop()
			label := d.Label()
			if d.Queue == nil {
				label = "profile " + label
			}
			ln, err := net.Listen("tcp", c.String("addr"))
			if err != nil {
				return fmt.Errorf("listen on --addr %s: %w", c.String("addr"), err)
			}
			fmt.Fprintf(c.App.ErrWriter, "loadcurve sim: %s serving model %q at http://%s/v1 (a model, not a measurement; Ctrl-C to stop)\n",
				label, d.ModelName(), ln.Addr())
			return sim.ServeOn(c.Context, ln, handler)
		},
	}
}
