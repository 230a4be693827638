package sim

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/loadcurve/loadcurve/internal/field"
)

// Config holds every tunable of the simulated deployment. The zero value is
// not usable; start from Profile and adjust fields (or use Set). Its JSON
// form (durations in nanoseconds) is kept in a result's header, so that a
// rehearsal rebuilds the deployment that was measured.
type Config struct {
	// ModelName is the only model served; requests naming another get 404.
	ModelName string `json:"model_name"`
	// MaxNumSeqs caps the number of running sequences (vLLM --max-num-seqs).
	MaxNumSeqs int `json:"max_num_seqs"`
	// KVCacheTokens is the KV-cache budget in tokens (prompt plus generated
	// tokens of every running sequence). It must hold MaxModelLen.
	KVCacheTokens int `json:"kv_cache_tokens"`
	// MaxBatchedTokens is the per-step token budget (vLLM
	// --max-num-batched-tokens): each decoding sequence takes one token of it
	// first, prefill chunks share the rest. It must be at least MaxNumSeqs.
	MaxBatchedTokens int `json:"max_num_batched_tokens"`
	// StepBase is the fixed cost of one engine step.
	StepBase time.Duration `json:"step_base_ns"`
	// StepPerSeq is the added cost of each sequence in the step's batch.
	StepPerSeq time.Duration `json:"step_per_seq_ns"`
	// StepPerKVToken is the added cost of each KV-cache token the batch
	// attends to (the context of every scheduled sequence); 1 ns resolution.
	StepPerKVToken time.Duration `json:"step_per_kv_token_ns"`
	// PrefillRate is the prefill speed in prompt tokens per second.
	PrefillRate float64 `json:"prefill_tokens_per_s"`
	// MaxModelLen is the context length: prompt plus output tokens.
	MaxModelLen int `json:"max_model_len"`
	// BlockSize is the prefix-cache block size in tokens.
	BlockSize int `json:"block_size"`
	// PrefixCacheBlocks bounds the prefix cache (LRU) in blocks; 0 disables it.
	PrefixCacheBlocks int `json:"prefix_cache_blocks"`
	// Preempt selects vLLM's optimistic admission (a request needs only its
	// context plus one token of free KV) with preemption by recompute when
	// decoding outgrows the budget. Without it, admission reserves the
	// whole prompt plus max output tokens, and no preemption is ever needed.
	Preempt bool `json:"preempt"`
	// TokensPerChunk is the number of tokens one decode step yields per
	// sequence, sent as one SSE chunk (a speculative-decoding look-alike).
	TokensPerChunk int `json:"tokens_per_chunk"`
	// DefaultMaxTokens is the output length when a request sets none.
	DefaultMaxTokens int `json:"default_max_tokens"`
	// ReasoningShare is the share, in [0, 1), of each chat (or Responses API)
	// response's output tokens streamed as reasoning_content (reasoning
	// summary deltas) before the answer: the first floor(ReasoningShare·max
	// tokens) of them. 0 means no reasoning. Completions never reason.
	ReasoningShare float64 `json:"reasoning_share"`
	// ToolCalls answers chat requests that carry a non-empty tools array
	// with a call of the first tool (finish_reason "tool_calls"): the
	// answer tokens are streamed as the call's arguments instead of content.
	ToolCalls bool `json:"tool_calls"`
	// EOSProbability is the per-token chance of an early end of sequence
	// (finish_reason "stop"); 0 means every request runs to its max tokens.
	EOSProbability float64 `json:"eos_probability"`
	// EOSLengthMean, when > 0, draws the length at which a response ends at EOS from a
	// log-normal distribution of this mean and EOSLengthCV coefficient of variation (a heavy
	// tail: most responses short, a few very long) instead of EOSProbability's geometric one;
	// a length beyond max tokens ends at max tokens (finish_reason "length").
	EOSLengthMean float64 `json:"eos_length_mean,omitempty"`
	EOSLengthCV   float64 `json:"eos_length_cv,omitempty"`
	// ErrorRate is the share of requests answered with HTTP 500 or 503.
	ErrorRate float64 `json:"error_rate"`
	// StallRate is the share of streams that stop sending without ending.
	StallRate float64 `json:"stall_rate"`
	// DropRate is the share of streams whose connection is cut mid-stream.
	DropRate float64 `json:"drop_rate"`
	// Seed makes per-request choices (early stop, faults) reproducible.
	Seed int64 `json:"seed"`
}

