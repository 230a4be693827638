package bench

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
)

// RateRow is the median over repeats of one role at one rate and concurrency.
type RateRow struct {
	Role           string  `json:"role"`
	Rate           float64 `json:"rate"`
	MaxConcurrency int     `json:"max_concurrency"`
	Runs           int     `json:"runs"`

	Planned         float64 `json:"planned"`          // requests in the schedule
	ServerRequests  float64 `json:"server_requests"`  // requests the server received
	OfferedRate     float64 `json:"offered_rate"`     // of the schedule, (N-1)/(last-first)
	ServerRate      float64 `json:"server_rate"`      // as the server saw it, (n-1)/(last-first arrival)
	DeliveredRatio  float64 `json:"delivered_ratio"`  // min(server rate / offered, server requests / planned), per run
	SummaryRealised float64 `json:"summary_realised"` // the client's own realised rate (loadcurve: measure's)
	SummaryRate     float64 `json:"summary_delivered"`
	LagP50Ms        float64 `json:"schedule_lag_p50_ms"`
	LagP99Ms        float64 `json:"schedule_lag_p99_ms"`
	LagMaxMs        float64 `json:"schedule_lag_max_ms"`
	// TTFTOverMs is the client's TTFT p50 minus the server's (its own clock), median over runs.
	TTFTOverMs    float64 `json:"ttft_overhead_ms"`
	CPUPerChunkUs float64 `json:"cpu_us_per_chunk"`
	// CPURatio is this role's CPU per chunk over the probe's in the same repeat (median over
	// repeats); 1 for the probe.
	CPURatio    float64 `json:"cpu_ratio_vs_probe"`
	ClientBound int     `json:"client_bound_runs"` // runs whose summary was marked client_bound
}

// StallRow is the memory held per open stream.
type StallRow struct {
	Role                string  `json:"role"`
	Streams             int64   `json:"streams_held"`
	BaselineMiB         float64 `json:"baseline_rss_mib"`
	MaxRSSMiB           float64 `json:"max_rss_mib"`
	RSSPerStreamKiB     float64 `json:"rss_kib_per_stream"`
	HeldRSSPerStreamKiB float64 `json:"held_rss_kib_per_stream"`
	// Go runtime's view while held, per stream: heap in use and goroutine stacks (KiB), and
	// goroutines.
	HeapPerStreamKiB    float64 `json:"heap_kib_per_stream"`
	StackPerStreamKiB   float64 `json:"stack_kib_per_stream"`
	GoroutinesPerStream float64 `json:"goroutines_per_stream"`
}

// LightRow is the TTFT measured by a client against the server's own clock at light load.
type LightRow struct {
	Role          string  `json:"role"`
	Rate          float64 `json:"rate"`
	Runs          int     `json:"runs"`
	ClientTTFTMs  float64 `json:"client_ttft_p50_ms"`
	ServerTTFTMs  float64 `json:"server_ttft_p50_ms"`
	OverheadMs    float64 `json:"overhead_ms"` // client - server, per run, median over runs
	OverheadRatio float64 `json:"overhead_ratio_vs_probe"`
}

// Goal is one goal of the issue with the figure measured for it.
type Goal struct {
	Goal     string  `json:"goal"`
	Target   string  `json:"target"`
	Measured string  `json:"measured"`
	Value    float64 `json:"value"`
	Status   string  `json:"status"` // GoalMet, GoalNotMet or GoalNotMeasured
}

// Goal statuses.
const (
	GoalMet         = "met"
	GoalNotMet      = "NOT met"
	GoalNotMeasured = "not measured"
)

// median returns the median of xs (the mean of the middle two for an even count), 0 for none.
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

type rowKey struct {
	role string
	rate float64
	conc int
}

// NewReport builds a report from measurements: the medians over repeats, the ratios to the
// probe of the same repeat, and the goals. Run uses it; it also re-derives a report from the
// measurements of a saved one.
func NewReport(opts ReportOptions, machine Machine, ms []Measurement) *Report {
	rep := &Report{Options: opts, Machine: machine, Measurements: ms}
	rep.summarise()
	return rep
}

