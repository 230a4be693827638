package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"time"

	"github.com/loadcurve/loadcurve/curve"
	"github.com/loadcurve/loadcurve/measure"
	"github.com/loadcurve/loadcurve/records"
	"github.com/loadcurve/loadcurve/report"
	"github.com/loadcurve/loadcurve/servermetrics"
)

// tierInfo identifies one tier of a records file.
type tierInfo struct {
	index       int
	maxConc     int // the run's --max-concurrency (0: none)
	rate, burst float64
	arrival     string
	planned     int
	fingerprint string
}

func (o *tierOutcome) tierInfo() tierInfo {
	return tierInfo{index: o.plan.index, maxConc: o.summary.MaxConcurrency, rate: o.plan.spec.Rate, burst: o.plan.spec.Burstiness,
		arrival: o.plan.spec.String(), planned: o.summary.Planned}
}

// tierData is one tier's identity and records: all a curve is computed from. A tier read with
// report --bounded-memory has no records but a streaming summary and the trend test's points.
type tierData struct {
	info   tierInfo
	recs   []records.Record
	server json.RawMessage // server-side metrics (servermetrics.TierMetrics), nil when not scraped

	approx         *measure.ApproxAccumulator // non-nil: summarise from it, not from recs
	trendX, trendY []float64                  // with approx: planned time (s), time to first token from planned (ms)
}

// trend tests the tier's time to first token from the planned arrival for growth.
func (t tierData) trend() curve.Trend {
	if t.approx != nil {
		return curve.TrendTest(t.trendX, t.trendY)
	}
	return trendOf(t.recs)
}

// curveOptions are the analysis inputs, stored in curve.json so that `report` can reproduce it.
type curveOptions struct {
	Objectives        string       `json:"objectives"`
	Percentiles       []float64    `json:"percentiles"`
	PercentileMetrics []string     `json:"percentile_metrics,omitempty"` // nil: all
	MaxScheduleLagMs  float64      `json:"max_schedule_lag_ms"`
	WindowWarmupS     float64      `json:"window_warmup_s,omitempty"`
	WindowCooldownS   float64      `json:"window_cooldown_s,omitempty"`
	Params            curve.Params `json:"params"`
}

// optionsOf records the summary options and analysis parameters of a curve.
func optionsOf(opts measure.Options, params curve.Params) curveOptions {
	return curveOptions{Objectives: opts.Objectives.String(), Percentiles: opts.Percentiles, PercentileMetrics: opts.Metrics,
		MaxScheduleLagMs: ms(opts.MaxScheduleLag), WindowWarmupS: opts.Warmup.Seconds(), WindowCooldownS: opts.Cooldown.Seconds(),
		Params: params}
}

// curveFile is curve.json.
type curveFile struct {
	Run      records.Header    `json:"run"`
	Options  curveOptions      `json:"options"`
	Complete bool              `json:"complete"`
	Probe    *measure.Summary  `json:"probe,omitempty"`
	Tiers    []measure.Summary `json:"tiers"`
	Analysis curve.Analysis    `json:"analysis"`
	// ServerMetrics holds what the target's metrics endpoint reported, by tier index.
	ServerMetrics map[int]json.RawMessage `json:"server_metrics,omitempty"`
}

func summarize(t tierData, opts measure.Options) measure.Summary {
	info := measure.TierInfo{Tier: t.info.index, Arrival: t.info.arrival,
		NominalRate: t.info.rate, Burstiness: t.info.burst, MaxConcurrency: t.info.maxConc, Planned: t.info.planned}
	sum := summaryOf(t.approx, t.recs, info, opts)
	checkDelivered(&sum, t.info.maxConc)
	return sum
}

// summaryOf summarises a tier from its streaming summary when it has one (made with the same
// opts), else from its records.
func summaryOf(approx *measure.ApproxAccumulator, recs []records.Record, info measure.TierInfo, opts measure.Options) measure.Summary {
	if approx != nil {
		return approx.Summary(info)
	}
	return measure.Summarize(recs, info, opts)
}

