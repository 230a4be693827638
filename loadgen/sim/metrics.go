package sim

import (
	"math"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// Bucket upper bounds, in seconds.
var (
	latenessBuckets = []float64{0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1}
	// ttftBuckets follow vLLM's vllm:time_to_first_token_seconds.
	ttftBuckets = []float64{0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10, 20, 40, 80, 160, 640, 2560}
)

// histogram is a Prometheus-style histogram with one writer at a time and
// lock-free readers.
type histogram struct {
	bounds []float64
	counts []atomic.Uint64 // per bucket, not cumulative; last is +Inf
	sumNs  atomic.Int64
}

func newHistogram(bounds []float64) *histogram {
	return &histogram{bounds: bounds, counts: make([]atomic.Uint64, len(bounds)+1)}
}

func (h *histogram) observe(d time.Duration) {
	s := d.Seconds()
	i, _ := slices.BinarySearch(h.bounds, s) // first bound >= s
	h.counts[i].Add(1)
	h.sumNs.Add(int64(d))
}

// histSnap is a histogram read out: per-bucket counts (not cumulative;
// the last is +Inf) and the sum of the observations.
type histSnap struct {
	bounds []float64
	counts []uint64
	sumNs  int64
}

// snap reads h, bucket by bucket and then the sum (not atomically as a set).
func (h *histogram) snap() histSnap {
	s := histSnap{bounds: h.bounds, counts: make([]uint64, len(h.counts))}
	for i := range h.counts {
		s.counts[i] = h.counts[i].Load()
	}
	s.sumNs = h.sumNs.Load()
	return s
}

// add adds o, a histogram with the same bounds, to s.
func (s *histSnap) add(o histSnap) {
	if s.counts == nil {
		s.bounds, s.counts = o.bounds, make([]uint64, len(o.counts))
	}
	for i, c := range o.counts {
		s.counts[i] += c
	}
	s.sumNs += o.sumNs
}

// appendProm writes the histogram in Prometheus text format.
func (s histSnap) appendProm(b []byte, name, help, labels string) []byte {
	b = appendHeader(b, name, help, "histogram")
	var cum uint64
	for i, c := range s.counts {
		cum += c
		le := "+Inf"
		if i < len(s.bounds) {
			le = strconv.FormatFloat(s.bounds[i], 'g', -1, 64)
		}
		b = append(b, name...)
		b = append(b, "_bucket{"...)
		b = append(b, labels...)
		b = append(b, `,le="`...)
		b = append(b, le...)
		b = append(b, `"} `...)
		b = strconv.AppendUint(b, cum, 10)
		b = append(b, '\n')
	}
	b = appendSample(b, name+"_sum", labels, time.Duration(s.sumNs).Seconds())
	b = appendSample(b, name+"_count", labels, float64(cum))
	return b
}

// latenessLog keeps the last latenessWindow step latenesses and the maximum
// since start.
type latenessLog struct {
	mu  sync.Mutex
	buf [latenessWindow]time.Duration
	n   int
	max time.Duration
}

const latenessWindow = 4096

func (l *latenessLog) add(d time.Duration) {
	l.mu.Lock()
	l.buf[l.n%latenessWindow] = d
	l.n++
	l.max = max(l.max, d)
	l.mu.Unlock()
}

// summary returns the p50 and p99 of the window (nearest rank) and the
// all-time maximum.
func (l *latenessLog) summary() (p50, p99, maxd time.Duration) {
	l.mu.Lock()
	n := min(l.n, latenessWindow)
	s := make([]time.Duration, n)
	copy(s, l.buf[:n])
	maxd = l.max
	l.mu.Unlock()
	if n == 0 {
		return 0, 0, maxd
	}
	slices.Sort(s)
	rank := func(q float64) time.Duration {
		i := int(math.Ceil(q*float64(n))) - 1
		return s[max(0, min(i, n-1))]
	}
	return rank(0.50), rank(0.99), maxd
}

func appendHeader(b []byte, name, help, typ string) []byte {
	b = append(b, "# HELP "...)
	b = append(b, name...)
	b = append(b, ' ')
	b = append(b, help...)
	b = append(b, "\n# TYPE "...)
	b = append(b, name...)
	b = append(b, ' ')
	b = append(b, typ...)
	b = append(b, '\n')
	return b
}

func appendSample(b []byte, name, labels string, v float64) []byte {
	b = append(b, name...)
	b = append(b, '{')
	b = append(b, labels...)
	b = append(b, "} "...)
	b = strconv.AppendFloat(b, v, 'g', -1, 64)
	b = append(b, '\n')
	return b
}

func appendMetric(b []byte, name, help, typ, labels string, v float64) []byte {
	return appendSample(appendHeader(b, name, help, typ), name, labels, v)
}

// metricsSnap is what /metrics reports, read out of a Server; the
// snapshots of several servers add up (see Cluster).
type metricsSnap struct {
	running, waiting, kvUsed, kvCapacity int64
	prefixQueries, prefixHits            int64
	promptTokens, genTokens, preemptions int64
	successLength, successStop           int64
	received, steps, resets              int64
	lateness, ttft                       histSnap
}

// metricsSnap reads the counters one by one, not atomically as a set.
func (s *Server) metricsSnap() metricsSnap {
	e := s.eng
	return metricsSnap{
		running:       e.nRunning.Load(),
		waiting:       e.nWaiting.Load() + int64(e.inboxLen()),
		kvUsed:        e.kvUsed.Load(),
		kvCapacity:    int64(s.cfg.KVCacheTokens),
		prefixQueries: e.prefixQueries.Load(),
		prefixHits:    e.prefixHits.Load(),
		promptTokens:  e.promptTokens.Load(),
		genTokens:     e.genTokens.Load(),
		preemptions:   e.preemptions.Load(),
		successLength: e.successLength.Load(),
		successStop:   e.successStop.Load(),
		received:      int64(s.received.Load()),
		steps:         e.steps.Load(),
		resets:        e.resets.Load(),
		lateness:      e.latenessHist.snap(),
		ttft:          e.ttftHist.snap(),
	}
}

// add adds o to m: every count, gauge and histogram bucket is summed (the
// KV-cache usage fraction follows as the summed used tokens over the
// summed capacity).
func (m *metricsSnap) add(o metricsSnap) {
	m.running += o.running
	m.waiting += o.waiting
	m.kvUsed += o.kvUsed
	m.kvCapacity += o.kvCapacity
	m.prefixQueries += o.prefixQueries
	m.prefixHits += o.prefixHits
	m.promptTokens += o.promptTokens
	m.genTokens += o.genTokens
	m.preemptions += o.preemptions
	m.successLength += o.successLength
	m.successStop += o.successStop
	m.received += o.received
	m.steps += o.steps
	m.resets += o.resets
	m.lateness.add(o.lateness)
	m.ttft.add(o.ttft)
}

// kvUsage is the KV-cache usage fraction, 0 to 1.
func (m *metricsSnap) kvUsage() float64 {
	if m.kvCapacity <= 0 {
		return 0
	}
	return float64(m.kvUsed) / float64(m.kvCapacity)
}

// appendProm writes m in Prometheus text format, every series with labels
// l (model_name).
func (m *metricsSnap) appendProm(b []byte, l string) []byte {
	b = appendMetric(b, "vllm:num_requests_running", "Number of requests in the model execution batch.", "gauge", l, float64(m.running))
	b = appendMetric(b, "vllm:num_requests_waiting", "Number of requests waiting to be processed.", "gauge", l, float64(m.waiting))
	b = appendMetric(b, "vllm:kv_cache_usage_perc", "KV-cache usage, 0 to 1 (1 means 100 percent).", "gauge", l, m.kvUsage())
	b = appendMetric(b, "vllm:prefix_cache_queries_total", "Prefix-cache queries, in tokens.", "counter", l, float64(m.prefixQueries))
	b = appendMetric(b, "vllm:prefix_cache_hits_total", "Prefix-cache hits, in tokens.", "counter", l, float64(m.prefixHits))
	b = appendMetric(b, "vllm:prompt_tokens_total", "Prefilled prompt tokens (cached ones included).", "counter", l, float64(m.promptTokens))
	b = appendMetric(b, "vllm:generation_tokens_total", "Generated tokens.", "counter", l, float64(m.genTokens))
	b = appendMetric(b, "vllm:num_preemptions_total", "Cumulative number of preemptions.", "counter", l, float64(m.preemptions))
	b = appendHeader(b, "vllm:request_success_total", "Successfully finished requests.", "counter")
	b = appendSample(b, "vllm:request_success_total", `finished_reason="length",`+l, float64(m.successLength))
	b = appendSample(b, "vllm:request_success_total", `finished_reason="stop",`+l, float64(m.successStop))
	b = appendMetric(b, "sim_requests_received_total", "Completion requests received (every POST to a completion endpoint, valid or not).", "counter", l, float64(m.received))
	b = appendMetric(b, "sim_steps_total", "Engine steps run.", "counter", l, float64(m.steps))
	b = appendMetric(b, "sim_schedule_resets_total", "Times the engine fell more than 250 ms behind its step schedule and restarted it (the model's timing did not hold).", "counter", l, float64(m.resets))
	b = m.lateness.appendProm(b, "sim_step_lateness_seconds", "How late each engine step finished handing out its tokens, after its deadline (timer wake-up delay plus the engine's own work).", l)
	b = m.ttft.appendProm(b, "sim_first_token_seconds", "Server-side time to first token: from request arrival to the end of the step that yields the first token.", l)
	return b
}

// metricsLabels is the label set of every series: the model name.
func (s *Server) metricsLabels() string { return `model_name=` + strconv.Quote(s.cfg.ModelName) }

// writeMetrics sends a Prometheus text exposition.
func writeMetrics(w http.ResponseWriter, b []byte) {
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	_, _ = w.Write(b)
}

// serveMetrics writes the Prometheus text exposition.
func (s *Server) serveMetrics(w http.ResponseWriter) {
	m := s.metricsSnap()
	writeMetrics(w, m.appendProm(nil, s.metricsLabels()))
}
