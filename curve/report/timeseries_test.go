package report_test

import (
	"bytes"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/loadcurve/loadcurve/curve/report"
	"github.com/loadcurve/loadcurve/curve/result"
	"github.com/loadcurve/loadcurve/measure/records"
	"github.com/loadcurve/loadcurve/measure/timeseries"
)

// tierSpec is one tier of a constructed records file: n requests at rate per second, each
// taking service to its first token, then 9 more chunks 10 ms apart.
type tierSpec struct {
	role    records.Role
	rate    float64 // math.Inf(1): a burst at T0
	n       int
	service time.Duration
}

// recordsFile builds a records file of the tiers, as a sweep (or a run with one tier) writes it.
func recordsFile(cmd records.Command, tiers ...tierSpec) *records.File {
	start := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	f := &records.File{Header: records.Header{Kind: records.KindHeader, Tool: "loadcurve", Version: "test",
		MetricsVersion: records.MetricsVersion, Command: cmd, Target: "http://127.0.0.1:8000", Endpoint: "/v1/completions",
		Model: "m", Workload: "synthetic", Arrival: "poisson", Seed: 1, CachePolicy: "cold", StartWall: start}}
	for k, ts := range tiers {
		var last time.Duration
		for i := range ts.n {
			planned := time.Duration(0)
			if !math.IsInf(ts.rate, 1) {
				planned = time.Duration(float64(i) / ts.rate * 1e9)
			}
			r := records.NewRecord(k, i, planned)
			r.Dispatched, r.Slot, r.Sent = planned, planned, planned+time.Millisecond
			// The server slows down as the tier goes on: the first tokens come later and later.
			r.First = r.Sent + ts.service + time.Duration(i)*ts.service/time.Duration(ts.n)
			r.FirstEvent = r.First
			r.ITL = slices.Repeat([]time.Duration{10 * time.Millisecond}, 9)
			r.Last = r.First + 90*time.Millisecond
			r.End = r.Last + time.Millisecond
			r.Chunks, r.OutputTokens, r.InputTokens = 10, 10, 100
			r.OutputTokensSource, r.InputTokensSource, r.FinishReason = records.SourceUsage, records.SourceUsage, "length"
			if i%10 == 7 {
				r.Outcome, r.HTTPStatus, r.Error = records.HTTPError, 503, "busy"
				r.First, r.FirstEvent, r.Last, r.ITL, r.Chunks, r.OutputTokens = records.Unset, records.Unset, records.Unset, nil, 0, 0
				r.End = r.Sent + 5*time.Millisecond
			}
			f.Records = append(f.Records, r)
			last = max(last, planned)
		}
		f.Tiers = append(f.Tiers, records.Tier{Kind: records.KindTier, Tier: k, Role: ts.role, Arrival: "poisson",
			RequestRate: records.Rate(ts.rate), Burstiness: 1, Seed: 1, Planned: ts.n, StartWall: start,
			End: &records.TierEnd{Kind: records.KindTierEnd, Tier: k, Planned: ts.n, ArrivalsEndS: last.Seconds(), Reason: records.EndedSchedule}})
	}
	return f
}