// minStepBase keeps the engine from becoming a busy loop: the step timer
// could not honour shorter steps anyway.
const minStepBase = 100 * time.Microsecond

// Validate reports every problem of c at once (joined), or nil: a line per problem, which starts
// with the parameter's name (as in Params).
func (c Config) Validate() error {
	var errs []error
	for _, e := range c.problems() {
		errs = append(errs, errors.New(e.Error())) // plain text: a file's values are not a user's settings
	}
	return errors.Join(errs...)
}

// problems are Validate's problems: a field.Error named by its parameter for each one that
// concerns one parameter, a plain error for the fault rates' sum.
func (c Config) problems() []error {
	var errs []error
	bad := func(name, format string, a ...any) { errs = append(errs, field.Errorf(name, format, a...)) }
	if c.ModelName == "" {
		bad("model-name", "must not be empty")
	}
	if c.MaxNumSeqs < 1 {
		bad("max-num-seqs", "%d, must be at least 1", c.MaxNumSeqs)
	}
	if c.MaxModelLen < 2 {
		bad("max-model-len", "%d, must be at least 2", c.MaxModelLen)
	}
	if c.KVCacheTokens < c.MaxModelLen {
		bad("kv-cache-tokens", "%d, must hold at least max-model-len (%d) so any single request fits", c.KVCacheTokens, c.MaxModelLen)
	}
	if c.MaxBatchedTokens < c.MaxNumSeqs || c.MaxBatchedTokens < 1 {
		bad("max-num-batched-tokens", "%d, must be at least max-num-seqs (%d)", c.MaxBatchedTokens, c.MaxNumSeqs)
	}
	if c.StepBase < minStepBase {
		bad("step-base", "%v, must be at least %v", c.StepBase, minStepBase)
	}
	if c.StepPerSeq < 0 {
		bad("step-per-seq", "%v, must not be negative", c.StepPerSeq)
	}
	if c.StepPerKVToken < 0 {
		bad("step-per-kv-token", "%v, must not be negative", c.StepPerKVToken)
	}
	if !(c.PrefillRate > 0) || math.IsInf(c.PrefillRate, 0) {
		bad("prefill-rate", "%v, must be a positive finite number of tokens per second", c.PrefillRate)
	}
	if c.PrefixCacheBlocks < 0 {
		bad("prefix-cache-blocks", "%d, must not be negative", c.PrefixCacheBlocks)
	}
	if c.PrefixCacheBlocks > 0 && c.BlockSize < 1 {
		bad("block-size", "%d, must be at least 1 when the prefix cache is on", c.BlockSize)
	}
	if c.BlockSize < 0 {
		bad("block-size", "%d, must not be negative", c.BlockSize)
	}
	if c.TokensPerChunk < 1 {
		bad("tokens-per-chunk", "%d, must be at least 1", c.TokensPerChunk)
	}
	if c.DefaultMaxTokens < 1 {
		bad("default-max-tokens", "%d, must be at least 1", c.DefaultMaxTokens)
	}
	for _, p := range []struct {
		name string
		v    float64
	}{
		{"eos-probability", c.EOSProbability},
		{"error-rate", c.ErrorRate},
		{"stall-rate", c.StallRate},
		{"drop-rate", c.DropRate},
	} {
		if !(p.v >= 0 && p.v <= 1) {
			bad(p.name, "%v, must be in [0, 1]", p.v)
		}
	}
	if !(c.EOSLengthMean >= 0) || math.IsInf(c.EOSLengthMean, 0) {
		bad("eos-length-mean", "%v, must be a finite number of tokens >= 0 (0: none)", c.EOSLengthMean)
	}
	if !(c.EOSLengthCV >= 0 && c.EOSLengthCV <= 10) {
		bad("eos-length-cv", "%v, must be in [0, 10]", c.EOSLengthCV)
	}
	if c.EOSLengthMean > 0 && c.EOSProbability > 0 {
		bad("eos-length-mean", "%v with eos-probability %v: give one of the two ways to end at EOS", c.EOSLengthMean, c.EOSProbability)
	}
	if !(c.ReasoningShare >= 0 && c.ReasoningShare < 1) {
		bad("reasoning-share", "%v, must be in [0, 1)", c.ReasoningShare)
	}
	if s := c.ErrorRate + c.StallRate + c.DropRate; s > 1+1e-12 {
		errs = append(errs, fmt.Errorf("error-rate + stall-rate + drop-rate: %v, must not exceed 1", s))
	}
	return errs
}

