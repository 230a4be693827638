package sim

import (
	"fmt"
	"slices"
	"strings"

	"github.com/loadcurve/loadcurve/internal/field"
	decl "github.com/loadcurve/loadcurve/internal/param" // sim has a param type of its own
)

// Names of a simulated deployment's settings besides its tunables (named as in Params), as a
// command that serves it names them; FieldQueue stands for the queue's tunables, each named
// FieldQueue, a dash and its QueueParams name.
const (
	FieldModel    = "model"
	FieldReplicas = "replicas"
	FieldBalance  = "balance"
	FieldClock    = "clock"
	FieldQueue    = "queue"
)

// The server models a simulated deployment can be, and the clocks an embedded one serves on.
const (
	ModelBatching = "batching" // a continuous-batching server (New, Config)
	ModelMDC      = "mdc"      // an exact M/D/c FIFO queue (NewQueue, QueueConfig)
	ClockReal     = "real"     // served over HTTP in real time
	ClockVirtual  = "virtual"  // the deployment's discrete-event model, no HTTP
)

// Settings are a simulated deployment as its user gives it: its server model and the batching
// server's profile, and, for a deployment a run embeds, its replicas, their balancer and the
// clock it serves on.
type Settings struct {
	Model, Profile string
	Replicas       int
	Balance, Clock string
}

// DefaultSettings returns the deployment nobody chose: one batching server of the default
// profile, in real time.
func DefaultSettings() Settings {
	return Settings{Model: ModelBatching, Profile: ProfileDefault, Replicas: 1, Balance: BalanceRoundRobin, Clock: ClockReal}
}

// Params declares the settings, bound to s: the model and the profile, and for an embedded
// deployment the replicas, the balancer and the clock.
func (s *Settings) Params(embedded bool) []decl.Param {
	ps := []decl.Param{
		decl.String(FieldModel, &s.Model, fmt.Sprintf("batching (a continuous-batching server, see %v) or mdc (an exact M/D/c FIFO queue, whose steady state is known: %v-*)",
			field.Ref(FieldProfile), field.Ref(FieldQueue))),
		decl.String(FieldProfile, &s.Profile, "simulated deployment profile: "+strings.Join(ProfileNames(), ", ")),
	}
	if !embedded {
		return ps
	}
	return append(ps,
		decl.Int(FieldReplicas, &s.Replicas, fmt.Sprintf("serve the simulated deployment as this many replicas behind an in-process load balancer, on one address (1 to %d)", MaxReplicas)),
		decl.String(FieldBalance, &s.Balance, "how the balancer spreads requests over the replicas: "+strings.Join(BalancePolicies(), " or ")),
		decl.String(FieldClock, &s.Clock, fmt.Sprintf("real (serve over HTTP in real time) or virtual (serve every tier with the deployment's discrete-event model, the batching engine's or, with %v mdc, the M/D/c queue's: no HTTP, seconds of CPU a sweep; its steady state and the sweep's decisions on it, with a perfect client)", field.Ref(FieldModel))))
}

// Params declares every tunable, bound to c and named as in Params (the package function),
// each given as text as Set reads it; the default said is the default profile's.
func (c *Config) Params() []decl.Param {
	def := defaultProfile()
	ps := make([]decl.Param, len(params))
	for i, p := range params {
		ps[i] = decl.Var(p.name, tunable{c, p}, p.usage).Default(p.get(&def) + " in the " + ProfileDefault + " profile")
	}
	return ps
}

// tunable is one of a Config's tunables as a param.Value.
type tunable struct {
	c *Config
	p param
}

func (t tunable) String() string { return t.p.get(t.c) }

// Set sets the tunable; a text it cannot read is a field.Error named by the tunable.
func (t tunable) Set(text string) error {
	if err := t.c.Set(t.p.name, text); err != nil {
		return field.Errorf(t.p.name, "%v", err)
	}
	return nil
}

// Check returns every problem of the settings, each a sentence that names its input: a server
// model that is neither ModelBatching nor ModelMDC and, for an embedded deployment, a clock that
// is neither ClockReal nor ClockVirtual, replicas outside 1 to MaxReplicas, a balancer not of
// BalancePolicies.
func (s Settings) Check(embedded bool) []error {
	var errs []error
	if s.Model != ModelBatching && s.Model != ModelMDC {
		errs = append(errs, field.Sentencef(FieldModel, "%v %s: want %s (a continuous-batching server) or %s (an exact M/D/c queue)", field.Ref(FieldModel), s.Model, ModelBatching, ModelMDC))
	}
	if !embedded {
		return errs
	}
	if s.Clock != ClockReal && s.Clock != ClockVirtual {
		errs = append(errs, field.Sentencef(FieldClock, "%v %s: want %s or %s", field.Ref(FieldClock), s.Clock, ClockReal, ClockVirtual))
	}
	if s.Replicas < 1 || s.Replicas > MaxReplicas {
		errs = append(errs, field.Sentencef(FieldReplicas, "%v: want 1 to %d replicas, got %d", field.Ref(FieldReplicas), MaxReplicas, s.Replicas))
	}
	if !slices.Contains(BalancePolicies(), s.Balance) {
		errs = append(errs, field.Sentencef(FieldBalance, "%v %q: want %s", field.Ref(FieldBalance), s.Balance, strings.Join(BalancePolicies(), " or ")))
	}
	return errs
}
