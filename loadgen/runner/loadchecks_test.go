package runner_test

import (
	"strings"
	"testing"
	"time"

	"github.com/loadcurve/loadcurve/internal/field"
	"github.com/loadcurve/loadcurve/loadgen"
	"github.com/loadcurve/loadcurve/loadgen/runner"
	"github.com/loadcurve/loadcurve/loadgen/shard"
	"github.com/loadcurve/loadcurve/loadgen/sim"
	"github.com/loadcurve/loadcurve/workloads"
)

// source is a workload source for the checks, or fails the test.
func source(t *testing.T, spec string) *workloads.Source {
	t.Helper()
	src, errs := workloads.NewSource(spec, workloads.LoadOptions{Seed: 1, TimeScale: 1,
		Synthetic: workloads.Synthetic{InputLen: 8, OutputLen: 2},
		Sessions:  workloads.SyntheticSessions{Turns: 2}}, "")
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	return src
}

// fields are the names of errs' field errors, in order ("?" for another error).
func fields(errs []error) []string {
	var out []string
	for _, e := range errs {
		name := "?"
		if fe := field.Of(e); fe != nil {
			name = fe.Name
		}
		out = append(out, name)
	}
	return out
}

func TestCheckSessions(t *testing.T) {
	file := source(t, "../../workloads/testdata/sessions.jsonl")
	generated := source(t, workloads.KindSessions)
	single := source(t, workloads.KindSynthetic)
	sharded := shard.Spec{Index: 0, Count: 2}
	for _, tc := range []struct {
		name        string
		src         *workloads.Source
		shard       shard.Spec
		thinkStated bool
		want        []string
	}{
		{"no workload", nil, sharded, true, nil},
		{"single requests: anything goes", single, sharded, true, nil},
		{"a file's sessions, one process, no think time", file, shard.Spec{}, false, nil},
		{"generated sessions take the stated think time", generated, shard.Spec{}, true, nil},
		{"sessions are not sharded", generated, sharded, false, []string{shard.FieldShard}},
		{"a file's sessions have their own think times", file, shard.Spec{}, true, []string{workloads.FieldThink}},
		{"both at once", file, sharded, true, []string{shard.FieldShard, workloads.FieldThink}},
	} {
		got := fields(runner.CheckSessions(runner.Options{Workload: tc.src, Shard: tc.shard}, tc.thinkStated))
		if len(got) != len(tc.want) || len(got) > 0 && (got[0] != tc.want[0] || got[len(got)-1] != tc.want[len(tc.want)-1]) {
			t.Errorf("%s: CheckSessions named %q, want %q", tc.name, got, tc.want)
		}
	}
	errs := runner.CheckSessions(runner.Options{Workload: file}, true)
	if len(errs) != 1 {
		t.Fatalf("CheckSessions(file, think) = %v", errs)
	}
	flags := map[string]string{workloads.FieldThink: "--think-time"}
	if got, want := field.Of(errs[0]).Render(func(n string) string { return flags[n] }),
		"--think-time: the sessions of ../../workloads/testdata/sessions.jsonl carry their own think times (think_ms on each later turn, 0 when absent), which the run follows; omit --think-time, or set think_ms in the file"; got != want {
		t.Errorf("rendered:\n%s\nwant:\n%s", got, want)
	}
}

func TestCheckResumable(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts runner.Options
		ok   bool
	}{
		{"one process, no start time", runner.Options{}, true},
		{"a shard", runner.Options{Shard: shard.Spec{Index: 1, Count: 3}}, false},
		{"a start time alone", runner.Options{StartAt: time.Unix(1_700_000_000, 0)}, false},
	} {
		err := runner.CheckResumable(tc.opts)
		if (err == nil) != tc.ok {
			t.Errorf("%s: CheckResumable = %v, want ok %v", tc.name, err, tc.ok)
		}
		if fe := field.Of(err); err != nil && (fe == nil || fe.Name != runner.FieldResume) {
			t.Errorf("%s: %v does not name the sweep to resume", tc.name, err)
		}
	}
}

// TestCheckEndpointAndClockAt: a workload of sessions needs an endpoint whose answers carry text;
// the virtual clock serves only the embedded queue, not a deployment at an address.
func TestCheckEndpointAndClockAt(t *testing.T) {
	sessions, single := source(t, workloads.KindSessions), source(t, workloads.KindSynthetic)
	flag := func(n string) string { return "--" + strings.ReplaceAll(n, " ", "-") }
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"sessions on chat", runner.CheckEndpoint(runner.Options{Target: loadgen.Target{Endpoint: loadgen.Chat}, Workload: sessions}), ""},
		{"single requests on embeddings", runner.CheckEndpoint(runner.Options{Target: loadgen.Target{Endpoint: loadgen.Embeddings}, Workload: single}), ""},
		{"sessions on embeddings", runner.CheckEndpoint(runner.Options{Target: loadgen.Target{Endpoint: loadgen.Embeddings}, Workload: sessions}),
			"--endpoint-kind embeddings with a --workload of sessions: a session's next turn carries the answer to the last, and an embeddings answer has no text; use --endpoint-kind chat (or responses), or a workload of single requests"},
		{"the embedded queue in virtual time", runner.CheckClockAt("", sim.ClockVirtual), ""},
		{"an address in real time", runner.CheckClockAt("http://127.0.0.1:9/v1", sim.ClockReal), ""},
		{"an address in virtual time", runner.CheckClockAt("http://127.0.0.1:9/v1", sim.ClockVirtual),
			"--virtual-clock virtual: the virtual clock serves the embedded queue; with --base-URL the deployment runs in real time"},
	} {
		var got string
		if tc.err != nil {
			got = field.Of(tc.err).Render(flag)
		}
		if got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}
