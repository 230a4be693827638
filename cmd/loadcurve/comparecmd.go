package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"sort"
	"strconv"

	"github.com/urfave/cli/v2"

	"github.com/loadcurve/loadcurve/compare"
	"github.com/loadcurve/loadcurve/cost"
	"github.com/loadcurve/loadcurve/curve"
	"github.com/loadcurve/loadcurve/measure"
	"github.com/loadcurve/loadcurve/records"
	"github.com/loadcurve/loadcurve/report"
)

func readFileIfExists(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return b, nil
}

func compareCommand() *cli.Command {
	return &cli.Command{
		Name:      "compare",
		Usage:     "put two run or sweep results side by side, after checking that they are comparable",
		ArgsUsage: "A B",
		Description: "Checks first that A and B sent the same traffic (request-set fingerprint, schedule and seed, cache\n" +
			"policy, metric definitions, objectives); on a mismatch it exits 2 naming each difference, unless\n" +
			"--force, which stamps every output NOT COMPARABLE. Then compares tier by tier at equal offered rate,\n" +
			"and request by request (paired: the same request ids in both) with a confidence interval of the\n" +
			"median latency difference B−A. Give --a-cost-per-hour and --b-cost-per-hour for the cost ledger.",
		Flags: concat(objectiveFlags()[:1], []cli.Flag{
			&cli.BoolFlag{Name: "force", Usage: "compare even when the results are not comparable (output stamped NOT COMPARABLE)"},
			&cli.Float64Flag{Name: "a-cost-per-hour", Usage: "A's running cost per hour (enables the cost ledger)"},
			&cli.Float64Flag{Name: "b-cost-per-hour", Usage: "B's running cost per hour"},
			&cli.StringFlag{Name: "currency", Usage: "currency label"},
			&cli.Float64Flag{Name: "confidence", Value: 0.95, Usage: "confidence level of the paired intervals"},
			&cli.StringFlag{Name: "out", Usage: "directory for compare.json, compare.csv, overlay plots and report.html"},
			&cli.StringFlag{Name: "format", Value: "table", Usage: "table or json"},
		}),
		Action: compareAction,
	}
}

// side is one result set of a comparison.
type side struct {
	name  string
	file  *records.File
	tiers []tierData
	curve curveFile
}

func loadSide(name, arg string, opts measure.Options, objectivesSet bool) (*side, error) {
	dir, path, err := resolveRecords(arg)
	if err != nil {
		return nil, err
	}
	f, tiers, err := loadTiers(path)
	if err != nil {
		return nil, usagef("%s (%s): %v", name, arg, err)
	}
	saved, err := savedCurve(dir)
	if err != nil {
		return nil, usageError{err}
	}
	o := optionsOf(opts, curve.Params{})
	if saved != nil {
		o.Params = saved.Options.Params
		if !objectivesSet {
			o.Objectives = saved.Options.Objectives
			if opts.Objectives, err = measure.ParseGoodput([]string{o.Objectives}); err != nil && o.Objectives != "" {
				return nil, err
			}
		}
	}
	return &side{name: name, file: f, tiers: tiers, curve: buildCurve(f.Header, tiers, o, opts)}, nil
}

func identityOf(s *side) compare.Identity {
	h := s.file.Header
	fp := h.Workload
	if h.Command == "run" {
		fp = h.WorkloadFingerprint
	}
	n := 0
	for _, t := range s.tiers {
		n += t.info.planned
	}
	id := compare.Identity{Fingerprint: fp, Schedule: h.Arrival, Seed: h.Seed, CachePolicy: h.CachePolicy,
		MetricsVersion: h.MetricsVersion, Objectives: s.curve.Options.Objectives, Endpoint: h.Endpoint,
		MaxConcurrency: h.MaxConcurrency}
	if h.Command == "run" {
		id.NumRequests = n
	}
	return id
}