// seriesCSV is a series as WriteCSV writes it.
func seriesCSV(t *testing.T, s timeseries.Series) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := s.WriteCSV(&b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestWriteTimeSeries: a sweep's result written with its time series has a CSV per tier, equal
// to timeseries.Of of the tier's records, whether the records were read whole or scanned, and
// report.html holds one time-series plot per tier in a section of its own.
func TestWriteTimeSeries(t *testing.T) {
	f := recordsFile(records.CommandSweep,
		tierSpec{records.RoleProbe, math.Inf(1), 40, 200 * time.Millisecond},
		tierSpec{records.RoleTier, 5, 60, 50 * time.Millisecond},
		tierSpec{records.RoleTier, 10, 120, 80 * time.Millisecond})
	dir := t.TempDir()
	path := filepath.Join(dir, result.RecordsName)
	if err := records.WriteFile(path, f); err != nil {
		t.Fatal(err)
	}
	read, err := records.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	whole := report.TimeSeriesOf(read)
	scanned, err := report.ReadTimeSeries(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(whole) != 3 || len(scanned) != 3 {
		t.Fatalf("%d series read whole, %d scanned; want 3", len(whole), len(scanned))
	}
	for k := range 3 {
		want := seriesCSV(t, timeseries.Of(f.TierRecords(k), time.Second))
		if got := seriesCSV(t, whole[k]); !bytes.Equal(got, want) {
			t.Errorf("tier %d read whole:\n%s\nwant:\n%s", k, got, want)
		}
		if got := seriesCSV(t, scanned[k]); !bytes.Equal(got, want) {
			t.Errorf("tier %d scanned:\n%s\nwant:\n%s", k, got, want)
		}
	}

	res := result.FromFile(read, result.DefaultSettings())
	if err := report.WriteResultSeries(dir, res, whole, svgOnly); err != nil {
		t.Fatal(err)
	}
	for k := range 3 {
		name := report.TimeSeriesName(k)
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(b, seriesCSV(t, whole[k])) {
			t.Errorf("%s is not the tier's series", name)
		}
		if !strings.HasPrefix(string(b), strings.Join(timeseries.Columns, ",")+"\n") {
			t.Errorf("%s starts %q", name, strings.SplitN(string(b), "\n", 2)[0])
		}
	}
	if held, err := result.Holds(dir); err != nil || !held {
		t.Errorf("result.Holds = %v, %v", held, err)
	}
	page, err := os.ReadFile(filepath.Join(dir, "report.html"))
	if err != nil {
		t.Fatal(err)
	}
	all := parsePage(t, []byte(namespaces.Replace(string(page))))
	checkNoExternalLoads(t, all)
	secs := timeSeriesSections(all)
	if len(secs) != 3 {
		t.Fatalf("report.html has %d time-series plots, want 3 (one per tier)", len(secs))
	}
	for _, want := range []string{"tier 0: probe at inf (all at once)", "tier 2: tier at 10 req/s", "steady-state window", "TTFT by the second", "arrivals end"} {
		if !strings.Contains(string(page), want) {
			t.Errorf("report.html has no %q", want)
		}
	}
	if *plotDir != "" {
		if err := os.WriteFile(filepath.Join(*plotDir, "timeseries_report.html"), page, 0o644); err != nil {
			t.Fatal(err)
		}
	}

	// Without the series, no CSV and no section: WriteResult is as it was.
	plain := t.TempDir()
	if err := report.WriteResult(plain, res); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(plain, report.TimeSeriesName(0))); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("WriteResult wrote a time series: %v", err)
	}
	page, err = os.ReadFile(filepath.Join(plain, "report.html"))
	if err != nil {
		t.Fatal(err)
	}
	if n := len(timeSeriesSections(parsePage(t, []byte(namespaces.Replace(string(page)))))); n != 0 {
		t.Errorf("report.html without series has %d time-series plots", n)
	}
}

// timeSeriesSections counts the figures of the page that follow the time-series heading.
func timeSeriesSections(all []*node) []*node {
	var figs []*node
	in := false
	for _, n := range all {
		if n.name == "h2" {
			in = strings.Contains(n.text, "second by second")
		}
		if in && n.name == "figure" {
			figs = append(figs, n)
		}
	}
	return figs
}

// TestWriteTimeSeriesRun: a run writes its one tier's series beside summary.json.
func TestWriteTimeSeriesRun(t *testing.T) {
	f := recordsFile(records.CommandRun, tierSpec{records.RoleTier, 8, 80, 40 * time.Millisecond})
	dir := t.TempDir()
	res := result.FromFile(f, result.DefaultSettings())
	if err := report.WriteResultSeries(dir, res, report.TimeSeriesOf(f), svgOnly); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{result.SummaryName, report.TimeSeriesName(0), "report.html"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Error(err)
		}
	}
	page, err := os.ReadFile(filepath.Join(dir, "report.html"))
	if err != nil {
		t.Fatal(err)
	}
	// Its one tier second by second: in the section of the tiers' series, or as the figure
	// beside the run's headline.
	all := parsePage(t, []byte(namespaces.Replace(string(page))))
	n := len(timeSeriesSections(all))
	for _, f := range find(all, "figure") {
		if f.class == "hero" && strings.Contains(f.text, "requests second by second") {
			n++
		}
	}
	if n != 1 {
		t.Errorf("a run's report.html has %d time-series plots, want 1", n)
	}
}