// Param describes one tunable in flag style, for the CLI to generate flags.
type Param struct {
	Name, Usage, Default string
}

type param struct {
	name, usage string
	get         func(*Config) string
	set         func(*Config, string) error
}

// typedParam is a tunable of type T held at f(c): written by format, read by parse, whose
// error says what it wants.
func typedParam[T any](name, usage string, f func(*Config) *T, format func(T) string, parse func(string) (T, error), want string) param {
	return param{name, usage,
		func(c *Config) string { return format(*f(c)) },
		func(c *Config, v string) error {
			x, err := parse(v)
			if err != nil {
				return fmt.Errorf("want %s: %w", want, err)
			}
			*f(c) = x
			return nil
		}}
}

func intParam(name, usage string, f func(*Config) *int) param {
	return typedParam(name, usage, f, strconv.Itoa, strconv.Atoi, "an integer")
}

func durParam(name, usage string, f func(*Config) *time.Duration) param {
	return typedParam(name, usage, f, time.Duration.String, time.ParseDuration, "a duration such as 12ms or 150us")
}

func boolParam(name, usage string, f func(*Config) *bool) param {
	return typedParam(name, usage, f, strconv.FormatBool, strconv.ParseBool, "true or false")
}

func floatParam(name, usage string, f func(*Config) *float64) param {
	return typedParam(name, usage, f, func(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) },
		func(v string) (float64, error) { return strconv.ParseFloat(v, 64) }, "a number")
}

var params = []param{
	{"model-name", "model name served by the simulated deployment",
		func(c *Config) string { return c.ModelName },
		func(c *Config, v string) error { c.ModelName = v; return nil }},
	intParam("max-num-seqs", "maximum number of running sequences", func(c *Config) *int { return &c.MaxNumSeqs }),
	intParam("kv-cache-tokens", "KV-cache budget in tokens", func(c *Config) *int { return &c.KVCacheTokens }),
	intParam("max-num-batched-tokens", "token budget of one engine step (chunked prefill)", func(c *Config) *int { return &c.MaxBatchedTokens }),
	durParam("step-base", "fixed duration of one engine step", func(c *Config) *time.Duration { return &c.StepBase }),
	durParam("step-per-seq", "added step duration per sequence in the batch", func(c *Config) *time.Duration { return &c.StepPerSeq }),
	durParam("step-per-kv-token", "added step duration per KV-cache token in the batch", func(c *Config) *time.Duration { return &c.StepPerKVToken }),
	floatParam("prefill-rate", "prefill speed in prompt tokens per second", func(c *Config) *float64 { return &c.PrefillRate }),
	intParam("max-model-len", "context length (prompt + output tokens)", func(c *Config) *int { return &c.MaxModelLen }),
	intParam("block-size", "prefix-cache block size in tokens", func(c *Config) *int { return &c.BlockSize }),
	intParam("prefix-cache-blocks", "prefix-cache capacity in blocks (0 disables)", func(c *Config) *int { return &c.PrefixCacheBlocks }),
	boolParam("preempt", "optimistic admission with preemption by recompute (false: reserve prompt + max tokens)", func(c *Config) *bool { return &c.Preempt }),
	intParam("tokens-per-chunk", "tokens per decode step and SSE chunk (speculative-decoding look-alike)", func(c *Config) *int { return &c.TokensPerChunk }),
	intParam("default-max-tokens", "output length when a request sets no max_tokens", func(c *Config) *int { return &c.DefaultMaxTokens }),
	floatParam("reasoning-share", "share of each chat response's output tokens streamed as reasoning_content before the answer (0: no reasoning)", func(c *Config) *float64 { return &c.ReasoningShare }),
	boolParam("tool-calls", "answer chat requests that carry tools with a tool call (finish_reason tool_calls)", func(c *Config) *bool { return &c.ToolCalls }),
	floatParam("eos-probability", "per-token probability of an early stop (0: always run to max tokens)", func(c *Config) *float64 { return &c.EOSProbability }),
	floatParam("eos-length-mean", "mean length at which a response stops at EOS, log-normal (0: eos-probability decides)", func(c *Config) *float64 { return &c.EOSLengthMean }),
	floatParam("eos-length-cv", "coefficient of variation of the log-normal EOS length (with eos-length-mean)", func(c *Config) *float64 { return &c.EOSLengthCV }),
	floatParam("error-rate", "share of requests answered with HTTP 500/503", func(c *Config) *float64 { return &c.ErrorRate }),
	floatParam("stall-rate", "share of streams that stall until the client leaves", func(c *Config) *float64 { return &c.StallRate }),
	floatParam("drop-rate", "share of streams whose connection is cut mid-stream", func(c *Config) *float64 { return &c.DropRate }),
	{"seed", "seed of per-request choices (early stop, faults)",
		func(c *Config) string { return strconv.FormatInt(c.Seed, 10) },
		func(c *Config, v string) error {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				return fmt.Errorf("want an integer: %w", err)
			}
			c.Seed = n
			return nil
		}},
}