func compareAction(c *cli.Context) error {
	var goodput []string
	if c.IsSet("goodput") {
		goodput = c.StringSlice("goodput")
	}
	args := c.Args().Slice()
	// vLLM-style "--goodput ttft:500 tpot:50": further KEY:MS pairs arrive as arguments.
	var paths []string
	for _, a := range args {
		if c.IsSet("goodput") && !fileExists(a) && bytes.Contains([]byte(a), []byte(":")) {
			goodput = append(goodput, a)
		} else {
			paths = append(paths, a)
		}
	}
	if len(paths) != 2 {
		return usagef("compare takes two results, A and B (directories or records.jsonl files); got %d", len(paths))
	}
	opts := measure.Options{Percentiles: []float64{50, 90, 99}, MaxScheduleLag: defaultMaxScheduleLag}
	if len(goodput) > 0 {
		obj, err := measure.ParseGoodput(goodput)
		if err != nil {
			return usageError{err}
		}
		opts.Objectives = obj
	}
	format := c.String("format")
	if format != "table" && format != "json" {
		return usagef("--format must be table or json, got %q", format)
	}
	conf := c.Float64("confidence")
	if !(conf > 0 && conf < 1) {
		return usagef("--confidence must be in (0,1), got %v", conf)
	}
	a, err := loadSide("A", paths[0], opts, len(goodput) > 0)
	if err != nil {
		return err
	}
	b, err := loadSide("B", paths[1], opts, len(goodput) > 0)
	if err != nil {
		return err
	}
	mism := compare.Check(identityOf(a), identityOf(b))
	mism = append(mism, tierFingerprintMismatches(a, b)...)
	stamp := ""
	if len(mism) > 0 {
		var msgs []string
		for _, m := range mism {
			msgs = append(msgs, m.String())
		}
		if !c.Bool("force") {
			for _, m := range msgs {
				fmt.Fprintf(c.App.ErrWriter, "  %s\n", m)
			}
			return usagef("%s and %s are not comparable (%d differences above); --force compares them anyway, stamped NOT COMPARABLE", paths[0], paths[1], len(mism))
		}
		stamp = "NOT COMPARABLE: " + fmt.Sprint(msgs)
		fmt.Fprintf(c.App.ErrWriter, "loadcurve: WARNING: %s\n", stamp)
	}
	res := compareResult{Stamp: stamp, Comparable: len(mism) == 0, A: paths[0], B: paths[1], Mismatches: mism}
	res.Tiers = tierRows(a, b)
	res.Paired = pairedRows(a, b, conf, a.file.Header.Seed)
	res.OperatingPoints = map[string]any{"a": a.curve.Analysis.OperatingPoint, "b": b.curve.Analysis.OperatingPoint,
		"a_capacity": a.curve.Analysis.Capacity, "b_capacity": b.curve.Analysis.Capacity}
	if c.IsSet("a-cost-per-hour") || c.IsSet("b-cost-per-hour") {
		l, err := compareLedger(c, a, b)
		if err != nil {
			return err
		}
		res.Ledger = l
		res.EqualLoad = equalLoadCosts(res.Tiers, c.Float64("a-cost-per-hour"), c.Float64("b-cost-per-hour"))
	}
	return emitCompare(c, format, res, a, b)
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

// tierFingerprintMismatches: at every offered rate both ran, the request sets must be identical.
func tierFingerprintMismatches(a, b *side) []compare.Mismatch {
	fb := map[float64]string{}
	for _, t := range b.tiers {
		fb[t.info.rate] = t.info.fingerprint
	}
	var out []compare.Mismatch
	for _, t := range a.tiers {
		if f, ok := fb[t.info.rate]; ok && f != t.info.fingerprint {
			out = append(out, compare.Mismatch{Field: "request set of the tier at " + rateString(t.info.rate) + " req/s", A: t.info.fingerprint, B: f})
		}
	}
	return out
}

type compareResult struct {
	Stamp           string             `json:"stamp,omitempty"`
	Comparable      bool               `json:"comparable"`
	A               string             `json:"a"`
	B               string             `json:"b"`
	Mismatches      []compare.Mismatch `json:"mismatches,omitempty"`
	Tiers           []tierComparison   `json:"tiers"`
	Paired          []pairedComparison `json:"paired"`
	OperatingPoints map[string]any     `json:"operating_points"`
	Ledger          *cost.Ledger       `json:"cost,omitempty"`
	EqualLoad       []equalLoadCost    `json:"cost_at_equal_load,omitempty"`
}

// equalLoadCost prices both sides at one offered rate both ran.
type equalLoadCost struct {
	OfferedRate float64  `json:"offered_rate"`
	A           *float64 `json:"a_cost_per_million_effective"` // null when A produced no effective output
	B           *float64 `json:"b_cost_per_million_effective"`
	BvsA        *float64 `json:"b_vs_a_unit_cost_change"`
}

// equalLoadCosts prices every common tier: cost per hour over compliant output throughput.
func equalLoadCosts(tiers []tierComparison, costA, costB float64) []equalLoadCost {
	unit := func(costPerHour float64, s *measure.Summary) *float64 {
		o := cost.Option{CostPerHour: costPerHour, RawThroughput: s.RawOutputThroughput, CompliantShare: s.CompliantTokenShare}
		v, err := o.CostPerMillionEffective()
		if err != nil || s.RawOutputThroughput <= 0 {
			return nil
		}
		return &v
	}
	var out []equalLoadCost
	for _, t := range tiers {
		if t.A == nil || t.B == nil {
			continue
		}
		e := equalLoadCost{OfferedRate: t.OfferedRate, A: unit(costA, t.A), B: unit(costB, t.B)}
		if e.A != nil && e.B != nil {
			d := *e.B / *e.A - 1
			e.BvsA = &d
		}
		out = append(out, e)
	}
	return out
}

type tierComparison struct {
	OfferedRate float64          `json:"offered_rate"`
	A           *measure.Summary `json:"a"`
	B           *measure.Summary `json:"b"`
}

type pairedComparison struct {
	OfferedRate float64               `json:"offered_rate"`
	Metric      string                `json:"metric"`
	Result      *compare.PairedResult `json:"result,omitempty"`
	Error       string                `json:"error,omitempty"`
}

func tierRows(a, b *side) []tierComparison {
	byRate := map[float64]*tierComparison{}
	for i := range a.curve.Tiers {
		s := &a.curve.Tiers[i]
		byRate[s.NominalRate] = &tierComparison{OfferedRate: s.NominalRate, A: s}
	}
	for i := range b.curve.Tiers {
		s := &b.curve.Tiers[i]
		if t, ok := byRate[s.NominalRate]; ok {
			t.B = s
		} else {
			byRate[s.NominalRate] = &tierComparison{OfferedRate: s.NominalRate, B: s}
		}
	}
	var out []tierComparison
	for _, t := range byRate {
		out = append(out, *t)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].OfferedRate < out[j].OfferedRate })
	return out
}