// checkDelivered marks a tier client-bound when fewer requests per second left the client than
// the schedule offered. Only without a concurrency cap (a cap holds requests back by design, and
// that shows as client_queue_time), for complete tiers of a finite rate with enough requests for
// the rates to mean something. On schedule, the two rates differ by the last request's lag over
// the tier's length: far below 1 %.
func checkDelivered(s *measure.Summary, maxConc int) {
	if maxConc > 0 || !s.Complete || s.Issued < 20 || !(s.RealisedRate > 0) || math.IsInf(s.RealisedRate, 0) {
		return
	}
	if s.DeliveredRate < 0.99*s.RealisedRate {
		s.ClientBound = true
		s.ClientBoundReason = joinReason(s.ClientBoundReason, fmt.Sprintf(
			"the client sent %.2f req/s of the %.2f req/s the schedule offered (%.1f %% short): it could not keep up",
			s.DeliveredRate, s.RealisedRate, 100*(1-s.DeliveredRate/s.RealisedRate)))
	}
}

// trendOf tests whether time to first token counted from the planned arrival (client queue plus
// TTFT) grows over the tier.
func trendOf(recs []records.Record) curve.Trend {
	var xs, ys []float64
	for i := range recs {
		xs, ys = appendTrendPoint(xs, ys, &recs[i])
	}
	return curve.TrendTest(xs, ys)
}

// appendTrendPoint appends an ok record's point of the trend test: planned time (s), and time to
// first token counted from the planned arrival (ms).
func appendTrendPoint(xs, ys []float64, r *records.Record) ([]float64, []float64) {
	if r.Outcome != records.OK || r.First == records.Unset {
		return xs, ys
	}
	return append(xs, r.Planned.Seconds()), append(ys, ms(r.First-r.Planned))
}

func pointOf(t tierData, opts measure.Options) curve.Point {
	return pointFromSummary(summarize(t, opts), t.trend())
}

func pointFromSummary(s measure.Summary, tr curve.Trend) curve.Point {
	return curve.Point{Tier: s.Tier, OfferedRate: s.NominalRate, RealisedRate: s.RealisedRate,
		RequestThroughput: s.RequestThroughput, RawOutputThroughput: s.RawOutputThroughput,
		CompliantOutputThroughput: s.CompliantOutputThroughput, Issued: s.Issued, Compliant: s.CompliantRequests,
		CompliantTokenShare: s.CompliantTokenShare, TimeoutRatio: s.TimeoutRatio, FailureRatio: s.FailureRatio,
		ClientBound: s.ClientBound, Trend: tr}
}

// buildCurve summarises every tier and analyses the finite-rate ones.
func buildCurve(h records.Header, tiers []tierData, o curveOptions, opts measure.Options) curveFile {
	cf := curveFile{Run: h, Options: o, Complete: true}
	var pts []curve.Point
	for _, t := range tiers {
		if t.server != nil {
			if cf.ServerMetrics == nil {
				cf.ServerMetrics = map[int]json.RawMessage{}
			}
			cf.ServerMetrics[t.info.index] = t.server
		}
		sum := summarize(t, opts)
		sum.MaxConcurrency = h.MaxConcurrency
		cf.Complete = cf.Complete && sum.Complete
		if math.IsInf(t.info.rate, 1) && h.Command != "run" { // a sweep's saturation probe; a run's tier is its tier
			p := sum
			cf.Probe = &p
			continue
		}
		cf.Tiers = append(cf.Tiers, sum)
		pts = append(pts, pointFromSummary(sum, t.trend()))
	}
	sort.SliceStable(cf.Tiers, func(i, j int) bool { return cf.Tiers[i].NominalRate < cf.Tiers[j].NominalRate })
	boundByService(pts, cf.Probe)
	cf.Analysis = curve.Analyze(pts, o.Params)
	return cf
}

// serviceBoundMargin: request throughput counts the drain after the last arrival, so it
// understates the service rate a little; arrivals must exceed the best of it by this factor.
const serviceBoundMargin = 1.05

