package measure

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/loadcurve/loadcurve/curve/shadow"
	"github.com/loadcurve/loadcurve/measure/records"
)

// DefaultMaxScheduleLag is the default floor of the p99 of schedule_lag: a lag below it never
// counts; above it, its effect decides (judgeLag).
const DefaultMaxScheduleLag = 5 * time.Millisecond

// LagBurstinessLimit: the client's lag is judged by its effect on what the deployment was
// offered. Released late, requests bunch: the counts of requests sent in windows of a quarter of
// the requests' median end-to-end latency (the deployment's own time scale) vary more than the
// counts the schedule planned. A tier is client-bound by lag when that variance exceeds the
// planned one by more than this fraction (LagBurstiness). On an M/D/c queue with 64 slots at its
// capacity for a 100 ms TTFT objective (290 req/s, where bunching moves the miss rate most),
// dispatcher pauses that made the releases 7 % burstier moved the miss rate by 2 % of itself,
// 12 % burstier by 4 %, 90 % by 43 % (40 paired 20,000-request tiers each;
// TestLagBurstinessBoundsItsEffect): within the limit the capacity moves by well under a
// percent, while a 20 to 30 ms lag on a busy two-core machine (5 to 8 % burstier against the
// embedded deployment's 57 ms requests) no longer discards the tier.
const LagBurstinessLimit = 0.10

// LagPlannedFraction: objectives counted from the planned arrival (client_queue_time,
// e2el_including_client_queue) contain the lag itself; a p99 lag above this fraction of the
// smallest of them changed what was measured.
const LagPlannedFraction = 0.05

// Options say how to summarise a tier.
type Options struct {
	Objectives  Objectives
	Percentiles []float64 // on the 0–100 scale; nil means DefaultPercentiles
	// MaxScheduleLag is the floor of the p99 of schedule_lag below which the client's lag never
	// makes a tier client-bound (above it, its effect does: judgeLag); zero or negative means
	// DefaultMaxScheduleLag.
	MaxScheduleLag time.Duration
	// Warmup and Cooldown define an optional steady-state window on planned time (see the
	// package documentation); both zero means the whole tier, and negative values count as zero.
	Warmup, Cooldown time.Duration
	// Metrics names the metrics whose statistics the summary reports (MetricNames; vLLM's
	// --percentile-metrics); nil means all. Every metric is computed either way.
	Metrics []string
	// Unit is what the raw and compliant token counts and throughputs count: the endpoint
	// kind's (records.Header.Unit). "" or UnitOutputTokens: output tokens; UnitInputTokens (an
	// embeddings endpoint): the input tokens of the ok requests, delivered at their end.
	Unit records.Unit
}