// pairedRows compares TTFT and E2EL request by request at every offered rate both ran.
func pairedRows(a, b *side, conf float64, seed int64) []pairedComparison {
	tb := map[float64]tierData{}
	for _, t := range b.tiers {
		tb[t.info.rate] = t
	}
	var out []pairedComparison
	for _, ta := range a.tiers {
		t2, ok := tb[ta.info.rate]
		if !ok || math.IsInf(ta.info.rate, 1) && a.file.Header.Command != "run" {
			continue
		}
		for _, m := range []struct {
			name string
			get  func(*records.Record) (float64, bool)
		}{
			{"ttft_ms", func(r *records.Record) (float64, bool) { d, ok := r.TTFT(); return ms(d), ok }},
			{"e2el_ms", func(r *records.Record) (float64, bool) { d, ok := r.E2EL(); return ms(d), ok }},
			{"e2el_including_client_queue_ms", func(r *records.Record) (float64, bool) { d, ok := r.E2ELIncludingClientQueue(); return ms(d), ok }},
		} {
			ma, mb := okValues(ta.recs, m.get), okValues(t2.recs, m.get)
			pc := pairedComparison{OfferedRate: ta.info.rate, Metric: m.name}
			r, err := compare.Paired(ma, mb, conf, seed)
			if err != nil {
				pc.Error = err.Error()
			} else {
				pc.Result = &r
			}
			out = append(out, pc)
		}
	}
	return out
}

func okValues(recs []records.Record, get func(*records.Record) (float64, bool)) map[int]float64 {
	m := make(map[int]float64, len(recs))
	for i := range recs {
		if recs[i].Outcome != records.OK {
			continue
		}
		if v, ok := get(&recs[i]); ok {
			m[recs[i].ID] = v
		}
	}
	return m
}

// compareLedger prices both sides at their operating points.
func compareLedger(c *cli.Context, a, b *side) (*cost.Ledger, error) {
	var errs []error
	for _, s := range []string{"a", "b"} {
		if !c.IsSet(s + "-cost-per-hour") {
			errs = append(errs, fmt.Errorf("--%s-cost-per-hour is required for the cost ledger", s))
		}
	}
	if len(errs) > 0 {
		return nil, usageErrors(errs)
	}
	var opts []cost.Option
	for _, sd := range []struct {
		s    *side
		flag string
	}{{a, "a"}, {b, "b"}} {
		raw, share, where, err := figuresFromCurve(sd.s.curve)
		if err != nil {
			return nil, fmt.Errorf("cost ledger, %s: %w", sd.s.name, err)
		}
		o := cost.Option{Name: sd.s.name + " (" + where + ")", CostPerHour: c.Float64(sd.flag + "-cost-per-hour"), RawThroughput: raw, CompliantShare: share}
		if errs := o.ValidateFlags(sd.flag); len(errs) > 0 {
			return nil, usageErrors(errs)
		}
		opts = append(opts, o)
	}
	l, err := cost.Compare(opts[0], opts[1], cost.Params{Currency: c.String("currency"), HoursPerPeriod: cost.DefaultHoursPerPeriod})
	if err != nil {
		return nil, err
	}
	return &l, nil
}

