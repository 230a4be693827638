package main

import (
	"fmt"
	"net"
	"net/http"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/loadcurve/loadcurve/field"
	"github.com/loadcurve/loadcurve/sim"
)

const defaultSimProfile = "default"

// simFlags returns a flag for every sim parameter, named prefix+param (prefix "sim-" on run and
// sweep, where they are a category of their own, listed by --help-sim; none on `loadcurve sim`,
// whose flags they are). Unset flags keep the profile's value.
func simFlags(prefix string) []cli.Flag {
	cat := ""
	if prefix != "" {
		cat = catSim
	}
	flags := []cli.Flag{
		&cli.StringFlag{Name: prefix + "model", Category: cat, Value: "batching",
			Usage: "batching (a continuous-batching server, see --" + prefix + "profile) or mdc (an exact M/D/c FIFO queue, whose steady state is known: --" + prefix + "queue-*)"},
		&cli.StringFlag{Name: prefix + "profile", Category: cat, Value: defaultSimProfile,
			Usage: "simulated deployment profile: " + strings.Join(sim.ProfileNames(), ", ")},
	}
	if prefix != "" { // run and sweep: the embedded deployment may be several replicas
		flags = append(flags,
			&cli.IntFlag{Name: prefix + "replicas", Category: cat, Value: 1, Usage: fmt.Sprintf("serve the simulated deployment as this many replicas behind an in-process load balancer, on one address (1 to %d)", sim.MaxReplicas)},
			&cli.StringFlag{Name: prefix + "balance", Category: cat, Value: sim.BalanceRoundRobin, Usage: "how the balancer spreads requests over the replicas: " + strings.Join(sim.BalancePolicies(), " or ")},
			&cli.StringFlag{Name: prefix + "clock", Category: cat, Value: "real", Usage: "real (serve over HTTP in real time) or virtual (with --" + prefix +
				"model mdc: serve every tier with the queue's discrete-event model, no HTTP, in a fraction of a second a tier: the queue's steady state and the sweep's decisions on it, with a perfect client)"})
	}
	for _, p := range sim.Params() {
		flags = append(flags, &cli.StringFlag{Name: prefix + p.Name, Category: cat, DefaultText: p.Default + " in the " + defaultSimProfile + " profile",
			Usage: p.Usage})
	}
	flags = append(flags, simQueueFlags(prefix, cat)...)
	if prefix != "" {
		flags = append(flags, &cli.BoolFlag{Name: helpSimFlag, Category: cat,
			Usage: fmt.Sprintf("list the %d --%s* flags of the embedded deployment (its profile, engine, faults, replicas, or an exact M/D/c queue) and exit", len(flags), prefix)})
	}
	return flags
}

// simConfig builds the sim configuration from the profile and any overriding flags.
func simConfig(c *cli.Context, prefix string) (sim.Config, error) {
	cfg, errs := sim.ConfigFrom(c.String(prefix+"profile"), func(param string) (string, bool) {
		return c.String(prefix + param), c.IsSet(prefix + param)
	})
	for i, e := range errs {
		if fe := field.Of(e); fe != nil { // the sim names its profile and parameters: name their flags
			errs[i] = fmt.Errorf("--%s%s: %s", prefix, fe.Name, fe.Msg)
		}
	}
	return cfg, usageErrors(errs)
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
			var handler http.Handler
			var label, model string
			switch c.String("model") {
			case "mdc":
				q, err := queueConfig(c, "")
				if err != nil {
					return err
				}
				srv, err := sim.NewQueue(q)
				if err != nil {
					return usageError{err}
				}
				defer srv.Close()
				handler, label, model = srv, q.String(), q.ModelName
			case "batching":
				cfg, err := simConfig(c, "")
				if err != nil {
					return err
				}
				srv, err := sim.New(cfg)
				if err != nil {
					return usageError{err}
				}
				defer srv.Close()
				handler, label, model = srv, "profile "+c.String("profile"), cfg.ModelName
			default:
				return usagef("--model must be batching or mdc, got %q", c.String("model"))
			}
			ln, err := net.Listen("tcp", c.String("addr"))
			if err != nil {
				return fmt.Errorf("listen on --addr %s: %w", c.String("addr"), err)
			}
			fmt.Fprintf(c.App.ErrWriter, "loadcurve sim: %s serving model %q at http://%s/v1 (a model, not a measurement; Ctrl-C to stop)\n",
				label, model, ln.Addr())
			return sim.ServeOn(c.Context, ln, handler)
		},
	}
}