// boundByService marks unstable every tier whose arrivals came faster than the highest rate at
// which the deployment completed requests anywhere in the sweep (the saturation probe included).
// Such a queue can only grow: a short tier may end before the growth breaks the objectives or
// shows as a trend, but the load is not sustainable, so it cannot count as within objective.
func boundByService(pts []curve.Point, probe *measure.Summary) {
	best := 0.0
	if probe != nil {
		best = probe.RequestThroughput
	}
	for _, p := range pts {
		best = math.Max(best, p.RequestThroughput)
	}
	if !(best > 0) {
		return
	}
	for i := range pts {
		p := &pts[i]
		if p.Issued < 20 || !(p.RealisedRate > serviceBoundMargin*best) || math.IsInf(p.RealisedRate, 0) {
			continue
		}
		p.Trend.Tested, p.Trend.Growing = true, true
		p.Trend.Reason = fmt.Sprintf("arrivals at %.2f req/s exceed the highest completion rate the deployment reached in this sweep, %.2f req/s: the queue can only grow, even if the tier ended before that broke the objectives (%s)",
			p.RealisedRate, best, p.Trend.Reason)
	}
}

// emitCurve prints the sweep table and writes curve.json, curve.csv, per-tier summaries, plots
// and report.html when outDir is set.
func emitCurve(stdout, stderr io.Writer, format, outDir string, cf curveFile) error {
	tbl := curveTable(cf)
	switch format {
	case "json":
		b, err := json.MarshalIndent(cf, "", "  ")
		if err != nil {
			return err
		}
		fmt.Fprintln(stdout, string(b))
	case "csv": // curve.csv's content
		if err := tbl.CSV(stdout); err != nil {
			return err
		}
	default:
		if err := tbl.Text(stdout); err != nil {
			return err
		}
		for _, n := range cf.Analysis.Notes {
			fmt.Fprintf(stdout, "  %s\n", n)
		}
		if op := cf.Analysis.OperatingPoint; op != nil {
			fmt.Fprintf(stdout, "\nOperating point: %.2f req/s (capacity at objective %.2f req/s less %.0f %% headroom)\n",
				op.Rate, cf.Analysis.Capacity.Rate, 100*cf.Analysis.Params.Headroom)
		} else {
			fmt.Fprintln(stdout, "\nNo operating point: see the notes above.")
		}
		if !cf.Complete {
			fmt.Fprintln(stdout, "INCOMPLETE: some tiers were interrupted or had requests canceled at the drain deadline.")
		}
	}
	if outDir == "" {
		return nil
	}
	if err := writeJSON(outDir, "curve.json", cf); err != nil {
		return err
	}
	for _, s := range cf.Tiers {
		if err := writeJSON(outDir, fmt.Sprintf("summary_tier%02d.json", s.Tier), s); err != nil {
			return err
		}
	}
	if err := writeCSV(outDir, "curve.csv", tbl); err != nil {
		return err
	}
	paths, svgs, err := writePlots(outDir, reportCurve(cf))
	if err != nil {
		return err
	}
	html := report.HTML{Title: "loadcurve: " + cf.Run.Model + " at " + cf.Run.Target, Identity: identityRows(cf.Run, cf.Options),
		Tables: []report.Table{tbl}, PlotsSVG: svgs, Notes: cf.Analysis.Notes}
	if err := writeHTML(outDir, html); err != nil {
		return err
	}
	fmt.Fprintf(stderr, "loadcurve: wrote records.jsonl, curve.json, curve.csv, %d summaries, %d plot files and report.html to %s\n",
		len(cf.Tiers), len(paths), outDir)
	return nil
}

func identityRows(h records.Header, o curveOptions) [][2]string {
	rows := [][2]string{
		{"target", h.Target}, {"model", h.Model}, {"endpoint", h.Endpoint}, {"workload", h.Workload},
		{"arrival", h.Arrival}, {"seed", strconv.FormatInt(h.Seed, 10)}, {"cache policy", h.CachePolicy},
		{"objectives", o.Objectives}, {"target share", report.FormatFloat(o.Params.TargetShare, 3)},
		{"headroom", report.FormatFloat(o.Params.Headroom, 3)}, {"metric definitions", h.MetricsVersion},
		{"started", h.StartWall.Format(time.RFC3339)}, {"tool", h.Tool + " " + h.Version},
	}
	if h.Sim != "" {
		rows = append(rows, [2]string{"simulated deployment", h.Sim + " profile (a model, not a measurement)"})
	}
	if h.MaxConcurrency > 0 {
		rows = append(rows, [2]string{"max concurrency", strconv.Itoa(h.MaxConcurrency)})
	}
	return rows
}

