package runner_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/loadcurve/loadcurve/curve/result"
	"github.com/loadcurve/loadcurve/loadgen/runner"
	"github.com/loadcurve/loadcurve/loadgen/sim"
	"github.com/loadcurve/loadcurve/measure/timeseries"
)

// ranVirtual is a virtual session writing to dir (tallying unless bounded) that ran a run of 40
// requests, and its result.
func ranVirtual(t *testing.T, dir string, bounded bool) (*runner.Session, *result.Result) {
	t.Helper()
	q := sim.QueueConfig{ModelName: "mdc", Servers: 2, Service: 100 * time.Millisecond, FirstToken: 10 * time.Millisecond, OutputTokens: 4}
	s := open(t, "", "off", dir, func(o *runner.Options) {
		o.Target.Model, o.Queue, o.Virtual, o.SimLabel, o.Tally = "", &q, true, q.String(), !bounded
	})
	res, err := s.Execute(context.Background(), s.Executor(runConfig(40), nil, nil))
	if err != nil {
		t.Fatal(err)
	}
	return s, res
}

func TestFinish(t *testing.T) {
	noRead := func(t *testing.T) func(string) (map[int]timeseries.Series, error) {
		return func(string) (map[int]timeseries.Series, error) {
			t.Error("the records file was read for its time series")
			return nil, nil
		}
	}
	t.Run("tallied: the session's series", func(t *testing.T) {
		s, res := ranVirtual(t, t.TempDir(), false)
		series, warnings, err := s.Finish(res, false, noRead(t))
		if err != nil || len(warnings) > 0 || len(series[0].Slices) == 0 {
			t.Fatalf("series %v, warnings %q, error %v", series, warnings, err)
		}
	})
	t.Run("bounded: no series, the peaks read back", func(t *testing.T) {
		s, res := ranVirtual(t, t.TempDir(), true)
		if res.Peaks != nil {
			t.Fatalf("bounded, the session tallied peaks %v", res.Peaks)
		}
		series, warnings, err := s.Finish(res, false, noRead(t))
		if err != nil || len(warnings) > 0 || series != nil {
			t.Fatalf("series %v, warnings %q, error %v", series, warnings, err)
		}
		if p, ok := res.Peaks[0]; !ok || p.MaxConcurrentRequests < 1 {
			t.Errorf("peaks %+v, want tier 0's from the records file", res.Peaks)
		}
	})
	t.Run("records lost: nothing read back", func(t *testing.T) {
		s, res := ranVirtual(t, t.TempDir(), true)
		series, warnings, err := s.Finish(res, true, noRead(t))
		if err != nil || len(warnings) > 0 || series != nil || res.Peaks != nil {
			t.Fatalf("series %v, warnings %q, error %v, peaks %v", series, warnings, err, res.Peaks)
		}
	})
	t.Run("no records file", func(t *testing.T) {
		s, res := ranVirtual(t, "", false)
		series, warnings, err := s.Finish(res, false, noRead(t))
		if err != nil || len(warnings) > 0 || series != nil {
			t.Fatalf("series %v, warnings %q, error %v", series, warnings, err)
		}
	})
}

// TestFinishAppended: a resumed sweep's series are its whole records file's, and a file that
// cannot be read leaves them out with a warning.
func TestFinishAppended(t *testing.T) {
	q := sim.QueueConfig{ModelName: "mdc", Servers: 2, Service: 100 * time.Millisecond, FirstToken: 10 * time.Millisecond, OutputTokens: 4}
	dir := t.TempDir()
	first, res := ranVirtual(t, dir, false)
	if _, _, err := first.Finish(res, false, nil); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		readErr error
		warns   int
	}{{"read", nil, 0}, {"unreadable", errors.New("read records: bad line"), 1}} {
		s := open(t, "", "off", dir, func(o *runner.Options) {
			o.Target.Model, o.Queue, o.Virtual, o.SimLabel, o.Tally, o.AppendRecords = "", &q, true, q.String(), true, true
		})
		want := map[int]timeseries.Series{0: {}}
		var read string
		series, warnings, err := s.Finish(&result.Result{}, false, func(path string) (map[int]timeseries.Series, error) {
			read = path
			if tc.readErr != nil {
				return nil, tc.readErr
			}
			return want, nil
		})
		if err != nil || len(warnings) != tc.warns || read == "" || (tc.readErr == nil) != (series != nil) {
			t.Errorf("%s: series %v, warnings %q, error %v, read %q", tc.name, series, warnings, err, read)
		}
	}
}