// Summary is the summary of one tier. Times are milliseconds in Stats and seconds in Duration;
// throughputs are per second of Duration. NaN marks an undefined quantity (see the package
// documentation).
type Summary struct {
	MetricsVersion string // records.MetricsVersion of the definitions used
	Tier           int
	Role           records.Role // what the tier was for (records.Tier.Role; "" in older files)
	Arrival        string
	// Complete is false when the tier visibly did not run to its end: fewer requests issued than
	// planned, any request cancelled (by an interruption or the drain deadline), or its closing
	// line says it was interrupted. Recorded < Planned (records missing: the run was killed) and
	// Interrupted say more.
	Complete    bool
	Interrupted bool   // the tier's closing line says the run was stopped during it
	EndReason   string // the closing line's reason (records.Ended*), "" without one
	Recorded    int    // request lines of the tier
	Window      string // "" for the whole tier, else the window that was applied

	Duration float64 // seconds, see the package documentation

	Planned, Issued, Completed, Failed int
	// NotIssued counts the recorded requests that were never dispatched (canceled before their
	// turn); Issued + NotIssued = Recorded, which is Planned unless records are missing.
	NotIssued int
	// Outcomes counts every outcome of records.Outcomes over the recorded requests, issued or
	// not: they add up to Issued + NotIssued. Failed and the ratios are over issued requests.
	Outcomes map[string]int

	TotalInputTokens int // ok requests (vLLM's total_input_tokens)
	// TotalRequestedInputTokens is what the request set asked for, by its own count (words,
	// or the --tokenizer's tokens), over the same ok requests: set beside TotalInputTokens,
	// the server's count when it reports one, it shows a prompt sized in other units.
	TotalRequestedInputTokens int
	TotalOutputTokens         int // ok requests (vLLM's total_output_tokens)
	// Unit is what RawOutputTokens, CompliantOutputTokens, their throughputs and the steady
	// state's count (Options.Unit): "" for output tokens, UnitInputTokens for an embeddings
	// endpoint, whose "output" figures then count the input tokens of the ok requests.
	Unit                   records.Unit
	RawOutputTokens        int // every issued request
	CompliantOutputTokens  int // compliant requests
	OutputTokensFromChunks int // issued requests whose output count came from counting chunks, not usage
	OutputTokensBadUsage   int // of those, the requests whose server sent a usage message that could not be believed (records.Record.UsageRejected says why)
	// InputTokensBadUsage counts the issued requests whose usage.prompt_tokens could not be
	// believed (more than the request could carry): their input is the workload's count.
	InputTokensBadUsage int
	// Stalls counts the timeouts that were stalls: the tier's drain deadline found the server
	// silent on them (records.StallPrefix), the server's failure.
	Stalls int
	// CutShort counts the ok requests the server cut short (CutShort: finish_reason "length"
	// below the max_tokens sent); those of one token or none miss a TPOT objective.
	CutShort int

	RequestThroughput         float64 // Completed / Duration
	RequestGoodput            float64 // GoodRequests / Duration; NaN when there are no objectives (vLLM writes null)
	OutputThroughput          float64 // TotalOutputTokens / Duration
	TotalTokenThroughput      float64 // (TotalInputTokens + TotalOutputTokens) / Duration
	RawOutputThroughput       float64 // RawOutputTokens / Duration
	CompliantOutputThroughput float64 // CompliantOutputTokens / Duration ("effective output")

	GoodRequests      int // ok and every latency objective met
	CompliantRequests int // good and quality not failed
	LatencyFailures   int // ok requests missing a latency objective
	QualityFailures   int // ok requests whose quality check failed

	CompliantTokenShare   float64 // CompliantOutputTokens / RawOutputTokens
	CompliantRequestShare float64 // CompliantRequests / Issued
	TimeoutRatio          float64 // timeouts / Issued
	FailureRatio          float64 // Failed / Issued

	NominalRate    float64 // the tier's request rate; +Inf for inf, NaN when it has none (a trace replay)
	Burstiness     float64 // the tier's burstiness
	RealisedRate   float64 // arrivals of the tier / latest planned arrival: the offered rate of the schedule actually drawn (sessions/s for sessions)
	DeliveredRate  float64 // requests sent / latest sent offset: the rate the server was actually offered, after the dispatcher and the concurrency gate
	MaxConcurrency int     // 0 means no cap
	// Users is the concurrency level of a closed-loop tier (records.Tier.Users; 0: an open one,
	// whose arrivals the schedule planned). Its RealisedRate is then the rate its users produced.
	Users int

	Objectives  string    // Objectives.String() of the objectives used
	Percentiles []float64 // the percentiles in the Stats
	Metrics     []string  // the metrics whose statistics are reported (Options.Metrics); nil: all
	// PercentileError is 0 when medians and percentiles are exact (Summarize, Accumulator), else
	// their relative error bound (ApproxAccumulator).
	PercentileError float64

	TTFT, TPOT, ITL, E2EL, ClientQueueTime, E2ELIncludingClientQueue, ScheduleLag Stats
	// TTFA (time to the first answer token) and AnswerITL (gaps between answer chunks) are the
	// answer's TTFT and ITL: what a reasoning model's user waits for. Without reasoning they
	// equal TTFT and ITL (and are reported only when some response reasoned: Reports).
	TTFA, AnswerITL Stats

	// Reasoning: responses of ok requests that streamed reasoning or reported reasoning tokens,
	// their reasoning tokens, the ok requests' answer tokens (TotalOutputTokens less reasoning),
	// and the responses whose reasoning tokens were estimated from chunks (no usage detail).
	ReasoningResponses, ReasoningTokens, AnswerTokens, ReasoningTokensFromChunks int
	// Prefix cache, from usage.prompt_tokens_details.cached_tokens: the ok requests that
	// reported it, their cached prompt tokens, and the share of their prompt tokens that was
	// cached (NaN when none reported).
	CachedReported, CachedPromptTokens int
	CachedPromptShare                  float64

	// Sessions summarises the turns of conversations (nil when the tier had none).
	Sessions *Sessions

	// CPU is what the client's process and the machine's CPUs spent over the tier (its closing
	// line's); nil where not read (a virtual clock's tier, older records).
	CPU *records.TierCPU

	ClientBound          bool
	ClientBoundReason    string
	ClientBoundThreshold float64 // ms: the floor on the p99 of schedule_lag that was applied
	// ScheduleLagNote says when the lag's p99 passed the floor (MaxScheduleLag) but did not
	// change what the deployment was offered or what was measured, so the tier was kept ("" otherwise).
	ScheduleLagNote string

	// Steady is the tier's steady state (see Steady), nil when no request was issued.
	Steady *Steady
}