// curveTable is the one-row-per-tier table with the operating point marked.
func curveTable(cf curveFile) report.Table {
	t := report.Table{
		Title: fmt.Sprintf("Load curve (objectives %s, target share %.3g)", cf.Options.Objectives, cf.Options.Params.TargetShare),
		Columns: []string{"tier", "offered req/s", "realised", "ok req/s", "raw tok/s", "compliant tok/s", "compl. share",
			"wilson lo", "p50 ttft ms", "p99 ttft ms", "p50 itl ms", "p99 itl ms", "failed", "stable", "verdict"},
		Align:     []bool{true, true, true, true, true, true, true, true, true, true, true, true, true, false, false},
		Highlight: -1,
	}
	verdicts := map[int]curve.PointVerdict{}
	for _, v := range cf.Analysis.Points {
		verdicts[v.Point.Tier] = v
	}
	f := report.FormatFloat
	if len(cf.ServerMetrics) > 0 {
		t.Columns = append(t.Columns, "srv waiting", "srv prefix hit", "srv preempt")
		t.Align = append(t.Align, true, true, true)
	}
	for i, s := range cf.Tiers {
		v := verdicts[s.Tier]
		stable := "yes"
		if !v.Stable {
			stable = "NO"
		}
		t.Rows = append(t.Rows, []string{
			strconv.Itoa(s.Tier), f(s.NominalRate, 2), f(s.RealisedRate, 2), f(s.RequestThroughput, 2),
			f(s.RawOutputThroughput, 0), f(s.CompliantOutputThroughput, 0), f(s.CompliantRequestShare, 3),
			f(v.ShareLo, 3), f(s.TTFT.Percentiles["p50"], 1), f(s.TTFT.Percentiles["p99"], 1),
			f(s.ITL.Percentiles["p50"], 1), f(s.ITL.Percentiles["p99"], 1),
			strconv.Itoa(s.Failed), stable, string(v.Verdict),
		})
		if len(cf.ServerMetrics) > 0 {
			tm := decodeServer(cf.ServerMetrics[s.Tier])
			t.Rows[i] = append(t.Rows[i], optF(tm.MeanWaiting, 1, 1), optF(tm.PrefixCacheHitRate, 100, 1), optF(tm.Preemptions, 1, 0))
		}
	}
	if op := cf.Analysis.OperatingPoint; op != nil {
		// Mark the highest tier at or below the operating point.
		best := -1
		for i, s := range cf.Tiers {
			if s.NominalRate <= op.Rate {
				best = i
			}
		}
		t.Highlight = best
	}
	if cf.Probe != nil {
		t.Notes = append(t.Notes, fmt.Sprintf("probe (burst of %d at rate inf): %.2f req/s, %.0f output tok/s",
			cf.Probe.Planned, cf.Probe.RequestThroughput, cf.Probe.OutputThroughput))
	}
	return t
}

// reportCurve maps the curve into the plotting package's input.
func reportCurve(cf curveFile) report.Curve {
	rc := report.Curve{
		Title:       fmt.Sprintf("%s @ %s", cf.Run.Model, cf.Run.Target),
		Subtitle:    fmt.Sprintf("%s, %s, seed %d, objectives %s", cf.Run.Workload, cf.Run.Arrival, cf.Run.Seed, cf.Options.Objectives),
		Series:      []report.CurveSeries{seriesOf(cf)},
		Objectives:  objectiveMap(cf.Options.Objectives),
		TargetShare: cf.Options.Params.TargetShare,
	}
	a := cf.Analysis
	if a.Plateau != nil {
		rc.Plateau = &report.Marker{Label: "plateau", Rate: a.Plateau.StartRate}
	}
	if a.Knee != nil {
		rc.Knee = &report.Marker{Label: "knee", Rate: a.Knee.Rate}
	}
	if a.Capacity != nil {
		rc.Capacity = &report.Marker{Label: "capacity", Rate: a.Capacity.Rate}
	}
	if a.OperatingPoint != nil {
		rc.OperatingPoint = &report.Marker{Label: "operating point", Rate: a.OperatingPoint.Rate}
	}
	return rc
}