// summarise fills the medians and the goals from the measurements.
func (rep *Report) summarise() {
	byKey := map[rowKey][]Measurement{}
	var keys []rowKey
	probeCPU := map[[3]float64]float64{} // (rate, conc, repeat) → probe CPU per chunk
	probeTTFT := map[int]float64{}       // repeat → probe light overhead
	for _, m := range rep.Measurements {
		switch m.Phase {
		case "rate":
			k := rowKey{m.Role, m.Rate, m.MaxConcurrency}
			if _, ok := byKey[k]; !ok {
				keys = append(keys, k)
			}
			byKey[k] = append(byKey[k], m)
			if m.Role == NameProbe {
				probeCPU[[3]float64{m.Rate, float64(m.MaxConcurrency), float64(m.Repeat)}] = m.CPUPerChunkUs
			}
		case "light":
			if m.Role == NameProbe {
				probeTTFT[m.Repeat] = m.Child.TTFTP50Ms - m.Server.TTFTP50Ms
			}
		case "stall":
			rep.Stall = append(rep.Stall, StallRow{Role: m.Role, Streams: m.Child.Held,
				BaselineMiB: float64(m.Child.BaselineRSS) / (1 << 20), MaxRSSMiB: float64(m.Child.MaxRSS) / (1 << 20),
				RSSPerStreamKiB: m.RSSPerStreamKiB, HeldRSSPerStreamKiB: m.HeldRSSPerStreamKiB,
				HeapPerStreamKiB: perStream(m.Child.HeldHeap, m.Child.Held) / 1024, StackPerStreamKiB: perStream(m.Child.HeldStacks, m.Child.Held) / 1024,
				GoroutinesPerStream: perStream(int64(m.Child.HeldGoroutines), m.Child.Held)})
		}
	}
	rep.Rates = nil
	for _, k := range keys {
		ms := byKey[k]
		row := RateRow{Role: k.role, Rate: k.rate, MaxConcurrency: k.conc, Runs: len(ms)}
		col := func(f func(Measurement) float64) float64 {
			v := make([]float64, len(ms))
			for i, m := range ms {
				v[i] = f(m)
			}
			return median(v)
		}
		row.Planned = col(func(m Measurement) float64 { return float64(m.Child.Planned) })
		row.ServerRequests = col(func(m Measurement) float64 { return float64(m.Server.Requests) })
		row.OfferedRate = col(func(m Measurement) float64 { return m.Child.OfferedRate })
		row.ServerRate = col(func(m Measurement) float64 { return m.Server.DeliveredRate })
		row.DeliveredRatio = col(deliveredRatio)
		row.SummaryRealised = col(func(m Measurement) float64 { return m.Child.RealisedRate })
		row.SummaryRate = col(func(m Measurement) float64 { return m.Child.DeliveredRate })
		row.LagP50Ms = col(func(m Measurement) float64 { return m.Child.LagP50Ms })
		row.LagP99Ms = col(func(m Measurement) float64 { return m.Child.LagP99Ms })
		row.LagMaxMs = col(func(m Measurement) float64 { return m.Child.LagMaxMs })
		row.TTFTOverMs = col(func(m Measurement) float64 { return m.Child.TTFTP50Ms - m.Server.TTFTP50Ms })
		row.CPUPerChunkUs = col(func(m Measurement) float64 { return m.CPUPerChunkUs })
		row.CPURatio = col(func(m Measurement) float64 {
			p := probeCPU[[3]float64{m.Rate, float64(m.MaxConcurrency), float64(m.Repeat)}]
			if p <= 0 {
				return 0
			}
			return m.CPUPerChunkUs / p
		})
		for _, m := range ms {
			if m.Child.ClientBound {
				row.ClientBound++
			}
		}
		rep.Rates = append(rep.Rates, row)
	}

	rep.Light = nil
	for _, role := range []string{NameProbe, NameLoadcurve, NameSpin, NameProbeSpin} {
		var client, server, over, ratio []float64
		var rate float64
		for _, m := range rep.Measurements {
			if m.Phase != "light" || m.Role != role {
				continue
			}
			rate = m.Rate
			o := m.Child.TTFTP50Ms - m.Server.TTFTP50Ms
			client, server, over = append(client, m.Child.TTFTP50Ms), append(server, m.Server.TTFTP50Ms), append(over, o)
			if p, ok := probeTTFT[m.Repeat]; ok && p > 0 {
				ratio = append(ratio, o/p)
			}
		}
		if len(over) > 0 {
			rep.Light = append(rep.Light, LightRow{Role: role, Rate: rate, Runs: len(over), ClientTTFTMs: median(client),
				ServerTTFTMs: median(server), OverheadMs: median(over), OverheadRatio: median(ratio)})
		}
	}
	rep.Goals = rep.goals()
}