// TestTimeSeriesPlotsLeaveOutProbes: past TimeSeriesPlotTiers tiers, probes get a CSV but no
// plot.
func TestTimeSeriesPlotsLeaveOutProbes(t *testing.T) {
	specs := []tierSpec{{records.RoleProbe, math.Inf(1), 10, 100 * time.Millisecond}, {records.RoleProbe, 30, 30, 100 * time.Millisecond}}
	for i := range report.TimeSeriesPlotTiers {
		specs = append(specs, tierSpec{records.RoleTier, float64(2 + i), 6 + 2*i, 30 * time.Millisecond})
	}
	f := recordsFile(records.CommandSweep, specs...)
	dir := t.TempDir()
	files, err := report.WriteFilesSeries(dir, result.FromFile(f, result.DefaultSettings()), report.TimeSeriesOf(f), svgOnly)
	if err != nil {
		t.Fatal(err)
	}
	csvs := 0
	for _, name := range files {
		if strings.HasPrefix(name, "timeseries_tier") {
			csvs++
		}
	}
	if csvs != len(specs) {
		t.Errorf("%d time-series CSVs written, want %d: %v", csvs, len(specs), files)
	}
	page, err := os.ReadFile(filepath.Join(dir, "report.html"))
	if err != nil {
		t.Fatal(err)
	}
	if n := len(timeSeriesSections(parsePage(t, []byte(namespaces.Replace(string(page)))))); n != report.TimeSeriesPlotTiers {
		t.Errorf("%d time-series plots, want %d (the probes left out)", n, report.TimeSeriesPlotTiers)
	}
	if strings.Contains(string(page), "tier 0: probe") || !strings.Contains(string(page), "not the probes") {
		t.Error("report.html plots a probe, or does not say it leaves them out")
	}
}

// TestRenderTimeSeries: both formats render, with and without the latency panel; an empty
// series is ErrNoData.
func TestRenderTimeSeries(t *testing.T) {
	f := recordsFile(records.CommandRun, tierSpec{records.RoleTier, 4, 30, 60 * time.Millisecond})
	ts := report.TierTimeSeries{Title: "tier 0", Series: timeseries.Of(f.Records, time.Second), SteadyStart: 1, SteadyEnd: 6,
		ArrivalsEnd: 7.25, TTFTObjective: 100}
	load, latency, err := report.TimeSeriesPlots(ts)
	if err != nil || load == nil || latency == nil {
		t.Fatalf("TimeSeriesPlots: %v, %v, %v", load, latency, err)
	}
	if load.X.Min != latency.X.Min || load.X.Max != latency.X.Max {
		t.Errorf("panels' time axes differ: [%v, %v] and [%v, %v]", load.X.Min, load.X.Max, latency.X.Min, latency.X.Max)
	}
	for _, format := range []string{"svg", "png"} {
		b, err := report.RenderTimeSeries(ts, format)
		if err != nil || len(b) == 0 {
			t.Errorf("%s: %d bytes, %v", format, len(b), err)
		}
		if *plotDir != "" {
			if err := os.WriteFile(filepath.Join(*plotDir, "timeseries."+format), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}

	// Every request failed: no first token, the load panel alone.
	for i := range f.Records {
		f.Records[i].Outcome, f.Records[i].First, f.Records[i].Last, f.Records[i].ITL = records.Timeout, records.Unset, records.Unset, nil
	}
	ts.Series = timeseries.Of(f.Records, time.Second)
	if _, latency, err := report.TimeSeriesPlots(ts); err != nil || latency != nil {
		t.Errorf("without first tokens: latency %v, %v; want none", latency, err)
	}
	if b, err := report.RenderTimeSeries(ts, "svg"); err != nil || len(b) == 0 {
		t.Errorf("load panel alone: %d bytes, %v", len(b), err)
	}

	if _, err := report.RenderTimeSeries(report.TierTimeSeries{}, "svg"); !errors.Is(err, report.ErrNoData) {
		t.Errorf("empty series: %v, want ErrNoData", err)
	}
}