func seriesOf(cf curveFile) report.CurveSeries {
	name := cf.Run.Model
	if cf.Run.Sim != "" {
		name = "sim:" + cf.Run.Sim
	}
	cs := report.CurveSeries{Name: name}
	verdicts := map[int]curve.PointVerdict{}
	for _, v := range cf.Analysis.Points {
		verdicts[v.Point.Tier] = v
	}
	for _, s := range cf.Tiers {
		v := verdicts[s.Tier]
		lat := map[string]map[string]float64{}
		for metric, st := range map[string]measure.Stats{"ttft": s.TTFT, "tpot": s.TPOT, "itl": s.ITL, "e2el": s.E2EL,
			"e2el_including_client_queue": s.E2ELIncludingClientQueue} {
			lat[metric] = st.Percentiles
		}
		cs.Points = append(cs.Points, report.CurvePoint{OfferedRate: s.NominalRate, RealisedRate: s.RealisedRate,
			RawOutputThroughput: s.RawOutputThroughput, CompliantOutputThroughput: s.CompliantOutputThroughput,
			CompliantRequestShare: s.CompliantRequestShare, WilsonLow: v.ShareLo, WilsonHigh: v.ShareHi,
			Latency: lat, FailureRatio: s.FailureRatio})
	}
	sort.Slice(cs.Points, func(i, j int) bool { return cs.Points[i].OfferedRate < cs.Points[j].OfferedRate })
	return cs
}

// objectiveMap turns "ttft:500 tpot:50" into metric → ms.
func objectiveMap(s string) map[string]float64 {
	obj, err := measure.ParseGoodput([]string{s})
	if err != nil || s == "" {
		return nil
	}
	m := map[string]float64{}
	add := func(k string, d time.Duration) {
		if d > 0 {
			m[k] = ms(d)
		}
	}
	add("ttft", obj.TTFT)
	add("tpot", obj.TPOT)
	add("e2el", obj.E2EL)
	add("client_queue_time", obj.ClientQueueTime)
	add("e2el_including_client_queue", obj.E2ELIncludingClientQueue)
	return m
}

// decodeServer reads a tier's server metrics; the zero value when absent.
func decodeServer(raw json.RawMessage) servermetrics.TierMetrics {
	var tm servermetrics.TierMetrics
	if raw != nil {
		_ = json.Unmarshal(raw, &tm) // written by us; a damaged value shows as absent
	}
	return tm
}

// optF formats an optional value times scale, "—" when absent.
func optF(v *float64, scale float64, digits int) string {
	if v == nil {
		return report.NaNText
	}
	return report.FormatFloat(*v*scale, digits)
}

// writeCSV writes a table as dir/name.
func writeCSV(dir, name string, t report.Table) error {
	var b bytes.Buffer
	if err := t.CSV(&b); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, name), b.Bytes(), 0o644); err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	return nil
}

// writePlots renders the curve's plots into dir and returns their paths and the SVGs, for the
// HTML report to inline.
func writePlots(dir string, rc report.Curve) (paths []string, svgs [][]byte, err error) {
	if paths, err = report.WritePlots(dir, rc); err != nil {
		return nil, nil, err
	}
	for _, p := range paths {
		if filepath.Ext(p) != ".svg" {
			continue
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, nil, fmt.Errorf("read back %s: %w", p, err)
		}
		svgs = append(svgs, b)
	}
	return paths, svgs, nil
}

// writeHTML writes dir/report.html.
func writeHTML(dir string, h report.HTML) error {
	var b bytes.Buffer
	if err := h.Write(&b); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "report.html"), b.Bytes(), 0o644); err != nil {
		return fmt.Errorf("write report.html: %w", err)
	}
	return nil
}
