package loadgen

import (
	"math"
	"runtime"
	"testing"
	"time"
)

func TestParseProcStat(t *testing.T) {
	for _, tc := range []struct {
		name        string
		stat        string
		busy, total uint64
		cpus        int
	}{
		{"two CPUs, guest time inside user", "cpu  100 5 50 800 20 3 2 10 40 1\ncpu0 50 2 25 400 10 1 1 5 20 0\ncpu1 50 3 25 400 10 2 1 5 20 1\nintr 1 2 3\nctxt 99\n",
			100 + 5 + 50 + 3 + 2 + 10, 100 + 5 + 50 + 800 + 20 + 3 + 2 + 10, 2},
		{"an old kernel's four columns", "cpu 10 0 10 80\ncpu0 10 0 10 80\n", 20, 100, 1},
		{"no cpu line", "intr 1\n", 0, 0, 0},
		{"garbage", "cpu 10 x 10 80\ncpu0 1 2 3 4\n", 0, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			busy, total, cpus := parseProcStat([]byte(tc.stat))
			if busy != tc.busy || total != tc.total || cpus != tc.cpus {
				t.Errorf("busy %d total %d cpus %d, want %d %d %d", busy, total, cpus, tc.busy, tc.total, tc.cpus)
			}
		})
	}
}

func TestCPUSince(t *testing.T) {
	t0 := time.Now()
	s0 := CPUSample{at: t0, process: time.Second, processOK: true, busy: 1000, total: 4000, cpus: 2}
	s1 := CPUSample{at: t0.Add(10 * time.Second), process: 1500 * time.Millisecond, processOK: true, busy: 2500, total: 6000, cpus: 2}
	c := s1.Since(s0, true)
	if c == nil {
		t.Fatal("nil")
	}
	if c.WallS != 10 || c.ProcessS != 0.5 || !c.InProcessTarget || c.MachineCPUs != 2 || math.Abs(c.MachineBusy-0.75) > 1e-12 {
		t.Errorf("%+v: want 10 s wall, 0.5 s of CPU, in process, 2 CPUs 75 %% busy", c)
	}
	if got := c.Cores(); math.Abs(got-0.05) > 1e-12 {
		t.Errorf("cores %g, want 0.05", got)
	}
	// A CPU brought online between the samples: the machine's share is not stated.
	s2 := s1
	s2.cpus = 3
	if c := s2.Since(s0, false); c == nil || c.MachineCPUs != 0 || c.MachineBusy != 0 {
		t.Errorf("%+v: want no machine share across a change of CPUs", c)
	}
	if c := s0.Since(s0, false); c != nil {
		t.Errorf("no wall time: %+v, want nil", c)
	}
	if c := (CPUSample{at: s1.at}).Since(s0, false); c != nil {
		t.Errorf("process CPU not read: %+v, want nil", c)
	}
}

// TestSampleCPUCountsThisProcess: spinning on the CPU for a while shows in the process's time.
func TestSampleCPUCountsThisProcess(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("getrusage and /proc/stat: read on Linux")
	}
	s0 := SampleCPU()
	spin := 0
	for s := time.Now(); time.Since(s) < 50*time.Millisecond; {
		spin++
	}
	c := SampleCPU().Since(s0, false)
	if c == nil || c.ProcessS <= 0 || c.MachineCPUs < 1 {
		t.Fatalf("%+v after %d spins: want the process's CPU and the machine's CPUs", c, spin)
	}
	if c.ProcessS > c.WallS*float64(c.MachineCPUs)+0.05 {
		t.Errorf("process CPU %g s over %g s of wall on %d CPUs", c.ProcessS, c.WallS, c.MachineCPUs)
	}
}
