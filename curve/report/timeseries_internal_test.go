package report

import (
	"math"
	"testing"
	"time"

	"github.com/loadcurve/loadcurve/measure/timeseries"
)

// TestPlotPointsSteps: a tier longer than maxPlotPoints slices is drawn in steps whose rates
// and means are exact and whose TTFT is the highest of the step's slices.
func TestPlotPointsSteps(t *testing.T) {
	s := timeseries.Series{Slice: 500 * time.Millisecond}
	offered, running := 0, 0.0
	for k := range 2*maxPlotPoints - 1 {
		x := timeseries.Slice{Start: time.Duration(k) * s.Slice, Offered: k % 3, Completed: 1, Running: float64(k),
			TTFTP50: math.NaN(), TTFTP99: math.NaN()}
		if k%2 == 0 {
			x.TTFTP50, x.TTFTP99 = float64(k), float64(2*k)
		}
		offered += x.Offered
		running += x.Running
		s.Slices = append(s.Slices, x)
	}
	pts, step := plotPoints(s)
	if step != 2 || len(pts) != maxPlotPoints {
		t.Fatalf("step %d with %d points, want 2 with %d", step, len(pts), maxPlotPoints)
	}
	gotOffered, gotRunning := 0.0, 0.0
	for i, q := range pts[:maxPlotPoints-1] {
		gotOffered += q.offered * 2 * 0.5
		gotRunning += q.running * 2
		if q.completed != 1/0.5 || q.x != (float64(2*i)+1)*0.5 || q.p50 != float64(2*i) || q.p99 != float64(4*i) {
			t.Fatalf("point %d: %+v", i, q)
		}
	}
	last := pts[maxPlotPoints-1] // one slice
	gotOffered += last.offered * 0.5
	gotRunning += last.running
	if gotOffered != float64(offered) || gotRunning != running {
		t.Errorf("Σ offered %v, Σ running %v; want %d, %v", gotOffered, gotRunning, offered, running)
	}
	if pts, step := plotPoints(timeseries.Series{Slice: time.Second, Slices: s.Slices[:10]}); step != 1 || len(pts) != 10 || pts[3].offered != 0 || pts[4].offered != 1 {
		t.Errorf("a short series: step %d, %d points, %+v", step, len(pts), pts[:5])
	}
}
