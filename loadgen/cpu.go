package loadgen

import (
	"bufio"
	"bytes"
	"os"
	"strconv"
	"time"

	"github.com/loadcurve/loadcurve/measure/records"
)

// CPUSample is what this process and the machine's CPUs had spent at a moment, so that the CPU a
// tier cost can be told from two samples (records.TierCPU): the client's own share of the
// cores, and how busy the cores were with everything else (the target, when it shares them).
type CPUSample struct {
	at time.Time // monotonic
	// process is this process's user plus system CPU time (getrusage).
	process   time.Duration
	processOK bool
	// busy and total are all CPUs' busy and total time since boot, in clock ticks, from
	// /proc/stat (0 where it is not read); cpus the number of CPUs it counts.
	busy, total uint64
	cpus        int
}

// SampleCPU reads the process's and the machine's CPU time now.
func SampleCPU() CPUSample {
	s := CPUSample{at: time.Now()}
	s.process, s.processOK = processCPU()
	if b, err := os.ReadFile("/proc/stat"); err == nil {
		s.busy, s.total, s.cpus = parseProcStat(b)
	}
	return s
}

// parseProcStat reads the aggregate "cpu" line of /proc/stat (user nice system idle iowait irq
// softirq steal guest guest_nice, in clock ticks): busy is all but idle and iowait (steal, the
// time a hypervisor gave to others, is busy: the CPU was not there to run on), total all of them
// but guest and guest_nice, which user and nice already count. cpus counts the "cpuN" lines.
func parseProcStat(b []byte) (busy, total uint64, cpus int) {
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		line := sc.Bytes()
		if !bytes.HasPrefix(line, []byte("cpu")) {
			continue
		}
		fields := bytes.Fields(line)
		if len(fields) == 0 {
			continue
		}
		if string(fields[0]) != "cpu" {
			cpus++
			continue
		}
		for i, f := range fields[1:] {
			if i >= 8 { // guest, guest_nice: inside user and nice
				break
			}
			v, err := strconv.ParseUint(string(f), 10, 64)
			if err != nil {
				return 0, 0, 0
			}
			total += v
			if i != 3 && i != 4 { // idle, iowait
				busy += v
			}
		}
	}
	return busy, total, cpus
}

// Since is the CPU spent from s0 to s: the process's, and the machine's share busy when both
// samples read /proc/stat; nil where the process's CPU time is not read. inProcessTarget says the target runs in this process (the embedded
// deployment), so that its CPU is in the process's.
func (s CPUSample) Since(s0 CPUSample, inProcessTarget bool) *records.TierCPU {
	wall := s.at.Sub(s0.at)
	if wall <= 0 || !s.processOK || !s0.processOK {
		return nil
	}
	c := &records.TierCPU{WallS: wall.Seconds(), ProcessS: (s.process - s0.process).Seconds(), InProcessTarget: inProcessTarget}
	if s.cpus > 0 && s.cpus == s0.cpus && s.total > s0.total && s.busy >= s0.busy {
		c.MachineCPUs = s.cpus
		c.MachineBusy = float64(s.busy-s0.busy) / float64(s.total-s0.total)
	}
	return c
}
