package sweep_test

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/loadcurve/loadcurve/curve/sweep"
	"github.com/loadcurve/loadcurve/measure/records"
)

// TestResumeDifferences: what a resumed sweep must measure as the interrupted one did, and
// what it may not care about (the embedded deployment's port, the JSON spacing of a body, the
// start time, the label).
func TestResumeDifferences(t *testing.T) {
	base := records.Header{Target: "http://h:8000/v1", Endpoint: "chat", Model: "m", Workload: "synthetic(in=8,out=4)",
		Arrival: "poisson(rate=4)", Seed: 1, MaxConcurrency: 8, CachePolicy: "none", ExtraBody: json.RawMessage(`{"a": 1}`),
		TimeoutS: 60, Settings: &records.Settings{Objectives: "ttft:500"}}
	b, err := json.Marshal(base.Settings)
	if err != nil {
		t.Fatal(err)
	}
	settings := string(b) // the settings as the header holds them: every member
	sim := base
	sim.Target, sim.Sim, sim.SimConfig = "http://127.0.0.1:40001/v1", "default", json.RawMessage(`{"x":1}`)
	for _, tc := range []struct {
		name   string
		old    records.Header
		change func(*records.Header)
		want   []sweep.ResumeDifference
	}{
		{name: "the same", old: base, change: func(*records.Header) {}},
		{name: "what is not measured", old: base, change: func(h *records.Header) {
			h.ExtraBody, h.Label, h.WorkloadFingerprint = json.RawMessage(`{ "a" : 1 }`), "again", "f2"
		}},
		{name: "another port of the embedded deployment", old: sim, change: func(h *records.Header) { h.Target = "http://127.0.0.1:40002/v1" }},
		{name: "another target", old: base, change: func(h *records.Header) { h.Target = "http://other:8000/v1" },
			want: []sweep.ResumeDifference{{What: sweep.ResumeTarget, Was: "http://h:8000/v1", Is: "http://other:8000/v1"}}},
		{name: "the embedded deployment instead of the target", old: base, change: func(h *records.Header) { *h = sim },
			want: []sweep.ResumeDifference{
				{What: sweep.ResumeTarget, Was: "http://h:8000/v1", Is: "http://127.0.0.1:40001/v1"},
				{What: sweep.ResumeSim, Was: "none", Is: "default"},
				{What: sweep.ResumeSimConfig, Was: "none", Is: `{"x":1}`},
			}},
		{name: "the load and the request", old: base, change: func(h *records.Header) {
			h.Seed, h.MaxConcurrency, h.Arrival, h.TimeoutS, h.Retries = 2, 0, "poisson(rate=5)", 30, 1
		}, want: []sweep.ResumeDifference{
			{What: sweep.ResumeSchedule, Was: "poisson(rate=4)", Is: "poisson(rate=5)"},
			{What: sweep.ResumeSeed, Was: "1", Is: "2"},
			{What: sweep.ResumeMaxConcurrency, Was: "8", Is: "0"},
			{What: sweep.ResumeTimeout, Was: "60 s", Is: "30 s"},
			{What: sweep.ResumeRetries, Was: "0", Is: "1"},
		}},
		{name: "no body and no settings now", old: base, change: func(h *records.Header) { h.ExtraBody, h.Settings = nil, nil },
			want: []sweep.ResumeDifference{
				{What: sweep.ResumeExtraBody, Was: `{"a":1}`, Is: "none"},
				{What: sweep.ResumeSettings, Was: settings, Is: "none"},
			}},
	} {
		now := tc.old
		tc.change(&now)
		got := sweep.ResumeDifferences(tc.old, now)
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s:\ngot  %+v\nwant %+v", tc.name, got, tc.want)
		}
	}
}

// TestResumeDifferenceSaysBothValues: a difference says the setting (named by the caller, or in
// words) and both values.
func TestResumeDifferenceSaysBothValues(t *testing.T) {
	d := sweep.ResumeDifference{What: sweep.ResumeSeed, Was: "1", Is: "2"}
	if got, want := d.Error(), "the seed: the interrupted sweep's records say 1, this sweep's would say 2"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	named := d.Render(func(what string) string { return "the " + what + " (its input)" })
	if want := "the seed (its input): the interrupted sweep's records say 1, this sweep's would say 2"; named != want {
		t.Errorf("Render = %q, want %q", named, want)
	}
}