// Summarizer summarises one tier from its records, one at a time: [Accumulator] exactly,
// [ApproxAccumulator] in bounded memory. tier is the tier's identity as its records file states
// it (records.Tier, with its closing line when it has one).
type Summarizer interface {
	Add(*records.Record)
	Summary(tier records.Tier) Summary
}

var (
	_ Summarizer = (*Accumulator)(nil)
	_ Summarizer = (*ApproxAccumulator)(nil)
)

// NewSummarizer returns an exact summarizer, or with bounded a bounded-memory one (whose
// percentiles are within DefaultSketchError). Neither supports a cooldown window: it needs the
// tier's duration before the first record (Summarize handles it).
func NewSummarizer(opts Options, bounded bool) (Summarizer, error) {
	if bounded {
		return NewApproxAccumulator(opts, 0)
	}
	return NewAccumulator(opts)
}

// Summarize computes the summary of one tier from its records (the caller selects the tier's
// records; their Tier field is not looked at). Besides recs, which it does not modify or keep,
// it holds one 8-byte value per sample of each metric (ITL: one per gap) and one Obs per issued
// request, in arrays sized by a first pass, and orders each array only as far as its statistics
// need (selectRanks).
func Summarize(recs []records.Record, tier records.Tier, opts Options) Summary {
	// Pass 1: the whole-tier duration (needed by a cooldown) and the sizes of the metric arrays.
	var end time.Duration
	var oks, issued, gaps int
	for i := range recs {
		r := &recs[i]
		end = max(end, r.End)
		if r.Dispatched == records.Unset {
			continue
		}
		issued++
		if r.Outcome == records.OK {
			oks++
			gaps += len(r.ITL)
		}
	}
	a := newAccumulator(opts, end, capacities{oks: oks, issued: issued, gaps: gaps})
	for i := range recs {
		a.Add(&recs[i])
	}
	return a.Summary(tier)
}

// Accumulator summarises a tier one record at a time, for record files too big to hold in
// memory: it keeps the metric values, never the records. It supports a warmup but not a
// cooldown, which needs the tier's duration before the first record (use Summarize for that).
type Accumulator struct {
	opts          Options
	lo, hi        time.Duration // window on planned time, inclusive
	hasWindow     bool
	fixedDuration time.Duration // whole-tier duration known in advance (Summarize), else -1

	// whole tier
	n, allIssued, canceled, sent int
	arrivals                     int // records that are arrivals of the schedule (all but later turns)
	clientResources              int // failed requests the client's own resources failed
	end, lastPlanned, lastSent   time.Duration

	// inside the window
	s        Summary
	outcomes [8]int
	// Durations stay integer nanoseconds until described: integers compare faster than floats
	// (no NaN case) and convert to milliseconds exactly for whole milliseconds.
	ttft, itl, e2el, cq, e2elCQ, lag []time.Duration
	tpot                             []float64 // ms: not a whole number of nanoseconds
	// The answer's metrics. ttft and itl hold the values of responses without reasoning, which
	// are their answer's too; those of responses with reasoning go to ttftReasoned and
	// itlReasoned, and their answer's to ttfaReasoned and answerReasoned: nothing is held twice
	// when nothing reasoned.
	ttftReasoned, ttfaReasoned, itlReasoned, answerReasoned []time.Duration
	cachedOfBase                                            int // prompt tokens of the ok requests that reported cached tokens
	sessions                                                sessionAcc

	obs []Obs // every issued request, for the steady state
}

type capacities struct{ oks, issued, gaps int }

// NewAccumulator starts a streaming summary. It fails when opts has a cooldown.
func NewAccumulator(opts Options) (*Accumulator, error) {
	if opts.Cooldown > 0 {
		return nil, errors.New("streaming summary: a cooldown needs the tier's duration in advance; summarise the records with Summarize instead")
	}
	return newAccumulator(opts, -1, capacities{}), nil
}

