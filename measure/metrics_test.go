package measure

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/loadcurve/loadcurve/measure/records"
)

// TestMetricsTable: every row of the one table is whole and its own: a key met once, names to
// read, its own statistics in a Summary and, for an objective, its own field of Objectives that
// the pointer and the value accessors agree on.
func TestMetricsTable(t *testing.T) {
	var s Summary
	stats := map[*Stats]string{}
	fields := map[*time.Duration]string{}
	var o Objectives
	for _, m := range Metrics {
		if m.Key == "" || m.Label == "" || m.Abbr == "" || m.Title == "" || m.Stats == nil {
			t.Errorf("%+v: a row needs a key, a label, an abbreviation, a title and its statistics", m.Key)
			continue
		}
		if got, ok := MetricOf(m.Key); !ok || got.Key != m.Key {
			t.Errorf("MetricOf(%q) = %q, %v", m.Key, got.Key, ok)
		}
		if other, dup := stats[m.Stats(&s)]; dup {
			t.Errorf("%s and %s keep their statistics in the same place", m.Key, other)
		}
		stats[m.Stats(&s)] = m.Key
		if m.VLLMDefault && !m.VLLM {
			t.Errorf("%s: among vLLM's defaults but not vLLM's", m.Key)
		}
		if m.Objective == nil {
			if m.ObjectiveOf != nil || m.Value != nil || m.UndefinedMeets != nil {
				t.Errorf("%s: not an objective, yet it has an objective's accessors", m.Key)
			}
			continue
		}
		if m.ObjectiveOf == nil || m.Value == nil {
			t.Errorf("%s: an objective needs ObjectiveOf and Value", m.Key)
			continue
		}
		p := m.Objective(&o)
		if other, dup := fields[p]; dup {
			t.Errorf("%s and %s set the same objective", m.Key, other)
		}
		fields[p] = m.Key
		*p = 7 * time.Millisecond
		if got := m.ObjectiveOf(o); got != 7*time.Millisecond {
			t.Errorf("%s: ObjectiveOf reads %v where Objective set 7ms", m.Key, got)
		}
		*p = 0
	}
	if o != (Objectives{}) {
		t.Errorf("objectives left set: %+v", o)
	}
	// Every field of Objectives is one row's: a field no row reaches could never be parsed.
	if n := len(fields); n != len(ObjectiveKeys()) || n != countDurationFields(Objectives{}) {
		t.Errorf("%d rows set objectives, %d keys, %d fields in Objectives", n, len(ObjectiveKeys()), countDurationFields(Objectives{}))
	}
}

// countDurationFields is the number of fields of an Objectives, counted through its JSON form.
func countDurationFields(o Objectives) int {
	b, err := json.Marshal(o)
	if err != nil {
		panic(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		panic(err)
	}
	return len(m)
}

// TestWhatTheTableDerives: the lists other code reads are the table's, in its order.
func TestWhatTheTableDerives(t *testing.T) {
	var keys, objectives []string
	for _, m := range Metrics {
		keys = append(keys, m.Key)
		if m.Objective != nil {
			objectives = append(objectives, m.Key)
		}
	}
	if got := MetricNames(); !slices.Equal(got, keys) {
		t.Errorf("MetricNames() = %v, want the table's %v", got, keys)
	}
	if got := ObjectiveKeys(); !slices.Equal(got, objectives) {
		t.Errorf("ObjectiveKeys() = %v, want the table's %v", got, objectives)
	}
	for _, k := range keys {
		if IsObjectiveKey(k) != slices.Contains(objectives, k) {
			t.Errorf("IsObjectiveKey(%q) = %v", k, IsObjectiveKey(k))
		}
	}
	// summary.json has each reported metric's statistics under its key.
	s := Summarize(nil, records.Tier{Kind: records.KindTier}, Options{})
	s.Metrics = keys
	b, err := json.Marshal(&s)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		if !strings.Contains(string(b), `"mean_`+k+`_ms"`) {
			t.Errorf("summary.json has no mean_%s_ms", k)
		}
	}
}

// TestEachObjectiveFromTheTable: for every objective metric, --goodput KEY:MS sets that metric
// alone and reads back in canonical form, and a record is judged by the metric's own value: on
// the objective it meets (vLLM's rule) with a slack of 1, 1 ns above it misses.
func TestEachObjectiveFromTheTable(t *testing.T) {
	r := records.NewRecord(1, 0, 0)
	r.Slot, r.Dispatched, r.Sent, r.Written = 3*time.Millisecond, 3*time.Millisecond, 4*time.Millisecond, 4*time.Millisecond
	r.First, r.Last, r.End = 30*time.Millisecond, 70*time.Millisecond, 71*time.Millisecond
	r.OutputTokens, r.ITL = 3, []time.Duration{15 * time.Millisecond, 25 * time.Millisecond}
	for _, m := range Metrics {
		if m.Objective == nil {
			continue
		}
		t.Run(m.Key, func(t *testing.T) {
			o, err := ParseGoodput([]string{m.Key + ":40"})
			if err != nil {
				t.Fatal(err)
			}
			if got := m.ObjectiveOf(o); got != 40*time.Millisecond {
				t.Fatalf("%s:40 set %v on %s", m.Key, got, m.Key)
			}
			if got := o.String(); got != m.Key+":40" {
				t.Errorf("String() = %q", got)
			}
			v, ok := m.Value(&r)
			if !ok || !(v > 0) || v != float64(time.Duration(v)) {
				t.Fatalf("%s of a record with every moment is %v, %v: want a whole number of ns", m.Key, v, ok)
			}
			*m.Objective(&o) = time.Duration(v)
			if !o.Met(&r) {
				t.Errorf("%s: a value on its objective must meet it", m.Key)
			}
			if got := o.Slack(&r); got != 1 {
				t.Errorf("%s: slack %v on the objective, want 1", m.Key, got)
			}
			*m.Objective(&o) = time.Duration(v) - 1
			// The slack is a float32: 1 ns in tens of milliseconds may round to exactly 1.
			if o.Met(&r) || o.Slack(&r) < 1 {
				t.Errorf("%s: a value 1 ns above its objective must miss it (slack %v)", m.Key, o.Slack(&r))
			}
		})
	}
}
