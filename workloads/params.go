package workloads

import (
	"fmt"

	"github.com/loadcurve/loadcurve/internal/field"
	"github.com/loadcurve/loadcurve/internal/param"
)

// FieldMultiTurn names the choice to read ShareGPT conversations whole (ShareGPTOptions.MultiTurn).
const FieldMultiTurn = "ShareGPT multi-turn"

// The defaults of the generated sets' shapes.
const (
	DefaultGroups    = 8   // shared-prefix groups
	DefaultPrefixLen = 512 // tokens of a group's prefix
	DefaultSuffixLen = 64  // tokens unique to each request of a group
	DefaultTurns     = 4   // turns of a synthetic session
)

// Settings are the user's choices about a workload: what to send (Spec, Load's spec), the cache
// policy (NewSource's; empty for the source's own) and the options of the sets generated or read.
// Options.N and Options.Seed come from the load, not from here.
type Settings struct {
	Spec    string
	Cache   string
	Options LoadOptions
}

// DefaultSettings returns the settings of a source nobody chose anything about: synthetic
// requests of the default lengths, each kind's shape at its default.
func DefaultSettings() Settings {
	return Settings{Spec: KindSynthetic, Options: LoadOptions{
		Synthetic:    Synthetic{InputLen: DefaultInputLen, OutputLen: DefaultOutputLen, Dist: DistUniform},
		SharedPrefix: SharedPrefix{Groups: DefaultGroups, PrefixLen: DefaultPrefixLen, SuffixLen: DefaultSuffixLen},
		Sessions:     SyntheticSessions{Turns: DefaultTurns, ThinkDist: ThinkFixed},
		TimeScale:    1,
	}}
}

// Params declares the settings, bound to s. One output length serves synthetic, shared-prefix
// and session requests, and one think time sessions and multi-turn ShareGPT: LoadOptions
// shares them.
func (s *Settings) Params() []param.Param {
	o := &s.Options
	return []param.Param{
		param.String(FieldWorkload, &s.Spec, "request source: synthetic, shared-prefix, sessions (multi-turn conversations), FILE.jsonl (your requests or sessions), FILE.json (ShareGPT), FILE.csv (Azure trace), or FORMAT:FILE with FORMAT jsonl, sharegpt, azure, mooncake"),
		param.Int(FieldInputLen, &o.Synthetic.InputLen, "synthetic prompt length in tokens"),
		param.Int(FieldOutputLen, &o.Synthetic.OutputLen, "synthetic and shared-prefix output length in tokens (sent as max_tokens)"),
		param.Float(FieldRangeRatio, &o.Synthetic.RangeRatio, "uniform: lengths in [len·(1-r), len·(1+r)]; normal/lognormal: coefficient of variation"),
		param.String(FieldLengthDist, &o.Synthetic.Dist, "synthetic length distribution: uniform, normal or lognormal (mean = the length)"),
		param.Int(FieldGroups, &o.SharedPrefix.Groups, "shared-prefix: number of groups (request i belongs to group i mod G)"),
		param.Int(FieldGroupPrefixLen, &o.SharedPrefix.PrefixLen, "shared-prefix: tokens of the prefix common to a group"),
		param.Int(FieldSuffixLen, &o.SharedPrefix.SuffixLen, "shared-prefix: tokens unique to each request"),
		param.Int(FieldTurns, &o.Sessions.Turns, "sessions: turns per conversation; each turn is sent with the whole history (earlier turns and the actual replies)"),
		param.Float(FieldTurnsRangeRatio, &o.Sessions.TurnsRangeRatio, "sessions: turns drawn uniformly from [turns·(1-r), turns·(1+r)]"),
		param.Int(FieldSystemLen, &o.Sessions.SystemLen, "sessions: tokens of a system prompt opening each conversation").Default("0: none"),
		param.Duration(FieldThink, &o.Sessions.Think, fmt.Sprintf("sessions and %v: the user's think time between a response's end and the next turn, e.g. 5s", field.Ref(FieldMultiTurn))),
		param.String(FieldThinkDist, &o.Sessions.ThinkDist, fmt.Sprintf("sessions: think time distribution: fixed or exponential (mean = %v)", field.Ref(FieldThink))),
		param.Bool(FieldMultiTurn, &o.ShareGPT.MultiTurn, "ShareGPT: every conversation is a session of all its turns").Default("off: its first exchange only"),
		param.Float(FieldTimeScale, &o.TimeScale, "trace replay: multiply the trace's arrival times (0.5 = twice as fast)"),
		param.String(FieldCache, &s.Cache, "cache policy: cold (a fresh nonce in front of every prompt, per tier), warm (send the tier's requests once unmeasured first) or replay (send exactly as given)").Default("cold for generated workloads, replay for files and traces"),
	}
}

// LoadOptions returns the options with the shared settings in every place that reads them: the
// output length in SharedPrefix too, the think time in ShareGPT's when it reads conversations
// whole.
func (s Settings) LoadOptions() LoadOptions {
	o := s.Options
	o.SharedPrefix.OutputLen = o.Synthetic.OutputLen
	if o.ShareGPT.MultiTurn {
		o.ShareGPT.Think = o.Sessions.Think
	}
	return o
}
