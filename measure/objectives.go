package measure

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/loadcurve/loadcurve/internal/field"
	"github.com/loadcurve/loadcurve/measure/records"
)

// Names of the inputs of a measurement, as its errors name them (field.Error).
const (
	FieldObjectives        = "objectives"
	FieldPercentiles       = "percentiles"
	FieldPercentileMetrics = "percentile metrics"
)

// allowedKeys lists the objectives' keys (vLLM's goodput keys and loadcurve's) in their
// canonical order, Metrics' order.
var allowedKeys = strings.Join(metricKeys(objectiveMetrics), ", ")

// ObjectiveKeys returns the objectives' keys in their canonical order.
func ObjectiveKeys() []string { return metricKeys(objectiveMetrics) }

// IsObjectiveKey reports whether key names an objective.
func IsObjectiveKey(key string) bool {
	m, ok := MetricOf(key)
	return ok && m.Objective != nil
}

// Each calls f with every objective set, key and value, in the canonical order.
func (o Objectives) Each(f func(key string, d time.Duration)) {
	for _, m := range objectiveMetrics {
		if d := m.ObjectiveOf(o); d > 0 {
			f(m.Key, d)
		}
	}
}

// ParseGoodput parses objectives (FieldObjectives) in vLLM's --goodput syntax: each argument is "KEY:MS", and
// one argument may also hold several pairs separated by spaces or commas. KEY is the key of one
// of the Metrics that can be an objective (ObjectiveKeys); MS is a number of milliseconds
// greater than zero, kept to the nanosecond. A key given twice is an error (vLLM silently keeps
// the last one). No arguments give no objectives.
func ParseGoodput(args []string) (Objectives, error) {
	var o Objectives
	seen := make([]bool, len(objectiveMetrics))
	for _, arg := range args {
		tokens := strings.FieldsFunc(arg, func(r rune) bool { return r == ',' || unicode.IsSpace(r) })
		if len(tokens) == 0 {
			return Objectives{}, goodputError(arg, "no KEY:MS pair")
		}
		for _, tok := range tokens {
			i, d, err := parseObjective(tok)
			if err != nil {
				return Objectives{}, err
			}
			if seen[i] {
				return Objectives{}, goodputError(tok, "objective "+objectiveMetrics[i].Key+" is given twice")
			}
			seen[i] = true
			*objectiveMetrics[i].Objective(&o) = d
		}
	}
	return o, nil
}

func parseObjective(tok string) (int, time.Duration, error) {
	key, val, ok := strings.Cut(tok, ":")
	switch {
	case !ok:
		return 0, 0, goodputError(tok, "want KEY:MS")
	case strings.Contains(val, ":"):
		return 0, 0, goodputError(tok, "more than one ':'")
	case key == "":
		return 0, 0, goodputError(tok, "missing key")
	case val == "":
		return 0, 0, goodputError(tok, "missing value in milliseconds")
	}
	idx := slices.IndexFunc(objectiveMetrics, func(m Metric) bool { return m.Key == key })
	if idx < 0 {
		return 0, 0, goodputError(tok, fmt.Sprintf("unknown key %q", key))
	}
	ms, err := strconv.ParseFloat(val, 64)
	switch {
	case err != nil:
		return 0, 0, goodputError(tok, fmt.Sprintf("value %q is not a number of milliseconds", val))
	case math.IsNaN(ms) || math.IsInf(ms, 0):
		return 0, 0, goodputError(tok, fmt.Sprintf("value %q is not a finite number", val))
	case ms <= 0:
		return 0, 0, goodputError(tok, fmt.Sprintf("value %s must be greater than 0 ms", val))
	case ms*1e6 >= math.MaxInt64:
		return 0, 0, goodputError(tok, fmt.Sprintf("value %s ms is too large", val))
	}
	d := time.Duration(math.Round(ms * 1e6))
	if d <= 0 {
		return 0, 0, goodputError(tok, fmt.Sprintf("value %s ms is below the 1 ns resolution", val))
	}
	return idx, d, nil
}

func goodputError(tok, why string) error {
	return field.Errorf(FieldObjectives, "%q: %s (want KEY:MS with KEY one of %s)", tok, why, allowedKeys)
}