func perStream(x, streams int64) float64 {
	if streams <= 0 {
		return 0
	}
	return float64(x) / float64(streams)
}

// deliveredRatio is the delivered share of a run: the server's rate over the offered rate, or
// the share of planned requests the server received, whichever is lower (a client that sends
// on time but drops requests, or sends all of them late, both fall short).
func deliveredRatio(m Measurement) float64 {
	if m.Child.OfferedRate <= 0 || m.Child.Planned == 0 {
		return 0
	}
	return min(m.Server.DeliveredRate/m.Child.OfferedRate, float64(m.Server.Requests)/float64(m.Child.Planned))
}

// Goal thresholds of issue 7.
const (
	goalDeliveredRate  = 1000
	goalDeliveredRatio = 0.99
	goalCPURatio       = 1.5
	goalLagRate        = 500
	goalLagP50Ms       = 0.5
	goalLagP99Ms       = 2.5
	goalSpinP99Ms      = 0.2
	goalTTFTOverMs     = 0.5
	goalStreams        = 10_000
	goalKiBPerStream   = 40
	agreementTolerance = 0.01 // the summary's delivered rate within 1 % of the server's
)

func (rep *Report) row(role string, rate float64) (RateRow, bool) {
	for _, r := range rep.Rates {
		if r.Role == role && r.Rate == rate && r.MaxConcurrency == 0 {
			return r, true
		}
	}
	return RateRow{}, false
}

func status(measured, met bool) string {
	switch {
	case !measured:
		return GoalNotMeasured
	case met:
		return GoalMet
	}
	return GoalNotMet
}

// goals compares the figures with the goals of issue 7.
func (rep *Report) goals() []Goal {
	gs := rep.deliveryGoals()
	gs = append(gs, rep.cpuGoals()...)
	gs = append(gs, rep.lagGoals()...)
	return append(gs, rep.ttftGoal(), rep.streamsGoal())
}

// deliveryGoals: the delivered rate at 1,000 req/s, and the summary's agreement with the
// server's count.
func (rep *Report) deliveryGoals() []Goal {
	var gs []Goal
	r, ok := rep.row(NameLoadcurve, goalDeliveredRate)
	g := Goal{Goal: "delivered rate at 1,000 req/s (server's count)", Target: fmt.Sprintf(">= %.0f %% of offered", goalDeliveredRatio*100)}
	if ok {
		g.Value = r.DeliveredRatio
		g.Measured = fmt.Sprintf("%.1f %% (%.1f of %.1f req/s; %.0f of %.0f requests)", 100*r.DeliveredRatio, r.ServerRate, r.OfferedRate, r.ServerRequests, r.Planned)
		if p, ok := rep.row(NameProbe, goalDeliveredRate); ok {
			g.Measured += fmt.Sprintf("; probe %.1f %%", 100*p.DeliveredRatio)
		}
	}
	g.Status = status(ok, ok && r.DeliveredRatio >= goalDeliveredRatio)
	gs = append(gs, g)

	g = Goal{Goal: "summary's delivered rate agrees with the server's at 1,000 req/s", Target: fmt.Sprintf("within %.0f %%", agreementTolerance*100)}
	if ok && r.ServerRate > 0 {
		d := r.SummaryRate/r.ServerRate - 1
		g.Value = d
		g.Measured = fmt.Sprintf("%+.2f %% (summary %.1f, server %.1f req/s; summary schedule_lag p99 %.3f ms)", 100*d, r.SummaryRate, r.ServerRate, r.LagP99Ms)
		g.Status = status(true, d <= agreementTolerance && d >= -agreementTolerance)
	} else {
		g.Status = GoalNotMeasured
	}
	gs = append(gs, g)
	return gs
}