// newAccumulator makes an accumulator; end is the whole-tier duration when known, else -1.
func newAccumulator(opts Options, end time.Duration, c capacities) *Accumulator {
	if opts.Percentiles == nil {
		opts.Percentiles = defaultPercentiles()
	}
	var ps []float64 // without repeats, which would repeat JSON keys
	for _, p := range opts.Percentiles {
		if !slices.Contains(ps, p) {
			ps = append(ps, p)
		}
	}
	opts.Percentiles = ps
	if opts.MaxScheduleLag <= 0 {
		opts.MaxScheduleLag = DefaultMaxScheduleLag
	}
	opts.Warmup, opts.Cooldown = max(opts.Warmup, 0), max(opts.Cooldown, 0)
	a := &Accumulator{opts: opts, fixedDuration: end, lo: opts.Warmup, hi: math.MaxInt64}
	a.hasWindow = opts.Warmup > 0 || opts.Cooldown > 0
	if end >= 0 && opts.Cooldown > 0 {
		a.hi = end - opts.Cooldown
	}
	a.ttft = make([]time.Duration, 0, c.oks)
	a.tpot = make([]float64, 0, c.oks)
	a.e2el = make([]time.Duration, 0, c.oks)
	a.e2elCQ = make([]time.Duration, 0, c.oks)
	a.itl = make([]time.Duration, 0, c.gaps)
	a.cq = make([]time.Duration, 0, c.issued)
	a.lag = make([]time.Duration, 0, c.issued)
	a.obs = make([]Obs, 0, c.issued)
	return a
}

func ms(d time.Duration) float64 { return float64(d) / 1e6 }

// Add counts one record.
func (a *Accumulator) Add(r *records.Record) {
	a.n++
	a.end = max(a.end, r.End)
	if r.Turn <= 1 {
		a.arrivals++
		a.lastPlanned = max(a.lastPlanned, r.Planned)
	}
	if r.Sent != records.Unset {
		a.sent++
		a.lastSent = max(a.lastSent, r.Sent)
	}
	if r.Dispatched == records.Unset {
		// Never sent: canceled before its turn (an interruption, the tier's end). It is not
		// issued, but it is one of the planned requests, and the outcomes account for all of
		// them (planned = ok + http_error + timeout + stream_error + canceled).
		if r.Planned >= a.lo && r.Planned <= a.hi && int(r.Outcome) < len(a.outcomes) {
			a.s.NotIssued++
			a.outcomes[r.Outcome]++
		}
		return
	}
	a.allIssued++
	if r.Outcome == records.Canceled {
		a.canceled++
	}
	obs := a.opts.Objectives.ObserveIn(a.opts.Unit, r)
	a.obs = append(a.obs, obs)
	inWindow := r.Planned >= a.lo && r.Planned <= a.hi
	a.sessions.add(r, inWindow, obs.Flags&ObsCompliant != 0)
	if !inWindow {
		return
	}

	s := &a.s
	s.Issued++
	if int(r.Outcome) < len(a.outcomes) {
		a.outcomes[r.Outcome]++
	}
	s.RawOutputTokens += a.opts.Unit.Tokens(r)
	a.addIssued(r)
	if r.Outcome != records.OK {
		a.addFailed(r)
		return
	}

	s.Completed++
	s.TotalInputTokens += r.InputTokens
	if r.RequestedInputTokens > 0 {
		s.TotalRequestedInputTokens += r.RequestedInputTokens
	} else {
		s.TotalRequestedInputTokens += r.InputTokens
	}
	s.TotalOutputTokens += r.OutputTokens
	a.addLatencies(r)
	a.addTokenDetails(r)

	if CutShort(r) {
		s.CutShort++
	}
	qualityFailed := r.Quality == records.QualityFail
	if qualityFailed {
		s.QualityFailures++
	}
	if !a.opts.Objectives.Met(r) {
		s.LatencyFailures++
		return
	}
	s.GoodRequests++
	if !qualityFailed {
		s.CompliantRequests++
		s.CompliantOutputTokens += a.opts.Unit.Tokens(r)
	}
}

// addIssued counts what an issued request of the window says of its token counts' sources, and
// keeps its schedule lag and client queue time, whatever its outcome.
func (a *Accumulator) addIssued(r *records.Record) {
	s := &a.s
	switch r.OutputTokensSource {
	case records.SourceChunks:
		s.OutputTokensFromChunks++
	case records.SourceChunksBadUsage:
		s.OutputTokensFromChunks++
		s.OutputTokensBadUsage++
	}
	if r.InputTokensSource == records.SourceWorkloadBadUsage {
		s.InputTokensBadUsage++
	}
	if v, ok := r.ScheduleLag(); ok {
		a.lag = append(a.lag, v)
	}
	if v, ok := r.ClientQueueTime(); ok {
		a.cq = append(a.cq, v)
	}
}