// String returns the canonical form, e.g. "ttft:500 tpot:50": keys in their canonical order
// (ObjectiveKeys), values in milliseconds with the fewest
// digits that give back the same nanoseconds. Equal objectives give equal strings, and
// ParseGoodput gives the objectives back. No objectives give "".
func (o Objectives) String() string {
	var b []byte
	o.Each(func(k string, d time.Duration) {
		if len(b) > 0 {
			b = append(b, ' ')
		}
		b = append(b, k...)
		b = append(b, ':')
		b = strconv.AppendFloat(b, float64(d)/1e6, 'f', -1, 64)
	})
	return string(b)
}

// IsZero reports whether no objective is set.
func (o Objectives) IsZero() bool { return o == Objectives{} }

// Met reports whether r meets every latency objective. It does not look at the outcome or the
// quality check. A value equal to its objective meets it (vLLM's rule). TPOT undefined (one
// output token or fewer) meets a TPOT objective, as in vLLM's goodput, unless the server cut the
// reply short (CutShort: finish_reason "length" below the max_tokens sent), which misses it; any
// other metric that is undefined for r (for example TTFT of a request that never produced
// output) does not meet its objective.
func (o Objectives) Met(r *records.Record) bool {
	for _, m := range objectiveMetrics {
		d := m.ObjectiveOf(o)
		if d <= 0 {
			continue
		}
		v, ok := m.Value(r)
		if ok && v > float64(d) || !ok && !m.meetsUndefined(r) {
			return false
		}
	}
	return true
}

// meanAnswerGap is the mean of a response's answer gaps in nanoseconds, undefined without one.
func meanAnswerGap(r *records.Record) (ns float64, ok bool) {
	gaps := r.AnswerGaps()
	if len(gaps) == 0 || r.Outcome != records.OK {
		return 0, false
	}
	var sum time.Duration
	for _, g := range gaps {
		sum += g
	}
	return float64(sum) / float64(len(gaps)), true
}

// Compliant reports whether r is a compliant request (METRICS.md): ok, every latency objective
// met, and its quality check not failed.
func (o Objectives) Compliant(r *records.Record) bool {
	return r.Outcome == records.OK && r.Quality != records.QualityFail && o.Met(r)
}

// MaxSlack is the slack of a request that failed, missed its quality check, or lacks a metric an
// objective needs: a miss, whatever its latencies.
const MaxSlack = 2

// Slack is how close r came to missing the latency objectives: the largest ratio of a metric
// to its objective (1 is exactly on an objective; above 1 misses it), at most MaxSlack, which
// is also the slack of a request that failed or whose quality check failed. It is the
// continuous series compliance is a threshold of. With no objective it is 0.
func (o Objectives) Slack(r *records.Record) float32 {
	if r.Outcome != records.OK || r.Quality == records.QualityFail {
		return MaxSlack
	}
	worst := 0.0
	for _, m := range objectiveMetrics {
		d := m.ObjectiveOf(o)
		if d <= 0 {
			continue
		}
		switch v, ok := m.Value(r); {
		case ok:
			worst = max(worst, v/float64(d))
		case !m.meetsUndefined(r):
			worst = MaxSlack
		}
	}
	return float32(min(worst, MaxSlack))
}

// tpotMS is (E2EL-TTFT)/(output_tokens-1) = (last-first)/(output_tokens-1) in milliseconds,
// without the truncation to whole nanoseconds of records.Record.TPOT.
func tpotMS(r *records.Record) (float64, bool) {
	if r.OutputTokens <= 1 || r.First == records.Unset || r.Last == records.Unset {
		return 0, false
	}
	return float64(r.Last-r.First) / 1e6 / float64(r.OutputTokens-1), true
}

// CutShort reports whether the server cut r's reply short: it ended with finish_reason "length"
// (the server's own limit) with fewer output tokens than the max_tokens the request sent. Such a
// reply is a truncation, not an answer: when it has one token or none its TPOT is undefined, and
// a server that stopped every reply after its first token would otherwise meet any TPOT
// objective. A reply that stopped by itself ("stop", a tool call) or was asked for one token
// keeps vLLM's rule (an undefined TPOT meets the objective). Records without max_tokens (none
// sent, or written before it was recorded) are never judged cut short.
func CutShort(r *records.Record) bool {
	return r.FinishReason == "length" && r.MaxTokens > 0 && r.OutputTokens < r.MaxTokens
}