// figuresFromCurve: raw throughput and compliant token share at the operating point of a sweep
// (linear between bracketing tiers), or of the only tier of a run.
func figuresFromCurve(cf curveFile) (raw, share float64, where string, err error) {
	pts := append([]measure.Summary(nil), cf.Tiers...)
	if len(pts) == 0 {
		return 0, 0, "", errors.New("no finite-rate tier")
	}
	if cf.Run.Command == "run" || len(pts) == 1 {
		return pts[0].RawOutputThroughput, pts[0].CompliantTokenShare, "tier " + strconv.Itoa(pts[0].Tier), nil
	}
	op := cf.Analysis.OperatingPoint
	if op == nil {
		return 0, 0, "", fmt.Errorf("no operating point (%v)", cf.Analysis.Notes)
	}
	sort.Slice(pts, func(i, j int) bool { return pts[i].NominalRate < pts[j].NominalRate })
	lo, hi := 0, len(pts)-1
	for i, s := range pts {
		if s.NominalRate <= op.Rate {
			lo = i
		}
	}
	for i := len(pts) - 1; i >= 0; i-- {
		if pts[i].NominalRate >= op.Rate {
			hi = i
		}
	}
	x, y := pts[lo], pts[hi]
	w := 0.0
	if y.NominalRate > x.NominalRate {
		w = (op.Rate - x.NominalRate) / (y.NominalRate - x.NominalRate)
	}
	raw = x.RawOutputThroughput + w*(y.RawOutputThroughput-x.RawOutputThroughput)
	compl := x.CompliantOutputThroughput + w*(y.CompliantOutputThroughput-x.CompliantOutputThroughput)
	if raw > 0 {
		share = math.Min(1, compl/raw)
	}
	return raw, share, fmt.Sprintf("operating point %.2f req/s", op.Rate), nil
}