// addFailed counts a failed request of the window: a failure, and whether the client's own
// resources or a stalled stream failed it.
func (a *Accumulator) addFailed(r *records.Record) {
	a.s.Failed++
	if r.Outcome == records.StreamError && strings.HasPrefix(r.Error, records.ClientResourcesPrefix) {
		a.clientResources++
	}
	if r.Outcome == records.Timeout && strings.HasPrefix(r.Error, records.StallPrefix) {
		a.s.Stalls++
	}
}

// addLatencies keeps an ok request's latencies, a response with reasoning apart (its answer's
// moments differ from its output's).
func (a *Accumulator) addLatencies(r *records.Record) {
	if v, ok := tpotMS(r); ok {
		a.tpot = append(a.tpot, v)
	}
	if r.ReasoningChunks > 0 {
		if v, ok := r.TTFT(); ok {
			a.ttftReasoned = append(a.ttftReasoned, v)
		}
		if v, ok := r.TTFA(); ok {
			a.ttfaReasoned = append(a.ttfaReasoned, v)
		}
		a.itlReasoned = append(a.itlReasoned, r.ITL...)
		a.answerReasoned = append(a.answerReasoned, r.AnswerITL...)
	} else {
		if v, ok := r.TTFT(); ok {
			a.ttft = append(a.ttft, v)
		}
		a.itl = append(a.itl, r.ITL...)
	}
	if v, ok := r.E2EL(); ok {
		a.e2el = append(a.e2el, v)
	}
	if v, ok := r.E2ELIncludingClientQueue(); ok {
		a.e2elCQ = append(a.e2elCQ, v)
	}
}

// addTokenDetails counts an ok request's reasoning and cached tokens.
func (a *Accumulator) addTokenDetails(r *records.Record) {
	s := &a.s
	if r.ReasoningChunks > 0 || r.ReasoningTokens > 0 {
		s.ReasoningResponses++
	}
	s.ReasoningTokens += r.ReasoningTokens
	if r.ReasoningTokensSource == records.SourceChunks {
		s.ReasoningTokensFromChunks++
	}
	if r.CachedTokensSource != "" {
		s.CachedReported++
		s.CachedPromptTokens += r.CachedTokens
		a.cachedOfBase += r.InputTokens
	}
}

