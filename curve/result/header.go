package result

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/loadcurve/loadcurve/measure/records"
)

// Run is what a records header says about a run or a sweep, as parsed values: the header is
// built from it once (NewHeader), never from the text of a flag.
type Run struct {
	Version string
	Command records.Command
	// Target is the base URL without its secrets; Endpoint the kind of API; Model the model.
	Target, Endpoint, Model string
	// Unit is what the endpoint kind's throughputs count (loadgen.Endpoint.Unit); written only
	// when it is not output tokens, so that other results' headers stay as they were.
	Unit records.Unit
	// Workload describes the request set, CachePolicy its cache policy, Tokenizer the tokenizer
	// its prompts were sized in ("NAME (sha256:…)", "" for words).
	Workload, CachePolicy, Tokenizer string
	// Schedule is the arrival process: a run's schedule, or a sweep's (SweepSchedule). Its
	// String is written, so it must print parsed values (1 and 1.0 alike).
	Schedule       fmt.Stringer
	Seed           int64
	MaxConcurrency int
	// ExtraBody is what is merged into every request body, its secrets already hidden.
	ExtraBody json.RawMessage
	Timeout   time.Duration
	Retries   int
	// Shard is the shard's "i/k", "" when not sharded.
	Shard           string
	RequestIDPrefix string
	// Label and Metadata are the user's names for the run; Settings the analysis inputs.
	Label    string
	Metadata records.Metadata
	Settings *records.Settings
	// Sim is the embedded deployment, when it was the target (nil otherwise).
	Sim *Sim
	// Started is the wall-clock time the header is written for.
	Started time.Time
	// Clean, when set, is applied to every name the user or the server chose (the model, the
	// label, the metadata, the request-id prefix): it hides secrets and control characters.
	Clean func(string) string
}

// Sim is the embedded deployment a result measured.
type Sim struct {
	// Name is its name in results (the profile, or the queue's description, with the replicas
	// and their balancer).
	Name string
	// Config (the engine's) or QueueConfig (the M/D/c queue's) is its whole configuration.
	Config, QueueConfig json.RawMessage
	// Replicas behind a Balance balancer (0 and "" for one).
	Replicas int
	Balance  string
}

// NewHeader builds a records header from parsed values: the one constructor of the header
// line that a run, a sweep and each shard of them write.
func NewHeader(r Run) records.Header {
	clean := r.Clean
	if clean == nil {
		clean = func(s string) string { return s }
	}
	h := records.Header{
		Kind: records.KindHeader, Tool: "loadcurve", MetricsVersion: records.MetricsVersion, Version: r.Version,
		Command: r.Command, Target: r.Target, Endpoint: r.Endpoint, Model: clean(r.Model),
		Workload: r.Workload, Tokenizer: r.Tokenizer, CachePolicy: r.CachePolicy, Seed: r.Seed, MaxConcurrency: r.MaxConcurrency,
		ExtraBody: r.ExtraBody, TimeoutS: r.Timeout.Seconds(), Retries: r.Retries, StartWall: r.Started, Shard: r.Shard,
		RequestIDPrefix: clean(r.RequestIDPrefix), Label: clean(r.Label), Settings: r.Settings,
	}
	if r.Unit.Or() != records.UnitOutputTokens {
		h.Unit = r.Unit
	}
	if r.Schedule != nil {
		h.Arrival = r.Schedule.String()
	}
	for _, p := range r.Metadata {
		h.Metadata = append(h.Metadata, records.MetaPair{Key: clean(p.Key), Value: clean(p.Value)})
	}
	if s := r.Sim; s != nil {
		h.Sim, h.SimConfig, h.SimQueueConfig = s.Name, s.Config, s.QueueConfig
		if s.Replicas > 1 {
			h.SimReplicas, h.SimBalance = s.Replicas, s.Balance
		}
	}
	return h
}

// SweepSchedule is a sweep's schedule as its header names it: its tiers (the rates, as the
// planner prints them) and the burstiness of their arrivals.
type SweepSchedule struct {
	Tiers      fmt.Stringer
	Burstiness float64
}

// String gives e.g. "sweep(1,2,4, burstiness=1)": the burstiness printed from its value, so
// that 1 and 1.0 are the same schedule.
func (s SweepSchedule) String() string {
	tiers := ""
	if s.Tiers != nil {
		tiers = s.Tiers.String()
	}
	return fmt.Sprintf("sweep(%s, burstiness=%s)", tiers, number(s.Burstiness))
}

// number prints a value as the flags read it back: the shortest decimal, or inf.
func number(v float64) string {
	if math.IsInf(v, 1) {
		return "inf"
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// VirtualTarget is the target a header names when the embedded M/D/c queue was served on the
// virtual clock (its discrete-event model, no address, nothing sent); VirtualEngineTarget when
// the batching engine was.
const (
	VirtualTarget       = "the virtual clock (the embedded M/D/c queue's discrete-event model; no HTTP)"
	VirtualEngineTarget = "the virtual clock (the embedded batching engine's discrete-event model; no HTTP)"
)

// IsVirtual reports whether a header's target is the virtual clock.
func IsVirtual(h records.Header) bool {
	return h.Target == VirtualTarget || h.Target == VirtualEngineTarget
}

// LoadWords names a result's target-seconds as people read them after a duration: load on
// the target, or virtual load when nothing was sent (VirtualTarget).
func LoadWords(h records.Header) string {
	switch h.Target {
	case VirtualTarget:
		return "of virtual load (the queue's model on the virtual clock)"
	case VirtualEngineTarget:
		return "of virtual load (the engine's model on the virtual clock)"
	}
	return "of load on the target"
}
