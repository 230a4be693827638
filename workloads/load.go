package workloads

import (
	"fmt"
	"path/filepath"
	"strings"
)

// Workload kinds and file formats of a Load spec.
const (
	KindSynthetic    = "synthetic"
	KindSharedPrefix = "shared-prefix"
	KindSessions     = "sessions"
	FormatJSONL      = "jsonl"
	FormatShareGPT   = "sharegpt"
)

// LoadOptions are the parameters a Load spec may need. Only the part the spec names is used.
type LoadOptions struct {
	// N is the number of requests to generate for synthetic and shared-prefix (required, >= 1),
	// and of sessions for sessions; for files and traces, the most requests to keep, the first in
	// file order (0 = all), and the most sessions for a file of sessions (a JSONL file with
	// "session" keys, a ShareGPT file read with ShareGPT.MultiTurn).
	N int
	// Seed seeds all generated text: synthetic, shared-prefix and sessions sets (it replaces their
	// own Seed) and the prompts of traces.
	Seed int64
	// Synthetic parameterises "synthetic" (Seed replaced by LoadOptions.Seed).
	Synthetic Synthetic
	// SharedPrefix parameterises "shared-prefix" (Seed replaced by LoadOptions.Seed).
	SharedPrefix SharedPrefix
	// Sessions parameterises "sessions": its Synthetic (the per-turn lengths) is replaced by
	// LoadOptions.Synthetic, and its Seed by LoadOptions.Seed.
	Sessions SyntheticSessions
	// ShareGPT filters ShareGPT files (Max replaced by N).
	ShareGPT ShareGPTOptions
	// TimeScale multiplies trace offsets (0 means 1; 0.5 replays twice as fast).
	TimeScale float64
	// Tokenizer, when set, sizes generated prompts in its tokens (it replaces the generators'
	// own Tokenizer); a file's prompts are counted with it by Source.CountInputTokens.
	Tokenizer Tokenizer
}

// withTokenizer gives the generators opts.Tokenizer.
func (opts LoadOptions) withTokenizer() LoadOptions {
	if opts.Tokenizer != nil {
		opts.Synthetic.Tokenizer = opts.Tokenizer
		opts.SharedPrefix.Tokenizer = opts.Tokenizer
	}
	return opts
}

// Load materialises the request set a spec names, the value of the CLI's --workload:
//
//	synthetic           Synthetic, opts.N requests
//	shared-prefix       SharedPrefix, opts.N requests
//	sessions            SyntheticSessions, opts.N sessions
//	jsonl:FILE          LoadJSONL (the user's requests, or a set written by Save)
//	sharegpt:FILE       LoadShareGPT
//	azure:FILE          an Azure LLM inference trace (LoadTrace, TraceRequests)
//	mooncake:FILE       a Mooncake trace
//	FILE                by extension: .jsonl → jsonl, .json → sharegpt, .csv → azure
//
// A prefix before ':' that is not a format is part of the file name. For a trace, the returned
// Trace is non-nil and is also the schedule: its Offsets are the arrivals of the set's requests.
// Set.Notes carries remarks for the user (skipped entries, short files). A set of sessions
// (SessionCount > 0) has passed ValidateSessions.
func Load(spec string, opts LoadOptions) (*Set, *Trace, error) {
	opts = opts.withTokenizer()
	kind, path := splitSpec(spec)
	if opts.N < 0 {
		return nil, nil, fmt.Errorf("workload %q: the request count must not be negative, got %d", spec, opts.N)
	}
	if err := checkGeneratedSize(kind, opts); err != nil {
		return nil, nil, err
	}
	var (
		set *Set
		tr  *Trace
		err error
	)
	switch kind {
	case KindSynthetic:
		s := opts.Synthetic
		s.Seed = opts.Seed
		set, err = s.Generate(opts.N)
	case KindSharedPrefix:
		s := opts.SharedPrefix
		s.Seed = opts.Seed
		set, err = s.Generate(opts.N)
	case KindSessions:
		set, err = opts.sessions().Generate(opts.N)
	case FormatJSONL:
		set, err = LoadJSONL(path)
		if err == nil {
			set = head(set, opts.N)
		}
	case FormatShareGPT:
		o := opts.ShareGPT
		o.Max, o.Tokenizer = opts.N, opts.Tokenizer
		set, err = LoadShareGPT(path, o)
	case TraceAzure, TraceMooncake:
		scale := opts.TimeScale
		if scale == 0 {
			scale = 1
		}
		tr, err = LoadTrace(path, kind, scale)
		if err == nil {
			tr = tr.Head(opts.N)
			set, err = SizedTraceRequests(tr, opts.Seed, opts.Tokenizer)
		}
		if err == nil {
			set.Notes = append(set.Notes, tr.Notes...)
		}
	default:
		return nil, nil, fmt.Errorf("workload %q: unknown kind; use synthetic, shared-prefix, sessions, FILE.jsonl, FILE.json (ShareGPT), FILE.csv (Azure trace) or FORMAT:FILE with FORMAT jsonl, sharegpt, azure or mooncake", spec)
	}
	if err != nil {
		return nil, nil, err
	}
	if err := ValidateSessions(set.Requests); err != nil {
		return nil, nil, fmt.Errorf("workload %q: %w", spec, err)
	}
	generated := kind == KindSynthetic || kind == KindSharedPrefix || kind == KindSessions
	if k := set.SessionCount(); k > 0 && opts.N > 0 && k < opts.N && !generated {
		set.Notes = append(set.Notes, fmt.Sprintf("%d sessions asked for, the file has %d", opts.N, k))
	} else if k == 0 && opts.N > 0 && len(set.Requests) < opts.N && !generated {
		set.Notes = append(set.Notes, fmt.Sprintf("%d requests asked for, the file has %d", opts.N, len(set.Requests)))
	}
	return set, tr, nil
}

// sessions is the SyntheticSessions of "sessions": opts.Sessions with opts' lengths and seed.
func (opts LoadOptions) sessions() SyntheticSessions {
	s := opts.Sessions
	s.Synthetic = opts.Synthetic
	s.Seed = opts.Seed
	return s
}

// splitSpec splits a Load spec into its kind and file.
func splitSpec(spec string) (kind, path string) {
	switch spec {
	case "", KindSynthetic:
		return KindSynthetic, ""
	case KindSharedPrefix:
		return KindSharedPrefix, ""
	case KindSessions:
		return KindSessions, ""
	}
	if k, p, ok := strings.Cut(spec, ":"); ok {
		switch k {
		case FormatJSONL, FormatShareGPT, TraceAzure, TraceMooncake:
			return k, p
		}
	}
	switch strings.ToLower(filepath.Ext(spec)) {
	case ".jsonl":
		return FormatJSONL, spec
	case ".json":
		return FormatShareGPT, spec
	case ".csv":
		return TraceAzure, spec
	}
	return "", spec
}

// head keeps a set's first n requests (all when n is 0 or larger than the set), or its first n
// sessions for a set of sessions.
func head(set *Set, n int) *Set {
	if set.SessionCount() > 0 {
		return headSessions(set, n)
	}
	if n <= 0 || n >= len(set.Requests) {
		return set
	}
	out := NewSet(fmt.Sprintf("%s[:%d]", set.Source, n), set.Requests[:n:n])
	out.Notes, out.Tokenizer = set.Notes, set.Tokenizer
	return out
}