// cpuGoals: the CPU per chunk at each rate against the probe's.
func (rep *Report) cpuGoals() []Goal {
	var gs []Goal
	for _, rate := range rep.Options.Rates {
		r, ok := rep.row(NameLoadcurve, rate)
		g := Goal{Goal: fmt.Sprintf("CPU per chunk at %s req/s vs the probe", formatRate(rate)), Target: fmt.Sprintf("<= %.1f×", goalCPURatio)}
		if ok {
			p, _ := rep.row(NameProbe, rate)
			g.Value = r.CPURatio
			g.Measured = fmt.Sprintf("%.2f× (%.1f vs %.1f µs/chunk)", r.CPURatio, r.CPUPerChunkUs, p.CPUPerChunkUs)
		}
		g.Status = status(ok && r.CPURatio > 0, r.CPURatio <= goalCPURatio)
		gs = append(gs, g)
	}
	return gs
}

// lagGoals: the schedule lag at 500 req/s, and with the spin pacer.
func (rep *Report) lagGoals() []Goal {
	var gs []Goal
	r, ok := rep.row(NameLoadcurve, goalLagRate)
	g := Goal{Goal: "schedule_lag at 500 req/s", Target: fmt.Sprintf("p50 <= %.1f ms, p99 <= %.1f ms", goalLagP50Ms, goalLagP99Ms)}
	if ok {
		g.Value = r.LagP99Ms
		g.Measured = fmt.Sprintf("p50 %.3f ms, p99 %.3f ms", r.LagP50Ms, r.LagP99Ms)
		if p, ok := rep.row(NameProbe, goalLagRate); ok {
			g.Measured += fmt.Sprintf(" (probe p50 %.3f, p99 %.3f ms)", p.LagP50Ms, p.LagP99Ms)
		}
	}
	g.Status = status(ok, r.LagP50Ms <= goalLagP50Ms && r.LagP99Ms <= goalLagP99Ms)
	gs = append(gs, g)

	r, ok = rep.row(NameSpin, goalLagRate)
	g = Goal{Goal: "stretch: schedule_lag p99 with the spin pacer at 500 req/s", Target: fmt.Sprintf("p99 < %.1f ms, CPU cost measured", goalSpinP99Ms)}
	if ok {
		g.Value = r.LagP99Ms
		g.Measured = fmt.Sprintf("p99 %.3f ms, p50 %.3f ms, %.1f µs CPU/chunk (%.2f× the probe)", r.LagP99Ms, r.LagP50Ms, r.CPUPerChunkUs, r.CPURatio)
		if p, ok := rep.row(NameProbeSpin, goalLagRate); ok {
			g.Measured += fmt.Sprintf("; busy-waiting probe p99 %.3f ms, %.1f µs CPU/chunk", p.LagP99Ms, p.CPUPerChunkUs)
		}
	}
	g.Status = status(ok, r.LagP99Ms < goalSpinP99Ms)
	gs = append(gs, g)
	return gs
}

// ttftGoal: the client's TTFT overhead against the server's clock at light load.
func (rep *Report) ttftGoal() Goal {
	g := Goal{Goal: "TTFT overhead vs the server's clock at light load", Target: fmt.Sprintf("<= %.1f ms", goalTTFTOverMs)}
	var lr LightRow
	ok := false
	for _, l := range rep.Light {
		if l.Role == NameLoadcurve {
			lr, ok = l, true
		}
	}
	if ok {
		g.Value = lr.OverheadMs
		g.Measured = fmt.Sprintf("%.3f ms (client p50 %.3f, server p50 %.3f ms, at %s req/s)", lr.OverheadMs, lr.ClientTTFTMs, lr.ServerTTFTMs, formatRate(lr.Rate))
		for _, l := range rep.Light {
			if l.Role == NameProbe {
				g.Measured += fmt.Sprintf("; probe %.3f ms", l.OverheadMs)
			}
		}
	}
	g.Status = status(ok, lr.OverheadMs <= goalTTFTOverMs)

	return g
}