// Params lists every tunable with its flag-style name, a usage line and the
// default profile's value.
func Params() []Param {
	def := defaultProfile()
	out := make([]Param, len(params))
	for i, p := range params {
		out[i] = Param{Name: p.name, Usage: p.usage, Default: p.get(&def)}
	}
	return out
}

// Set sets the tunable called name (as in Params) from its text form. It
// does not validate the resulting Config; call Validate.
func (c *Config) Set(name, value string) error {
	for _, p := range params {
		if p.name == name {
			if err := p.set(c, value); err != nil {
				return fmt.Errorf("sim parameter %s=%q: %w", name, value, err)
			}
			return nil
		}
	}
	return fmt.Errorf("sim parameter %q: unknown (known: %s)", name, paramNames())
}

func paramNames() string {
	names := make([]string, len(params))
	for i, p := range params {
		names[i] = p.name
	}
	return strings.Join(names, ", ")
}

// Profile names.
const (
	ProfileDefault    = "default"
	ProfileLatency    = "latency"
	ProfileMedium     = "medium"
	ProfileThroughput = "throughput"
)

// DefaultModelName is the model name of every profile.
const DefaultModelName = "loadcurve-sim"

// base is what every profile shares: one imagined mid-size model.
func base() Config {
	return Config{
		ModelName:         DefaultModelName,
		StepPerKVToken:    40 * time.Nanosecond,
		MaxModelLen:       8192,
		BlockSize:         16,
		PrefixCacheBlocks: 4096,
		Preempt:           true,
		TokensPerChunk:    1,
		DefaultMaxTokens:  256,
	}
}

// defaultProfile is the embedded deployment of the first sweep a user runs: a small model
// served 8 sequences at a time with 8-token decode steps (speculative decoding) and short,
// cheap steps. Its requests are short-lived and few run at once, so misses cluster less (the
// variance factor of its compliant share near capacity was 7 to 12, against 14 to 25 with 24
// sequences of 4-token steps) and a decision at a 99 % target takes minutes, not a quarter of an
// hour.
func defaultProfile() Config {
	c := base()
	c.MaxNumSeqs = 8
	c.KVCacheTokens = 131072
	c.MaxBatchedTokens = 8192
	c.StepBase = 2 * time.Millisecond
	c.StepPerSeq = 250 * time.Microsecond
	c.StepPerKVToken = time.Nanosecond
	c.PrefillRate = 1_000_000
	c.TokensPerChunk = 8
	return c
}

func mediumProfile() Config {
	c := base()
	c.MaxNumSeqs = 64
	c.KVCacheTokens = 131072
	c.MaxBatchedTokens = 2048
	c.StepBase = 12 * time.Millisecond
	c.StepPerSeq = 150 * time.Microsecond
	c.PrefillRate = 40000
	return c
}

// ProfileObjectives are the latency objectives a profile's imagined deployment is held to:
// what a sweep of the embedded deployment uses when none are given (zero for an unknown
// profile). The default profile's bind before its raw throughput saturates (TPOT grows with the
// batch), so its curve shows compliant output falling while raw output still rises.
func ProfileObjectives(name string) Objectives {
	ms := func(ttft, tpot float64) Objectives {
		return Objectives{TTFT: time.Duration(ttft * float64(time.Millisecond)), TPOT: time.Duration(tpot * float64(time.Millisecond))}
	}
	switch name {
	case "", ProfileDefault:
		return ms(100, 0.75)
	case ProfileLatency:
		return ms(1000, 10)
	case ProfileMedium:
		return ms(1000, 20)
	case ProfileThroughput:
		return ms(2000, 25)
	}
	return Objectives{}
}