// Summary computes the summary of the records added so far. It may be called again after more
// Adds (a running view); it reorders the metric arrays in place, which can move the means in
// their last bits only.
func (a *Accumulator) Summary(tier records.Tier) Summary {
	s := a.s
	s.MetricsVersion = records.MetricsVersion
	s.Tier, s.Role, s.Arrival = tier.Tier, tier.Role, tier.Arrival
	s.Planned = tier.PlannedRequests()
	s.NominalRate, s.Burstiness, s.MaxConcurrency = float64(tier.RequestRate), float64(tier.Burstiness), tier.MaxConcurrency
	s.Users = tier.Users
	if s.NominalRate == 0 {
		s.NominalRate = math.NaN() // no nominal rate: a trace replay
	}
	s.Recorded = a.n
	if tier.End != nil {
		s.EndReason = tier.End.Reason
		s.CPU = tier.End.CPU
		s.Interrupted = tier.End.Reason == records.EndedInterrupted
	}
	s.Complete = a.allIssued >= s.Planned && a.canceled == 0 && !s.Interrupted
	s.Objectives = a.opts.Objectives.String()
	if a.opts.Unit.Or() != records.UnitOutputTokens {
		s.Unit = a.opts.Unit
	}
	s.Percentiles = append([]float64{}, a.opts.Percentiles...)
	s.Metrics = slices.Clone(a.opts.Metrics)
	s.ClientBoundThreshold = ms(a.opts.MaxScheduleLag)

	s.Outcomes = make(map[string]int, len(records.Outcomes()))
	for _, o := range records.Outcomes() {
		s.Outcomes[o.String()] = a.outcomes[o]
	}

	end := a.end
	if a.fixedDuration >= 0 {
		end = a.fixedDuration
	}
	dur := end
	if a.hasWindow {
		hi := end - a.opts.Cooldown
		dur = max(hi-a.lo, 0)
		s.Window = fmt.Sprintf("steady-state window: requests planned in [%.3f s, %.3f s] of a %.3f s tier (warmup %.3f s, cooldown %.3f s): %d of %d issued requests; throughputs are per second of the window",
			a.lo.Seconds(), hi.Seconds(), end.Seconds(), a.opts.Warmup.Seconds(), a.opts.Cooldown.Seconds(), s.Issued, a.allIssued)
		if dur == 0 {
			s.Window = "empty " + s.Window
		}
	}
	s.Duration = dur.Seconds()

	perSecond := func(x int) float64 { return ratio(float64(x), s.Duration) }
	s.RequestThroughput = perSecond(s.Completed)
	s.RequestGoodput = math.NaN()
	if !a.opts.Objectives.IsZero() {
		s.RequestGoodput = perSecond(s.GoodRequests)
	}
	s.OutputThroughput = perSecond(s.TotalOutputTokens)
	s.TotalTokenThroughput = perSecond(s.TotalInputTokens + s.TotalOutputTokens)
	s.RawOutputThroughput = perSecond(s.RawOutputTokens)
	s.CompliantOutputThroughput = perSecond(s.CompliantOutputTokens)

	s.AnswerTokens = s.TotalOutputTokens - s.ReasoningTokens
	s.CachedPromptShare = ratio(float64(s.CachedPromptTokens), float64(a.cachedOfBase))
	s.Sessions = a.sessions.summary(s.Duration)
	s.CompliantTokenShare = ratio(float64(s.CompliantOutputTokens), float64(s.RawOutputTokens))
	s.CompliantRequestShare = ratio(float64(s.CompliantRequests), float64(s.Issued))
	s.TimeoutRatio = ratio(float64(a.outcomes[records.Timeout]), float64(s.Issued))
	s.FailureRatio = ratio(float64(s.Failed), float64(s.Issued))

	s.RealisedRate = ratio(float64(a.arrivals), a.lastPlanned.Seconds())
	s.DeliveredRate = ratio(float64(a.sent), a.lastSent.Seconds())

	a.describeAll(&s)

	checkDelivered(&s)
	if a.clientResources > 0 {
		s.ClientBound = true
		s.ClientBoundReason = joinReason(s.ClientBoundReason, fmt.Sprintf(
			"%d requests failed for lack of the client's own resources (file descriptors, local ports): the client, not the server, limited this tier; raise the limit or cap --max-concurrency", a.clientResources))
	}
	if tier.End != nil && tier.End.RateLimited {
		s.ClientBound = true
		s.ClientBoundReason = joinReason(s.ClientBoundReason, "the --rate-limit safety ceiling held requests back: it, not the schedule, shaped the load")
	}
	w := SteadyWindow{}
	if a.hasWindow {
		w = SteadyWindow{Given: true, Start: a.lo, End: min(a.hi, end-a.opts.Cooldown)}
	}
	w.Shadow = ShadowOf(tier)
	arrivalsEnd := tier.ArrivalsEnd()
	if arrivalsEnd == 0 && tier.DurationS > 0 { // an older file: no closing line, a duration-bound tier
		arrivalsEnd = time.Duration(math.Round(tier.DurationS * 1e9))
	}
	s.Steady = SteadyState(a.obs, arrivalsEnd, w)
	if len(a.lag) > 0 {
		judgeLag(&s, percentile(a.lag, 1e6, 99), ms(a.opts.MaxScheduleLag), a.opts.Objectives, a.obs)
	}
	return s
}

// LagBurstiness is how much burstier the client's releases of a tier's requests were than the
// schedule planned, over windows of length window: the variance of the counts of requests
// dispatched per window less that of the counts planned per window, over the planned variance
// (0: as planned). For a schedule smoother than Poisson (a constant rate, a Gamma shape above
// one) the planned variance is near zero and the ratio would blow up on any jitter (a 0.3 %
// longer window took one test tier from "within 10 %" to 393 %), so the divisor is never less
// than Poisson's, the mean count: the excess is then the dispersion the client added in units of
// the dispersion Poisson arrivals have, which is what the limit was measured against.
// Only requests that were dispatched count; NaN when the tier spans fewer than ten windows.
func LagBurstiness(obs []Obs, window time.Duration) float64 {
	if window <= 0 {
		return math.NaN()
	}
	var last time.Duration
	for _, o := range obs {
		if o.Dispatched != records.Unset {
			last = max(last, o.Planned)
		}
	}
	n := int(last / window)
	if n < 10 {
		return math.NaN()
	}
	planned, sent := make([]float64, n), make([]float64, n)
	for _, o := range obs {
		if o.Dispatched == records.Unset {
			continue
		}
		if k := int(o.Planned / window); k < n {
			planned[k]++
		}
		if k := int(o.Dispatched / window); k < n {
			sent[k]++
		}
	}
	vp, mean := variance(planned), 0.0
	for _, c := range planned {
		mean += c
	}
	mean /= float64(n)
	return ratio(variance(sent)-vp, max(vp, mean))
}