func emitCompare(c *cli.Context, format string, res compareResult, a, b *side) error {
	w := c.App.Writer
	tbl := report.Table{Title: "A vs B at equal offered rate", Highlight: -1,
		Columns: []string{"offered req/s", "A raw tok/s", "B raw tok/s", "A compl. tok/s", "B compl. tok/s", "B/A compl.", "A share", "B share", "A p99 ttft", "B p99 ttft", "A failed", "B failed"},
		Align:   []bool{true, true, true, true, true, true, true, true, true, true, true, true}}
	f := report.FormatFloat
	for _, t := range res.Tiers {
		row := []string{f(t.OfferedRate, 2)}
		get := func(s *measure.Summary, fn func(*measure.Summary) string) string {
			if s == nil {
				return "—"
			}
			return fn(s)
		}
		ratio := "—"
		if t.A != nil && t.B != nil && t.A.CompliantOutputThroughput > 0 {
			ratio = f(t.B.CompliantOutputThroughput/t.A.CompliantOutputThroughput, 3)
		}
		row = append(row,
			get(t.A, func(s *measure.Summary) string { return f(s.RawOutputThroughput, 0) }),
			get(t.B, func(s *measure.Summary) string { return f(s.RawOutputThroughput, 0) }),
			get(t.A, func(s *measure.Summary) string { return f(s.CompliantOutputThroughput, 0) }),
			get(t.B, func(s *measure.Summary) string { return f(s.CompliantOutputThroughput, 0) }),
			ratio,
			get(t.A, func(s *measure.Summary) string { return f(s.CompliantRequestShare, 3) }),
			get(t.B, func(s *measure.Summary) string { return f(s.CompliantRequestShare, 3) }),
			get(t.A, func(s *measure.Summary) string { return f(s.TTFT.Percentiles["p99"], 1) }),
			get(t.B, func(s *measure.Summary) string { return f(s.TTFT.Percentiles["p99"], 1) }),
			get(t.A, func(s *measure.Summary) string { return strconv.Itoa(s.Failed) }),
			get(t.B, func(s *measure.Summary) string { return strconv.Itoa(s.Failed) }),
		)
		tbl.Rows = append(tbl.Rows, row)
	}
	ptbl := report.Table{Title: fmt.Sprintf("Paired differences B−A over identical requests (median, %.0f %% interval)", 100*c.Float64("confidence")), Highlight: -1,
		Columns: []string{"offered req/s", "metric", "pairs", "median B−A ms", "interval ms", "B faster / slower"},
		Align:   []bool{true, false, true, true, false, false}}
	for _, p := range res.Paired {
		if p.Result == nil {
			ptbl.Rows = append(ptbl.Rows, []string{f(p.OfferedRate, 2), p.Metric, "—", "—", p.Error, ""})
			continue
		}
		r := p.Result
		ptbl.Rows = append(ptbl.Rows, []string{f(p.OfferedRate, 2), p.Metric, strconv.Itoa(r.N), f(r.MedianDiff, 2),
			"[" + f(r.CILow, 2) + ", " + f(r.CIHigh, 2) + "]", fmt.Sprintf("%d / %d", r.Wins, r.Losses)})
	}
	if format == "json" {
		out, err := json.MarshalIndent(res, "", "  ")
		if err != nil {
			return err
		}
		fmt.Fprintln(w, string(out))
	} else {
		if res.Stamp != "" {
			fmt.Fprintf(w, "*** %s ***\n\n", res.Stamp)
		}
		fmt.Fprintf(w, "A: %s (%s, %s)\nB: %s (%s, %s)\n\n", res.A, a.file.Header.Target, simLabel(a.file.Header), res.B, b.file.Header.Target, simLabel(b.file.Header))
		tbl.Text(w)
		fmt.Fprintln(w)
		ptbl.Text(w)
		fmt.Fprintln(w)
		for _, sd := range []*side{a, b} {
			if op := sd.curve.Analysis.OperatingPoint; op != nil {
				fmt.Fprintf(w, "%s operating point: %.2f req/s (capacity at objective %.2f req/s)\n", sd.name, op.Rate, sd.curve.Analysis.Capacity.Rate)
			} else if sd.file.Header.Command != "run" {
				fmt.Fprintf(w, "%s: no operating point (%v)\n", sd.name, sd.curve.Analysis.Notes)
			}
		}
		if res.Ledger != nil {
			fmt.Fprintln(w)
			fmt.Fprint(w, res.Ledger.Text())
			fmt.Fprintln(w)
			equalLoadTable(res.EqualLoad, c.String("currency")).Text(w)
		}
		if res.Stamp != "" {
			fmt.Fprintf(w, "\n*** %s ***\n", res.Stamp)
		}
	}
	out := c.String("out")
	if out == "" {
		return nil
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return fmt.Errorf("--out %s: %w", out, err)
	}
	if err := writeJSON(out, "compare.json", res); err != nil {
		return err
	}
	if err := writeCSV(out, "compare.csv", tbl); err != nil {
		return err
	}
	rc := reportCurve(a.curve)
	rc.Title = "A vs B"
	sa, sb := seriesOf(a.curve), seriesOf(b.curve)
	sa.Name, sb.Name = "A: "+sa.Name, "B: "+sb.Name
	rc.Series = []report.CurveSeries{sa, sb}
	rc.Plateau, rc.Knee, rc.Capacity, rc.OperatingPoint = nil, nil, nil, nil
	_, svgs, err := writePlots(out, rc)
	if err != nil {
		return err
	}
	var notes []string
	if res.Ledger != nil {
		notes = append(notes, res.Ledger.Text())
	}
	h := report.HTML{Title: "loadcurve compare", Identity: [][2]string{{"A", res.A}, {"B", res.B}}, Tables: []report.Table{tbl, ptbl},
		PlotsSVG: svgs, Notes: notes, Stamp: res.Stamp}
	return writeHTML(out, h)
}

func equalLoadTable(rows []equalLoadCost, currency string) report.Table {
	title := "Cost per million effective tokens at equal offered load"
	if currency != "" {
		title += " (" + currency + ")"
	}
	t := report.Table{Title: title, Highlight: -1,
		Columns: []string{"offered req/s", "A", "B", "B vs A"}, Align: []bool{true, true, true, true}}
	opt := func(v *float64, digits int, pct bool) string {
		switch {
		case v == nil:
			return "no effective output"
		case pct:
			return fmt.Sprintf("%+.1f %%", 100**v)
		}
		return report.FormatFloat(*v, digits)
	}
	for _, r := range rows {
		t.Rows = append(t.Rows, []string{report.FormatFloat(r.OfferedRate, 2), opt(r.A, 2, false), opt(r.B, 2, false), opt(r.BvsA, 0, true)})
	}
	return t
}

func simLabel(h records.Header) string {
	if h.Sim != "" {
		return "sim profile " + h.Sim
	}
	return h.Model
}