// Profile returns the named profile ("" means "default"). See the package
// documentation for what each imitates and its theoretical plateau.
func Profile(name string) (Config, error) {
	switch name {
	case "", ProfileDefault:
		return defaultProfile(), nil
	case ProfileMedium:
		return mediumProfile(), nil
	case ProfileLatency:
		c := base()
		c.MaxNumSeqs = 16
		c.KVCacheTokens = 65536
		c.MaxBatchedTokens = 1024
		c.StepBase = 8 * time.Millisecond
		c.StepPerSeq = 150 * time.Microsecond
		c.PrefillRate = 40000
		return c, nil
	case ProfileThroughput:
		c := base()
		c.MaxNumSeqs = 256
		c.KVCacheTokens = 262144
		c.MaxBatchedTokens = 8192
		c.StepBase = 12 * time.Millisecond
		c.StepPerSeq = 100 * time.Microsecond
		c.PrefillRate = 50000
		return c, nil
	}
	return Config{}, fmt.Errorf("sim profile %q: unknown (known: %s)", name, strings.Join(ProfileNames(), ", "))
}

// ProfileNames lists the profile names, sorted.
func ProfileNames() []string {
	n := []string{ProfileDefault, ProfileLatency, ProfileMedium, ProfileThroughput}
	slices.Sort(n)
	return n
}

// TheoreticalPeakOutput predicts the plateau output throughput, in tokens per
// second, for a saturating workload whose requests all have inputLen prompt
// tokens and outputLen output tokens (no early stop, no prefix reuse; for chat
// count the per-message overhead in inputLen). It returns 0 when such a
// request cannot be served.
//
// The approximation, for a queue that never empties:
//   - outputs are capped by the context: O = min(outputLen, MaxModelLen-inputLen);
//   - a request yields its first token when its prefill ends, then
//     TokensPerChunk (k) tokens a step: D = ceil((O-1)/k) decode steps;
//   - B sequences run at once: MaxNumSeqs, or fewer when the KV budget binds:
//     KVCacheTokens/(inputLen+O) with reservation (exact), or
//     KVCacheTokens/(inputLen+O/2) with Preempt (the mean context of a
//     sequence over its life; the cost of recomputing preempted sequences is
//     ignored, so this is optimistic when the KV budget binds);
//   - a prefill takes S = ceil(inputLen/(MaxBatchedTokens-B)) steps (the
//     budget left after one token per decoder; exact when a new request
//     prefills alone, as it does once arrivals are staggered);
//   - a slot is held S+D steps, so requests start at r = B/(S+D) per step,
//     bounded by the prefill budget (MaxBatchedTokens-B)/inputLen;
//   - the mean step lasts StepBase + StepPerSeq*Beff + StepPerKVToken*Beff*C
//   - r*inputLen/PrefillRate, with Beff = r*(S+D) sequences in the batch
//     and C their mean context over a life (step durations are linear in
//     their inputs, so the mean step follows from the mean inputs);
//   - the plateau is r*O tokens per mean step.
//
// Step lateness does not enter: the engine sleeps to absolute deadlines, so
// lateness delays tokens without slowing the step clock.
func (c Config) TheoreticalPeakOutput(inputLen, outputLen int) float64 {
	if inputLen < 1 || outputLen < 1 || c.Validate() != nil || inputLen >= c.MaxModelLen {
		return 0
	}
	o := min(outputLen, c.MaxModelLen-inputLen)
	k := c.TokensPerChunk
	d := (o - 1 + k - 1) / k
	perSeq := float64(inputLen + o)
	if c.Preempt {
		perSeq = float64(inputLen) + float64(o)/2
	}
	b := min(float64(c.MaxNumSeqs), math.Floor(float64(c.KVCacheTokens)/perSeq))
	b = max(b, 1)
	budget := float64(c.MaxBatchedTokens) - b
	if budget < 1 {
		budget = 1
	}
	s := math.Ceil(float64(inputLen) / budget)
	r := min(b/(s+float64(d)), budget/float64(inputLen))
	beff := r * (s + float64(d))
	// Mean context over a life: S prefill steps ending at inputLen (chunk j
	// of S ends at inputLen*j/S), then decode step j ends at
	// inputLen + 1 + min(j*k, O-1).
	sum := 0.0
	for j := 1; j <= int(s); j++ {
		sum += float64(inputLen) * float64(j) / s
	}
	for j := 1; j <= d; j++ {
		sum += float64(inputLen + 1 + min(j*k, o-1))
	}
	ctx := sum / (s + float64(d))
	step := c.StepBase.Seconds() + c.StepPerSeq.Seconds()*beff +
		c.StepPerKVToken.Seconds()*beff*ctx + r*float64(inputLen)/c.PrefillRate
	return r * float64(o) / step
}