// medianReleaseToEnd is the median over obs of the time from the client's release of a request
// to its end (its e2el plus any wait at the client's concurrency gate), exact: false when no
// request was both released and ended.
func medianReleaseToEnd(obs []Obs) (time.Duration, bool) {
	xs := make([]float64, 0, len(obs))
	for _, o := range obs {
		if o.End != records.Unset && o.Dispatched != records.Unset {
			xs = append(xs, float64(o.End-o.Dispatched))
		}
	}
	if len(xs) == 0 {
		return 0, false
	}
	return time.Duration(medianInPlace(xs)), true
}

// variance is the sample variance of xs.
func variance(xs []float64) float64 {
	m := 0.0
	for _, x := range xs {
		m += x
	}
	m /= float64(len(xs))
	v := 0.0
	for _, x := range xs {
		v += (x - m) * (x - m)
	}
	return v / float64(len(xs)-1)
}

// judgeLag marks s client-bound when its schedule lag changed, on the tier's own scale, what the
// deployment was offered or what was measured: the p99 lag passed floor and either the releases
// were more than LagBurstinessLimit burstier than planned over a quarter of the median time from
// the client's release to the end (e2el with the client's queue; medianReleaseToEnd), or
// it passed LagPlannedFraction of an objective counted from the planned arrival. A p99 above
// the floor that did neither is noted, and the tier kept. It runs after the steady state
// (s.Steady): a tier too short to judge its lag is kept when it never settled.
func judgeLag(s *Summary, p99, floor float64, o Objectives, obs []Obs) {
	s.ClientBoundThreshold = floor
	if !(p99 > floor) {
		return
	}
	// The scale comes from the observations themselves, exactly, in both the exact and the
	// bounded-memory summaries: a window taken from the sketch's median (0.5 % off) moved the
	// burstiness of one tier from 6.1 % to 9.5 %, as windows near the dispatcher's timer
	// granularity alias.
	window := time.Duration(0)
	if m, ok := medianReleaseToEnd(obs); ok {
		window = m / 4
	} else if m, ok := medianTimeInSystem(obs); ok {
		window = m / 4
	}
	excess := LagBurstiness(obs, window)
	planned := math.Inf(1)
	for _, d := range []time.Duration{o.ClientQueueTime, o.E2ELIncludingClientQueue} {
		if d > 0 {
			planned = math.Min(planned, ms(d))
		}
	}
	burst := fmt.Sprintf("its releases were %.1f %% burstier than planned over %.3g ms windows (a quarter of the median time from release to end)", 100*excess, ms(window))
	switch {
	case excess > LagBurstinessLimit:
		s.ClientBound = true
		s.ClientBoundReason = joinReason(fmt.Sprintf("schedule_lag p99 is %.3f ms and %s, more than the %g %% that leaves what the deployment was offered as planned: the client, not the server, shaped this load; rerun with fewer requests per process (--shard) or on a less loaded machine",
			p99, burst, 100*LagBurstinessLimit), s.ClientBoundReason)
	case p99 > LagPlannedFraction*planned:
		s.ClientBound = true
		s.ClientBoundReason = joinReason(fmt.Sprintf("schedule_lag p99 is %.3f ms, more than %g %% of the %g ms objective counted from the planned arrival, which contains the lag itself: the client, not the server, shaped what was measured; rerun with fewer requests per process (--shard) or on a less loaded machine",
			p99, 100*LagPlannedFraction, planned), s.ClientBoundReason)
	case math.IsNaN(excess) && s.Steady != nil && !s.Steady.Stationary && s.Steady.Requests >= MinSteadyRequests:
		s.ScheduleLagNote = fmt.Sprintf("schedule_lag p99 is %.3f ms, above the %g ms floor, in a tier too short to show its effect on the arrivals; but the tier never settled, which its lag cannot have caused (an overloaded queue grows whatever the arrivals' exact timing): it is kept",
			p99, floor)
	case math.IsNaN(excess):
		s.ClientBound = true
		s.ClientBoundReason = joinReason(fmt.Sprintf("schedule_lag p99 is %.3f ms, above the %g ms floor, and the tier is too short (fewer than ten windows of a quarter of its median e2el) to show that the lag left what the deployment was offered as planned: treated as shaped by the client; rerun with fewer requests per process (--shard) or on a less loaded machine",
			p99, floor), s.ClientBoundReason)
	default:
		s.ScheduleLagNote = fmt.Sprintf("schedule_lag p99 is %.3f ms, above the %g ms floor, but %s, within %g %%: what the deployment was offered is as planned, so the tier is kept",
			p99, floor, burst, 100*LagBurstinessLimit)
	}
}