// streamsGoal: the client's memory per stream over 10,000 concurrent streams.
func (rep *Report) streamsGoal() Goal {
	g := Goal{Goal: "10,000 concurrent streams", Target: fmt.Sprintf("<= %d KiB of client memory each", goalKiBPerStream)}
	var sr StallRow
	ok := false
	for _, s := range rep.Stall {
		if s.Role == NameLoadcurve {
			sr, ok = s, true
		}
	}
	if ok {
		g.Value = sr.RSSPerStreamKiB
		g.Measured = fmt.Sprintf("%.1f KiB per stream (peak RSS delta) over %d streams; %.1f KiB while held", sr.RSSPerStreamKiB, sr.Streams, sr.HeldRSSPerStreamKiB)
		for _, s := range rep.Stall {
			if s.Role == NameProbe {
				g.Measured += fmt.Sprintf("; probe %.1f KiB", s.RSSPerStreamKiB)
			}
		}
		if sr.Streams < goalStreams {
			g.Measured += fmt.Sprintf(" (fewer than %d streams: not the goal's scale)", goalStreams)
		}
	}
	g.Status = status(ok && sr.Streams >= goalStreams, sr.RSSPerStreamKiB <= goalKiBPerStream)
	return g
}

// WriteJSON writes the report as indented JSON.
func (rep *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(rep); err != nil {
		return fmt.Errorf("bench report: %w", err)
	}
	return nil
}

// WriteTable writes the report as plain-text tables.
func (rep *Report) WriteTable(w io.Writer) error {
	o := rep.Options
	var b strings.Builder
	m := rep.Machine
	fmt.Fprintf(&b, "loadcurve bench: %d-chunk streams, %g ms between chunks, %g s schedules, %d repeat(s) (medians), seed %d; %s/%s, %d CPUs, %s, load average %.2f before, %.2f after\n\n",
		o.Chunks, o.ChunkGapMs, o.DurationS, o.Repeats, o.Seed, m.GOOS, m.GOARCH, m.CPUs, m.GoVersion, m.LoadAvgBefore, m.LoadAvgAfter)
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "role\trate\tconc\toffered/s\tserver/s\tdelivered\trequests\tlag p50 ms\tlag p99 ms\tlag max ms\tTTFT over ms\tCPU µs/chunk\tvs probe\tsummary/s\tclient_bound\t")
	for _, r := range rep.Rates {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%.1f\t%.1f\t%.1f %%\t%.0f/%.0f\t%.3f\t%.3f\t%.3f\t%.3f\t%.2f\t%.2f×\t%.1f\t%d/%d\t\n",
			r.Role, formatRate(r.Rate), r.MaxConcurrency, r.OfferedRate, r.ServerRate, 100*r.DeliveredRatio, r.ServerRequests, r.Planned,
			r.LagP50Ms, r.LagP99Ms, r.LagMaxMs, r.TTFTOverMs, r.CPUPerChunkUs, r.CPURatio, r.SummaryRate, r.ClientBound, r.Runs)
	}
	tw.Flush()
	if len(rep.Light) > 0 {
		b.WriteString("\nTTFT against the server's clock (light load)\n")
		tw = tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "role\trate\tclient TTFT p50 ms\tserver TTFT p50 ms\toverhead ms\tvs probe\t")
		for _, l := range rep.Light {
			fmt.Fprintf(tw, "%s\t%s\t%.3f\t%.3f\t%.3f\t%.2f×\t\n", l.Role, formatRate(l.Rate), l.ClientTTFTMs, l.ServerTTFTMs, l.OverheadMs, l.OverheadRatio)
		}
		tw.Flush()
	}
	if len(rep.Stall) > 0 {
		b.WriteString("\nMemory per open stream (stalled streams)\n")
		tw = tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "role\tstreams\tbaseline MiB\tpeak RSS MiB\tKiB/stream (peak)\tKiB/stream (held)\theap KiB/stream\tstack KiB/stream\tgoroutines/stream\t")
		for _, s := range rep.Stall {
			fmt.Fprintf(tw, "%s\t%d\t%.1f\t%.1f\t%.1f\t%.1f\t%.1f\t%.1f\t%.2f\t\n", s.Role, s.Streams, s.BaselineMiB, s.MaxRSSMiB,
				s.RSSPerStreamKiB, s.HeldRSSPerStreamKiB, s.HeapPerStreamKiB, s.StackPerStreamKiB, s.GoroutinesPerStream)
		}
		tw.Flush()
	}
	b.WriteString("\nGoals (issue 7)\n")
	tw = tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "goal\ttarget\tmeasured\tstatus")
	for _, g := range rep.Goals {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", g.Goal, g.Target, g.Measured, g.Status)
	}
	tw.Flush()
	if _, err := io.WriteString(w, b.String()); err != nil {
		return fmt.Errorf("bench report: %w", err)
	}
	return nil
}