// ShadowOf is the shadow queue control of a tier (package shadow): nil unless its tier line
// names a shadow queue and the tier is an open one at a steady finite rate.
func ShadowOf(tier records.Tier) *shadow.Control {
	rate, burst := float64(tier.RequestRate), float64(tier.Burstiness)
	if tier.Shadow == nil || tier.Users > 0 || !(rate > 0) || math.IsInf(rate, 0) || !(burst > 0) {
		return nil
	}
	c, err := shadow.New(*tier.Shadow, rate, burst)
	if err != nil {
		return nil
	}
	return c
}

// checkDelivered marks a tier client-bound when fewer requests per second left the client than
// the schedule offered. Only for independent requests (a session's turns follow its
// responses), without a concurrency cap (a cap holds requests back by design, and
// that shows as client_queue_time), for complete tiers of a finite rate with enough requests for
// the rates to mean something. On schedule, the two rates differ by the last request's lag over
// the tier's length: far below 1 %.
func checkDelivered(s *Summary) {
	if s.MaxConcurrency > 0 || s.Users > 0 || s.Sessions != nil || !s.Complete || s.Issued < 20 || !(s.RealisedRate > 0) || math.IsInf(s.RealisedRate, 0) {
		return
	}
	if s.DeliveredRate < 0.99*s.RealisedRate {
		s.ClientBound = true
		s.ClientBoundReason = joinReason(s.ClientBoundReason, fmt.Sprintf(
			"the client sent %.2f req/s of the %.2f req/s the schedule offered (%.1f %% short): it could not keep up",
			s.DeliveredRate, s.RealisedRate, 100*(1-s.DeliveredRate/s.RealisedRate)))
	}
}

func joinReason(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "; " + b
}

// describeAll fills the Stats of every metric, on up to GOMAXPROCS goroutines (the ITL array,
// first in line, may dwarf all the others together). The schedule_lag ranks of the p99 that
// decides client_bound are always put in place, requested or not.
func (a *Accumulator) describeAll(s *Summary) {
	ps := a.opts.Percentiles
	jobs := []func(){
		answerJob(&s.ITL, &s.AnswerITL, a.itl, a.itlReasoned, a.answerReasoned, ps),
		answerJob(&s.TTFT, &s.TTFA, a.ttft, a.ttftReasoned, a.ttfaReasoned, ps),
		func() { s.TPOT = describe(a.tpot, 1, ps) },
		func() { s.E2EL = describe(a.e2el, 1e6, ps) },
		func() { s.ClientQueueTime = describe(a.cq, 1e6, ps) },
		func() { s.E2ELIncludingClientQueue = describe(a.e2elCQ, 1e6, ps) },
		func() {
			s.ScheduleLag = describe(a.lag, 1e6, ps)
			selectRanks(a.lag, ranksFor(len(a.lag), []float64{99}))
		},
	}
	next := make(chan func(), len(jobs))
	for _, j := range jobs {
		next <- j
	}
	close(next)
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(jobs)) {
		wg.Go(func() {
			for j := range next {
				j()
			}
		})
	}
	wg.Wait()
}

// answerJob describes a metric and its answer's counterpart (ITL and answer ITL, TTFT and
// TTFA): plain holds the values of responses without reasoning, which count for both;
// reasoned and answer those of responses with reasoning, for the metric and for the answer.
// When nothing reasoned, the answer's statistics are the metric's, and no value is copied;
// otherwise the copies are made now, before any job reorders plain in place.
func answerJob(metric, answerMetric *Stats, plain, reasoned, answer []time.Duration, ps []float64) func() {
	if len(reasoned) == 0 && len(answer) == 0 {
		return func() {
			*metric = describe(plain, 1e6, ps)
			*answerMetric = metric.clone()
		}
	}
	all, ans := slices.Concat(plain, reasoned), slices.Concat(plain, answer)
	return func() {
		*metric = describe(all, 1e6, ps)
		*answerMetric = describe(ans, 1e6, ps)
	}
}

// ratio is x/y, NaN when y is 0 and x is 0, +Inf when y is 0 and x is not.
func ratio(x, y float64) float64 {
	if y == 0 {
		if x == 0 {
			return math.NaN()
		}
		return math.Inf(1)
	}
	return x / y
}
