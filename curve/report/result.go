package report

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/loadcurve/loadcurve/curve"
	"github.com/loadcurve/loadcurve/curve/result"
	"github.com/loadcurve/loadcurve/measure"
	"github.com/loadcurve/loadcurve/measure/records"
	"github.com/loadcurve/loadcurve/measure/servermetrics"
	"github.com/loadcurve/loadcurve/measure/timeseries"
)

// Formats of Print.
const (
	FormatTable = "table"
	FormatJSON  = "json"
	FormatCSV   = "csv"
)

// ParseFormat checks an output format.
func ParseFormat(s string) (string, error) {
	switch s {
	case FormatTable, FormatJSON, FormatCSV:
		return s, nil
	}
	return "", fmt.Errorf("must be table, json or csv, got %q", s)
}

// Print writes a result to w in format: a run (a result of the run command) as its summary in
// the layout of vLLM's benchmark client, as summary.json, or as one CSV row; a sweep as the
// answer in a few lines and the tier table, as curve.json, or as curve.csv. verbose adds, to
// the table format, the reasoning behind each judgement (the analysis notes).
func Print(w io.Writer, format string, r *result.Result, verbose bool) error {
	run := r.Shape().OneTier()
	switch format {
	case FormatJSON:
		v, err := r.Answer()
		if err != nil {
			return err
		}
		b, err := json.MarshalIndent(v, "", "  ")
		if err != nil {
			return err
		}
		_, err = fmt.Fprintln(w, string(b))
		return err
	case FormatCSV:
		if run {
			rf, err := r.RunSummary()
			if err != nil {
				return err
			}
			return SummaryCSV(w, rf.Summary)
		}
		return CurveCSV(w, r)
	}
	if run {
		rf, err := r.RunSummary()
		if err != nil {
			return err
		}
		RunText(w, rf)
		if verbose {
			notes(w, r.Analysis.Notes)
		}
		return nil
	}
	Answer(w, r)
	if !verbose {
		fmt.Fprintln(w)
		if err := TierSummaryTable(r).Text(w); err != nil {
			return err
		}
		fmt.Fprintln(w, "(every column of every tier and the reasoning behind each judgement: --verbose, report.html, curve.json and curve.csv)")
		return nil
	}
	fmt.Fprintln(w)
	if err := CurveTable(r).Text(w); err != nil {
		return err
	}
	notes(w, append(append([]string(nil), r.Notes...), r.Analysis.Notes...))
	return nil
}

func notes(w io.Writer, ns []string) {
	if len(ns) == 0 {
		return
	}
	fmt.Fprintln(w, "\nHow each judgement was made:")
	for _, n := range ns {
		fmt.Fprintf(w, "  - %s\n", n)
	}
}

// RateUnit names the rates of a result: "req/s", "sessions/s" when its workload was sessions
// (the schedule's arrivals start sessions; result.SessionsNote), or "users" for a sweep of
// concurrency levels (its rates are the levels; "realised" is the request rate they produced).
func RateUnit(r *result.Result) string { return r.Axis().Unit() }

// Answer writes what a sweep found, in a few lines a person reads first: the capacity with its
// interval and what bounds it, the operating point and whether it was verified (with what it
// delivered), the knee and the plateau, what the decision cost in time on the target, and the
// objectives it was judged by. Every sentence says what the figures are (an interpolation, a
// bound) and none contradicts another.
func Answer(w io.Writer, r *result.Result) {
	a := r.Analysis
	u := RateUnit(r)
	p := a.Params
	fmt.Fprintln(w, capacityLine(a, u))
	if op := a.OperatingPoint; op != nil {
		fmt.Fprintln(w, operatingLine(a, op, u))
	}
	var shape []string
	if k := a.Knee; k != nil {
		why := "misses the target with confidence from there"
		if k.Unstable {
			why = "its queue keeps growing from there"
		}
		shape = append(shape, fmt.Sprintf("knee at %s %s (%s)", fmtRate(k.Rate), u, why))
	}
	if a.Plateau != nil {
		shape = append(shape, fmt.Sprintf("raw throughput levels off at %s tok/s from %s %s", FormatFloat(a.Plateau.Throughput, 0), fmtRate(a.Plateau.StartRate), u))
	}
	if len(shape) > 0 {
		fmt.Fprintf(w, "Curve: %s.\n", strings.Join(shape, "; "))
	}
	if s := r.Spread(); s != nil {
		fmt.Fprintf(w, "Repeatability: %d repetitions found capacities %s to %s %s (median %s; range %s of the median, relative standard deviation %s); %d of them verified their operating point.\n",
			s.N, fmtRate(s.Min), fmtRate(s.Max), u, fmtRate(s.Median), spreadPct(s.RelativeRange), spreadPct(s.RelativeStdDev), s.VerifiedOperations)
	}
	obj := r.Settings.Measure.Objectives.String()
	if obj == "" {
		obj = "no latency objective"
	}
	fmt.Fprintf(w, "Judged by: %s for at least %s of requests, at %s confidence; the decision cost %d tiers, %s %s%s.\n",
		obj, pctText(p.TargetShare), pctText(p.Confidence), len(r.Tiers), durText(r.TargetSeconds), result.LoadWords(r.Header), budgetWords(r))
	if c := clientLine(r); c != "" {
		fmt.Fprintln(w, c)
	}
	if len(r.BudgetNotes) > 0 {
		fmt.Fprintln(w, "What the budget changed:")
		for _, n := range r.BudgetNotes {
			fmt.Fprintf(w, "  - %s\n", n)
		}
	}
	if !r.Complete {
		fmt.Fprintln(w, "INCOMPLETE: some tiers were interrupted, cut, or had requests canceled at their drain deadline.")
	}
}

// clientLine says what the client's own delays may have done to the curve's tiers (their
// measure.ClientDelays; the probes, which overload the deployment, left out): the largest p99 of
// its writing, inside every latency counted from sent, with how many of the misses would have
// met the objectives without it, and the largest p99 of its reading, which tokens timed at their
// arrival leave out. "" when no tier's records say (a virtual clock's, or older records).
func clientLine(r *result.Result) string {
	var send, read float64
	made, took, misses, tiers := 0, 0, 0, 0
	for _, t := range r.Tiers {
		st := t.Summary.Steady
		if t.Tier.Role == records.RoleProbe || st == nil || st.Client == nil {
			continue
		}
		c := st.Client
		tiers++
		send, read = max(send, c.SendP99), max(read, c.ReadP99)
		made, took, misses = made+c.SendMisses, took+c.ReadMisses, misses+st.Requests-st.Compliant
	}
	if tiers == 0 {
		return ""
	}
	madeWords := fmt.Sprintf("at most %d of their %d misses would have met the objectives without it", made, misses)
	switch {
	case misses == 0:
		madeWords = "they had no miss"
	case made == 0:
		madeWords = fmt.Sprintf("none of their %d misses would have met the objectives without it", misses)
	}
	line := fmt.Sprintf("Client: its own delays in the %s, p99 at most %s ms from sent to a request written (inside TTFT and E2EL: %s) and %s ms from a first token's arrival to its reading (not counted: tokens are timed at their arrival at the socket",
		tierWord(tiers), FormatFloat(send, 2), madeWords, FormatFloat(read, 2))
	if took > 0 {
		line += fmt.Sprintf("; timed when read, %d more would have missed", took)
	}
	return line + ")." + cpuClause(r)
}

// cpuClause says, after the Client line, the most CPU the client took in a tier of the curve and
// how busy the machine's CPUs were at most (" Its CPU: at most 0.9 % of one core in a tier; the
// machine's 2 CPUs at most 54 % busy."); "" when no tier read it.
func cpuClause(r *result.Result) string {
	var cores, busy float64
	cpus, tiers := 0, 0
	inProcess := false
	for _, t := range r.Tiers {
		c := t.Summary.CPU
		if t.Tier.Role == records.RoleProbe || c == nil {
			continue
		}
		tiers++
		cores = max(cores, c.Cores())
		inProcess = inProcess || c.InProcessTarget
		if c.MachineCPUs > 0 {
			cpus, busy = c.MachineCPUs, max(busy, c.MachineBusy)
		}
	}
	if tiers == 0 {
		return ""
	}
	s := " Its CPU: at most " + pctCPU(cores) + " of one core in a tier"
	if inProcess {
		s += " (the embedded deployment's included)"
	}
	if cpus > 0 {
		s += fmt.Sprintf("; the machine's %d CPUs at most %s busy", cpus, pctCPU(busy))
	}
	return s + "."
}

// pctCPU writes a CPU share as a percentage with one decimal ("0.9 %", "54.2 %").
func pctCPU(v float64) string { return FormatFloat(100*v, 1) + " %" }

func tierWord(n int) string {
	if n == 1 {
		return "1 tier of the curve"
	}
	return fmt.Sprintf("%d tiers of the curve", n)
}

// budgetWords says the budget the load was held to (", within its budget of 1h0m0s"), "" when the
// result does not know it (rebuilt from its records, or none was set).
func budgetWords(r *result.Result) string {
	if r.Budget <= 0 {
		return ""
	}
	per := ""
	if len(r.Repeats) > 1 {
		per = " a repetition"
	}
	return fmt.Sprintf(", within its budget of %v%s", r.Budget, per)
}

// capacityLine is the answer's first line: the capacity, what kind of figure it is, and the
// tiers that bound it.
func capacityLine(a curve.Analysis, u string) string {
	c := a.Capacity
	if c == nil {
		return "Capacity: none found: " + strings.TrimPrefix(capacityWhy(a), "no capacity: ")
	}
	produced := ""
	if c.RequestRate > 0 {
		produced = fmt.Sprintf(" (producing %s req/s)", fmtRate(c.RequestRate))
	}
	ends := ""
	switch {
	case c.Low > 0 && c.High != nil:
		ends = fmt.Sprintf("it meets the target with confidence up to %s %s and misses it with confidence from %s %s", fmtRate(c.Low), u, fmtRate(*c.High), u)
		if aroundText(c) != "" {
			ends = fmt.Sprintf("it meets the target with confidence up to %s %s (%s) and misses it with confidence from %s %s (%s)",
				fmtRate(c.Low), u, pctDown(c), fmtRate(*c.High), u, pctUp(c))
		}
	case c.Low > 0:
		ends = fmt.Sprintf("it meets the target with confidence up to %s %s; no tier missed it with confidence", fmtRate(c.Low), u)
	case c.High != nil:
		ends = fmt.Sprintf("no tier met the target with confidence yet; it misses it with confidence from %s %s", fmtRate(*c.High), u)
	default:
		ends = "no tier met or missed the target with confidence yet"
	}
	switch c.Method {
	case curve.CapacityLowerBound:
		why := "every tier met the objectives; none was heavy enough to miss them"
		if ex := excludedAbove(a, c.Rate); ex != "" {
			why = "every judged tier met the objectives; " + ex
		}
		return fmt.Sprintf("Capacity: at least %s %s%s: %s.", fmtRate(c.Rate), u, produced, why)
	case curve.CapacityAtTier:
		return fmt.Sprintf("Capacity: %s %s%s, the heaviest tier that settled: the next one never did (its queue kept growing); %s.", fmtRate(c.Rate), u, produced, ends)
	}
	return fmt.Sprintf("Capacity: about %s %s%s, where the compliant share crosses %s between tiers; %s.", fmtRate(c.Rate), u, produced, pctText(a.Params.TargetShare), ends)
}

// aroundText states the capacity interval around the capacity, its ends' distances below and
// above it in percent of it ("−9.3 % / +10 %", curve.Capacity.Around); "" when an end is missing
// or the interval does not hold the capacity.
func aroundText(c *curve.Capacity) string {
	if _, _, ok := c.Around(); !ok {
		return ""
	}
	return pctDown(c) + " / " + pctUp(c)
}

// pctDown and pctUp are the capacity interval's ends relative to the capacity ("−9.3 %",
// "+10 %"); only for an interval Around accepts.
func pctDown(c *curve.Capacity) string {
	below, _, _ := c.Around()
	return "−" + pct1(below)
}

func pctUp(c *curve.Capacity) string {
	_, above, _ := c.Around()
	return "+" + pct1(above)
}

// pct1 writes a fraction as a percentage with one decimal at most ("9.3 %", "10 %").
func pct1(v float64) string { return strings.TrimSuffix(FormatFloat(100*v, 1), ".0") + " %" }

// excludedAbove names the tiers above rate the analysis did not judge ("" without one), so that
// a lower bound is never read as "nothing heavier was tried".
func excludedAbove(a curve.Analysis, rate float64) string {
	var names []string
	for _, v := range a.Points {
		if v.Verdict == curve.VerdictExcluded && v.NominalRate > rate {
			names = append(names, fmt.Sprintf("tier %d", v.Tier))
		}
	}
	if len(names) == 0 {
		return ""
	}
	return strings.Join(names, ", ") + " ran heavier but could not be judged (see why with --verbose)"
}

// operatingLine is the answer's second line: the operating point, whether and how it was
// verified, and what it delivers.
func operatingLine(a curve.Analysis, op *curve.OperatingPoint, u string) string {
	p := a.Params
	line := fmt.Sprintf("Operating point: %s %s (the capacity less %s headroom)", fmtRate(op.Rate), u, pctText(p.Headroom))
	cf := op.Confirmation
	delivers := func(raw, compliant float64) string {
		return fmt.Sprintf("%s tok/s compliant of %s tok/s raw", FormatFloat(compliant, 0), FormatFloat(raw, 0))
	}
	switch {
	case op.VerifiedBy == curve.VerifiedByConfirmation:
		line += fmt.Sprintf(", verified: tier %d there was %s compliant [%s, %s] and delivered %s.", cf.Tier, pctText(cf.Share), pctText(cf.ShareLo), pctText(cf.ShareHi),
			delivers(cf.RawOutputThroughput, cf.CompliantOutputThroughput))
	case op.VerifiedBy == curve.VerifiedByHeavierTier:
		if pl := a.LowerEndPool(); pl != nil {
			line += fmt.Sprintf(", verified: a heavier load, %s %s, meets the target with confidence (tiers %s, pooled: %s compliant, at least %s), so this one does too",
				fmtRate(a.Capacity.Low), u, poolTiers(a, pl.Tiers), pctText(pl.Share), pctText(pl.ShareLo))
		} else {
			line += fmt.Sprintf(", verified: a heavier load, %s %s, met the target with confidence (%s), so this one does too", fmtRate(a.Capacity.Low), u, tiersOf(a, *op.HeavierTier))
		}
		if cf != nil && cf.AtThisPoint {
			line += fmt.Sprintf("; tier %d there was %s compliant and delivered %s.", cf.Tier, pctText(cf.Share), delivers(cf.RawOutputThroughput, cf.CompliantOutputThroughput))
		} else {
			line += fmt.Sprintf("; the curve expects %s there.", delivers(op.ExpectedRawThroughput, op.ExpectedCompliantThroughput))
		}
	case op.VerifiedBy == curve.VerifiedByHeavierTiers:
		pl := op.Pool
		line += fmt.Sprintf(", verified: the %d tiers from %s to %s %s (at or above it, below the capacity), pooled, were %s compliant, at least %s with %s confidence, so this load meets the target too",
			len(pl.Tiers), fmtRate(pl.From), fmtRate(pl.To), u, pctText(pl.Share), pctText(pl.ShareLo), pctText(p.Confidence))
		if cf != nil && cf.AtThisPoint {
			line += fmt.Sprintf("; tier %d there alone was %s compliant and delivered %s.", cf.Tier, pctText(cf.Share), delivers(cf.RawOutputThroughput, cf.CompliantOutputThroughput))
		} else {
			line += fmt.Sprintf("; the curve expects %s there.", delivers(op.ExpectedRawThroughput, op.ExpectedCompliantThroughput))
		}
	case cf == nil:
		line += fmt.Sprintf(", NOT verified: no tier ran there; the curve expects %s.", delivers(op.ExpectedRawThroughput, op.ExpectedCompliantThroughput))
	case !cf.AtThisPoint:
		line += fmt.Sprintf(", NOT verified: the confirmation tier %d ran at %s %s, the operating point of other settings.", cf.Tier, fmtRate(cf.NominalRate), u)
	case cf.Verdict == curve.VerdictUncertain && cf.Share >= p.TargetShare:
		reached := ""
		if cf.ConfidenceReached > 0 {
			reached = fmt.Sprintf(" it meets it at %s confidence, short of %s;", pctText(cf.ConfidenceReached), pctText(p.Confidence))
		}
		line += fmt.Sprintf(", NOT verified yet: tier %d there was %s compliant [%s, %s] over %s effective requests;%s %s would decide. It delivered %s.",
			cf.Tier, pctText(cf.Share), pctText(cf.ShareLo), pctText(cf.ShareHi), FormatFloat(cf.EffectiveRequests, 0), reached, toDecide(cf, u), delivers(cf.RawOutputThroughput, cf.CompliantOutputThroughput))
	default:
		line += fmt.Sprintf(", NOT verified: tier %d there %s (%s compliant [%s, %s]).", cf.Tier, verdictPhrase(cf.Verdict), pctText(cf.Share), pctText(cf.ShareLo), pctText(cf.ShareHi))
	}
	return line
}

// toDecide says how much more load would decide an undecided confirmation: "more requests (a
// longer --budget)", with how many and for how long when its share and clustering say so.
func toDecide(cf *curve.Confirmation, unit string) string {
	if !(cf.RequestsToDecide > 0) || !(cf.Rate > 0) {
		return "more requests (a longer --budget)"
	}
	d := time.Duration(cf.RequestsToDecide / cf.Rate * float64(time.Second))
	return fmt.Sprintf("at the share and the clustering it showed, about %s requests there (%s at %s %s: a longer --budget with a longer --max-tier-duration, whose triple bounds a confirmation, or loadcurve run at this rate for that long)",
		about(cf.RequestsToDecide), minutes(d), fmtRate(cf.Rate), unit)
}

// minutes writes a duration in whole minutes: "7 min", "1h06".
func minutes(d time.Duration) string {
	m := max(1, int(d.Round(time.Minute)/time.Minute))
	if m < 60 {
		return fmt.Sprintf("%d min", m)
	}
	return fmt.Sprintf("%dh%02d", m/60, m%60)
}

// about writes a count to two significant digits (curve.TwoDigits), in thousands: 21,787.4 as
// 22,000.
func about(x float64) string {
	if !(x >= 1) || x > math.MaxInt64/2 { // beyond an int: as it is
		return FormatFloat(x, 0)
	}
	return curve.Count(int(math.RoundToEven(curve.TwoDigits(x))))
}

// tiersOf names the tier of the curve's point that is tier, with the tiers pooled with it:
// "tier 3", "tiers 3+8".
func tiersOf(a curve.Analysis, tier int) string {
	for _, v := range a.Points {
		if v.Tier == tier && len(v.Pooled) > 1 {
			parts := make([]string, len(v.Pooled))
			for i, t := range v.Pooled {
				parts[i] = strconv.Itoa(t)
			}
			return "tiers " + strings.Join(parts, "+")
		}
	}
	return fmt.Sprintf("tier %d", tier)
}

// poolTiers writes a pool's points as the tier table names them: "3+8, 6" (a point that pools
// several tiers at one rate with a plus).
func poolTiers(a curve.Analysis, tiers []int) string {
	parts := make([]string, len(tiers))
	for i, t := range tiers {
		parts[i] = strings.TrimPrefix(strings.TrimPrefix(tiersOf(a, t), "tiers "), "tier ")
	}
	return strings.Join(parts, ", ")
}

// verdictPhrase says a verdict in plain words, as a past-tense phrase.
func verdictPhrase(v curve.Verdict) string {
	switch v {
	case curve.VerdictMeets:
		return "met the target"
	case curve.VerdictFails:
		return "missed the target"
	case curve.VerdictUncertain:
		return "could not tell yet"
	case curve.VerdictInsufficient:
		return "held too few requests to judge"
	}
	return "could not be judged"
}

func capacityWhy(a curve.Analysis) string {
	for _, n := range a.Notes {
		if strings.HasPrefix(n, "no capacity") || strings.HasPrefix(n, "no tier") {
			return n
		}
	}
	return "see the notes (--verbose)"
}

// CurveTable is the one-row-per-tier table of a result, in the order the tiers ran, with the
// confirmation tier marked. Rates and throughputs are steady-state figures; "compl. req. share"
// is the compliant *request* share its verdict uses (TierSummaryTable's), beside that verdict's
// interval (the cost ledger prices the token share, in the JSON).
func CurveTable(r *result.Result) Table {
	a := r.Analysis
	t := Table{
		Title: fmt.Sprintf("Tiers (objectives %s, target %s of requests, %s confidence)", orNone(r.Settings.Measure.Objectives.String()),
			pctText(a.Params.TargetShare), pctText(a.Params.Confidence)),
		Columns: []string{"tier", "role", "rate " + RateUnit(r), realisedColumn(r), "requests", "compl. req. share", "interval", "verdict",
			"raw tok/s", "compliant tok/s", "p99 ttft ms", "ended"},
		Align:          []bool{true, false, true, true, true, true, false, false, true, true, true, false},
		Highlight:      -1,
		HighlightLabel: "◀ operating point verified here",
		Notes:          []string{"compl. req. share: " + verdictShareText + ", beside its verdict's interval; the window's own share is curve.csv's compliant_share"},
	}
	vs := verdictSharesOf(a)
	withServer := false
	for _, tr := range r.Tiers {
		withServer = withServer || tr.Server != nil
	}
	if withServer {
		t.Columns = append(t.Columns, "srv waiting", "srv prefix hit")
		t.Align = append(t.Align, true, true)
	}
	f := FormatFloat
	for i, tr := range r.Tiers {
		s, id := tr.Summary, tr.Tier
		row := []string{strconv.Itoa(id.Tier), roleText(id), curve.LevelCell(s, rateCell)}
		st := s.Steady
		verdict, interval := tierVerdict(a, id), "—"
		if iv, ok := vs.intervals[id.Tier]; ok {
			interval = fmt.Sprintf("[%s, %s]", f(iv[0], 4), f(iv[1], 4))
		}
		if id.Role == records.RoleConfirm {
			if cf := confirmationOf(a, id.Tier); cf != nil {
				interval = fmt.Sprintf("[%s, %s]", f(cf.ShareLo, 4), f(cf.ShareHi, 4))
				if cf.AtThisPoint && cf.Verdict == curve.VerdictMeets {
					t.Highlight = i
				}
			}
		}
		if st != nil && !math.IsInf(s.NominalRate, 1) {
			row = append(row, f(st.RealisedRate, 2), strconv.Itoa(st.Requests), f(vs.share(id.Tier, st), 4), interval, verdict,
				f(st.RawOutputThroughput, 0), f(st.CompliantOutputThroughput, 0))
		} else {
			row = append(row, NaNText, strconv.Itoa(s.Issued), f(s.CompliantRequestShare, 4), "—", verdict,
				f(s.RawOutputThroughput, 0), f(s.CompliantOutputThroughput, 0))
		}
		row = append(row, f(s.TTFT.Percentiles["p99"], 1), endText(id))
		if withServer {
			tm := decodeServer(tr.Server)
			row = append(row, optF(tm.MeanWaiting, 1, 1), optF(tm.PrefixCacheHitRate, 100, 1))
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

// tierVerdict says the analysis's verdict on a tier in words, with what decided it (the words
// of the sweep's tier lines, curve.VerdictWords): a point of the curve its own, a tier pooled
// into another's point that it is, a confirmation its verdict and, when a heavier tier verified
// the operating point it could not verify on its own, that; a burst that it is off the axis.
func tierVerdict(a curve.Analysis, id records.Tier) string {
	q := a.Params.TargetShare
	if cf := confirmationOf(a, id.Tier); cf != nil && id.Role == records.RoleConfirm {
		words := curve.VerdictWords(cf.Verdict, cf.Verdict != curve.VerdictFails || !strings.HasPrefix(cf.Reason, "unstable"), cf.Share, q, cf.Reason)
		switch op := a.OperatingPoint; {
		case !cf.AtThisPoint:
			words += "; it ran at another operating point"
		case op.VerifiedBy == curve.VerifiedByHeavierTier && cf.Verdict != curve.VerdictMeets:
			if pl := a.LowerEndPool(); pl != nil {
				words += fmt.Sprintf("; the operating point is verified by the heavier tiers %s, pooled", poolTiers(a, pl.Tiers))
			} else {
				words += fmt.Sprintf("; the operating point is verified by the heavier %s", tiersOf(a, *op.HeavierTier))
			}
		case op.VerifiedBy == curve.VerifiedByHeavierTiers && op.Pool != nil && cf.Verdict != curve.VerdictMeets:
			words += fmt.Sprintf("; the operating point is verified by %d tiers from it up to the capacity, pooled", len(op.Pool.Tiers))
		}
		return words
	}
	if op := a.OperatingPoint; id.Role == records.RoleConfirm && op != nil && op.Confirmation != nil {
		cf := op.Confirmation
		if slices.Contains(cf.Pooled, id.Tier) {
			return fmt.Sprintf("pooled with confirmation tier %d: %s", cf.Tier, curve.VerdictWords(cf.Verdict, true, cf.Share, q, cf.Reason))
		}
		return fmt.Sprintf("an earlier confirmation: the last one, tier %d, counts", cf.Tier)
	}
	for _, v := range a.Points {
		if v.Tier == id.Tier && len(v.Pooled) <= 1 {
			return v.Words(q)
		}
		if slices.Contains(v.Pooled, id.Tier) || v.Tier == id.Tier {
			return fmt.Sprintf("%s pooled: one point, %s", tiersOf(a, v.Tier), v.Words(q))
		}
	}
	if math.IsInf(float64(id.RequestRate), 1) {
		return "off the axis: a burst"
	}
	return NaNText
}

// realisedColumn heads the curve table's realised rates: on the concurrency axis, the request
// rate the users produced.
func realisedColumn(r *result.Result) string { return r.Axis().RealisedHeading() }

func confirmationOf(a curve.Analysis, tier int) *curve.Confirmation {
	if op := a.OperatingPoint; op != nil && op.Confirmation != nil && op.Confirmation.Tier == tier {
		return op.Confirmation
	}
	return nil
}

func roleText(t records.Tier) string {
	s := string(t.Role)
	if s == "" {
		s = string(records.RoleTier)
	}
	if t.Repeat > 0 {
		s += fmt.Sprintf(" (rep %d)", t.Repeat+1)
	}
	return s
}

// offeredRate is a realised offered rate as a person reads it: an unbounded one (every arrival
// planned at one instant) is "inf (all at once)".
func offeredRate(r float64) string {
	if math.IsInf(r, 1) {
		return "inf (all at once)"
	}
	return FormatFloat(r, 2)
}

func rateCell(r float64) string {
	if math.IsInf(r, 1) {
		return "inf"
	}
	return FormatFloat(r, 2)
}

// endText says how a tier's arrival phase ended.
func endText(t records.Tier) string {
	e := t.End
	if e == nil {
		return "cut"
	}
	switch e.Reason {
	case records.EndedDecided:
		return fmt.Sprintf("decided at %ss", FormatFloat(e.ArrivalsEndS, 0))
	case records.EndedCap:
		return fmt.Sprintf("cap %ss", FormatFloat(e.ArrivalsEndS, 0))
	case records.EndedInterrupted:
		return "interrupted"
	}
	return fmt.Sprintf("%ss", FormatFloat(e.ArrivalsEndS, 0))
}

// CurveOf is the plot model of a result: the curve's tiers (finite rate, not a confirmation)
// at their steady-state realised rates, the analysis's markers, the objectives and the target.
func CurveOf(r *result.Result) Curve {
	h := r.Header
	c := Curve{
		Title:       fmt.Sprintf("%s @ %s", h.Model, h.Target),
		Subtitle:    fmt.Sprintf("%s, %s, seed %d, objectives %s", h.Workload, h.Arrival, h.Seed, orNone(r.Settings.Measure.Objectives.String())),
		Series:      []CurveSeries{SeriesOf(r, "")},
		Objectives:  objectiveMap(r.Settings.Measure.Objectives),
		TargetShare: r.Analysis.Params.TargetShare,
		Axis:        r.Axis(),
		Unit:        h.Unit,
	}
	a := r.Analysis
	if a.Plateau != nil {
		c.Plateau = &Marker{Label: "plateau", Rate: a.Plateau.StartRate}
	}
	if a.Knee != nil {
		c.Knee = &Marker{Label: "knee", Rate: a.Knee.Rate}
	}
	if a.Capacity != nil {
		c.Capacity = &Marker{Label: "capacity", Rate: a.Capacity.Rate}
	}
	if a.OperatingPoint != nil {
		label := "operating point (not verified)"
		if a.OperatingPoint.Verified() {
			label = "operating point (verified)"
		}
		c.OperatingPoint = &Marker{Label: label, Rate: a.OperatingPoint.Rate}
	}
	return c
}

// SeriesOf is a result's curve as one plotted series, named name (the model or sim profile when
// empty).
func SeriesOf(r *result.Result, name string) CurveSeries {
	if name == "" {
		name = r.Header.Model
		if r.Header.Sim != "" {
			name = "sim:" + r.Header.Sim
		}
	}
	cs := CurveSeries{Name: name}
	verdicts := map[int]curve.PointVerdict{}
	for _, v := range r.Analysis.Points {
		verdicts[v.Tier] = v
	}
	for _, tr := range r.Tiers {
		v, ok := verdicts[tr.Tier.Tier]
		if !ok || v.Verdict == curve.VerdictExcluded {
			continue
		}
		s := tr.Summary
		lat := map[string]map[string]float64{}
		for _, m := range measure.Metrics {
			if m.OnCurve && s.Reports(m.Key) {
				lat[m.Key] = m.Stats(&s).Percentiles
			}
		}
		cs.Points = append(cs.Points, CurvePoint{Rate: v.Rate, NominalRate: v.NominalRate,
			RawOutputThroughput: v.RawOutputThroughput, CompliantOutputThroughput: v.CompliantOutputThroughput,
			CompliantRequestShare: v.Share, WilsonLow: v.ShareLo, WilsonHigh: v.ShareHi, Latency: lat, FailureRatio: s.FailureRatio})
	}
	sort.Slice(cs.Points, func(i, j int) bool { return cs.Points[i].Rate < cs.Points[j].Rate })
	return cs
}

// objectiveMap maps each objective's metric to its value in ms.
func objectiveMap(o measure.Objectives) map[string]float64 {
	m := map[string]float64{}
	o.Each(func(k string, d time.Duration) { m[k] = float64(d) / 1e6 })
	return m
}

// shortTokenizer shortens a header's "NAME (sha256:…)" to 12 hex digits of the hash.
func shortTokenizer(t string) string {
	i := strings.LastIndex(t, "(sha256:")
	if i < 0 || len(t)-i < len("(sha256:")+14 {
		return t
	}
	return t[:i+len("(sha256:")+12] + "…)"
}

// IdentityRows are the key facts of a result, for the top of report.html.
func IdentityRows(r *result.Result) [][2]string {
	h, p := r.Header, r.Analysis.Params
	m := r.Settings.Measure
	rows := [][2]string{
		{"target", h.Target}, {"model", h.Model}, {"endpoint", h.Endpoint}, {"workload", h.Workload},
		{"arrival", h.Arrival}, {"seed", strconv.FormatInt(h.Seed, 10)}, {"cache policy", h.CachePolicy},
		{"objectives", orNone(m.Objectives.String())}, {"target share", FormatFloat(p.TargetShare, 3)},
		{"confidence", FormatFloat(p.Confidence, 3)}, {"headroom", FormatFloat(p.Headroom, 3)},
		{"metric definitions", h.MetricsVersion}, {"started", h.StartWall.Format(time.RFC3339)}, {"tool", h.Tool + " " + h.Version},
		{"load on the target", durText(r.TargetSeconds)},
	}
	if len(h.ExtraBody) > 0 {
		rows = append(rows, [2]string{"extra body", string(h.ExtraBody)})
	}
	if h.Tokenizer != "" {
		rows = append(rows, [2]string{"input tokens counted with", h.Tokenizer})
	}
	if h.Sim != "" {
		rows = append(rows, [2]string{"simulated deployment", h.Sim + " (a model, not a measurement)"})
	}
	if h.MaxConcurrency > 0 {
		rows = append(rows, [2]string{"max concurrency", strconv.Itoa(h.MaxConcurrency)})
	}
	return rows
}

// WriteResult writes a result's files into dir: summary.json (a run) or curve.json (a sweep),
// then the rendered files (WriteFiles), its plots in DefaultPlotFormats. It has no time
// series: WriteResultSeries does.
func WriteResult(dir string, r *result.Result) error {
	return WriteResultSeries(dir, r, nil, DefaultPlotFormats)
}

// WriteResultSeries is WriteResult with the tiers' time series (by tier index, as
// TimeSeriesOf or ReadTimeSeries make them from the result's records): it also writes
// timeseries_tierNN.csv for every tier ts holds, and plots them in report.html
// (WriteFilesSeries). Its plots are written in plots.
func WriteResultSeries(dir string, r *result.Result, ts map[int]timeseries.Series, plots PlotFormats) error {
	v, err := r.Answer()
	if err != nil {
		return err
	}
	if err := result.WriteJSON(dir, r.Shape().AnswerName(), v); err != nil {
		return err
	}
	_, err = WriteFilesSeries(dir, r, ts, plots)
	return err
}

// WriteFiles renders a result into dir: curve.csv, every tier's summary (summary_tierNN.json),
// the plots (DefaultPlotFormats) and report.html; a run writes report.html only beside its
// summary.json. It returns the names written. It has no time series: WriteFilesSeries does.
func WriteFiles(dir string, r *result.Result) ([]string, error) {
	return WriteFilesSeries(dir, r, nil, DefaultPlotFormats)
}

// WriteFilesSeries is WriteFiles with the tiers' time series (by tier index; nil: none): it
// also writes timeseries_tierNN.csv for every tier of r that ts holds (a run too), and
// report.html plots them (at most TimeSeriesPlotTiers tiers, else the probes are left out).
// Its plot files are written in plots.
func WriteFilesSeries(dir string, r *result.Result, ts map[int]timeseries.Series, plots PlotFormats) ([]string, error) {
	written, err := writeTimeSeries(dir, r, ts)
	if err != nil {
		return written, err
	}
	if !r.Shape().OneTier() {
		for _, tr := range r.Tiers {
			name := fmt.Sprintf("summary_tier%02d.json", tr.Tier.Tier)
			if err := result.WriteJSON(dir, name, tr.Summary); err != nil {
				return written, err
			}
			written = append(written, name)
		}
		var b bytes.Buffer
		if err := CurveCSV(&b, r); err != nil {
			return written, err
		}
		if err := result.WriteFile(filepath.Join(dir, "curve.csv"), b.Bytes()); err != nil {
			return written, err
		}
		written = append(written, "curve.csv")
	}
	names, err := WriteResultPage(dir, r, ts, plots)
	return append(written, names...), err
}

// WriteHTML writes dir/report.html.
func WriteHTML(dir string, h HTML) error {
	var b bytes.Buffer
	if err := h.Write(&b); err != nil {
		return err
	}
	if err := result.WriteFile(filepath.Join(dir, "report.html"), b.Bytes()); err != nil {
		return err
	}
	return nil
}

// RunText prints a run's summary in the layout of vLLM's benchmark client, with loadcurve's
// additions: the steady state and the verdict against the target share, and what the target's
// own metrics said. It is text for a person: no value prints as NaN or Inf (an unbounded rate
// reads "inf (all at once)", an undefined value "—", with why where it is not plain); the JSON
// and CSV forms keep vLLM's conventions.
func RunText(w io.Writer, f result.RunFile) {
	t := runText{w: w}
	fmt.Fprintln(w, strings.Repeat("=", 20)+" loadcurve result "+strings.Repeat("=", 19))
	t.counts(f)
	t.throughputs(f.Summary)
	t.latencies(f.Summary)
	t.extras(f.Summary)
	if st := f.Summary.Steady; st != nil {
		t.steady(f, st)
	}
	fmt.Fprintln(w, strings.Repeat("=", 57))
	runNotes(w, f.Summary)
	ServerText(w, f.Server)
}

// runText writes RunText's lines: a label and its value, a reason under it, a section's rule.
type runText struct{ w io.Writer }

func (t runText) line(label string, v any) {
	switch x := v.(type) {
	case float64:
		fmt.Fprintf(t.w, "%-44s %12s\n", label, FormatFloat(x, 2))
	default:
		fmt.Fprintf(t.w, "%-44s %12v\n", label, x)
	}
}

func (t runText) why(text string) { fmt.Fprintf(t.w, "  (%s)\n", text) }

func (t runText) rule(title string) {
	pad := 57 - len(title)
	fmt.Fprintf(t.w, "%s%s%s\n", strings.Repeat("-", pad/2), title, strings.Repeat("-", pad-pad/2))
}

// counts writes what was measured and how many requests and tokens it took.
func (t runText) counts(f result.RunFile) {
	s := f.Summary
	t.line("Target:", f.Run.Target)
	t.line("Model:", f.Run.Model)
	if f.Run.Tokenizer != "" {
		t.line("Tokenizer:", shortTokenizer(f.Run.Tokenizer))
	}
	t.line("Arrival:", s.Arrival)
	if s.MaxConcurrency > 0 {
		t.line("Maximum request concurrency:", s.MaxConcurrency)
	}
	t.line("Planned / issued requests:", fmt.Sprintf("%d / %d", s.Planned, s.Issued))
	t.line("Successful requests:", s.Completed)
	t.line("Failed requests:", s.Failed)
	for _, k := range []string{"http_error", "timeout", "stream_error", "canceled"} {
		if s.Outcomes[k] > 0 {
			t.line("  "+k+":", s.Outcomes[k])
		}
	}
	if s.NotIssued > 0 {
		t.line("  not issued (canceled before dispatch):", s.NotIssued)
	}
	t.line("Benchmark duration (s):", s.Duration)
	t.line("Total input tokens:", s.TotalInputTokens)
	if req := s.TotalRequestedInputTokens; req > 0 && req != s.TotalInputTokens {
		t.line("  requested (the request set's count):", req)
		diff := 100 * (float64(s.TotalInputTokens)/float64(req) - 1)
		if f.Run.Tokenizer != "" {
			t.why(fmt.Sprintf("the server counted %+.1f %% against what the request set asked for, in the tokens of %s: a server counts its chat template too (and counts another model's tokens if that is not its tokenizer)",
				diff, shortTokenizer(f.Run.Tokenizer)))
		} else {
			t.why(fmt.Sprintf("the server counted %+.1f %% against what the request set asked for: its prompts are sized in words, the server counts its own tokens and its chat template; give --tokenizer with the served model's tokenizer.json (or its Hugging Face id, from the local cache) to size them in its tokens",
				diff))
		}
	}
	t.line("Total generated tokens:", s.TotalOutputTokens)
}

// throughputs writes the rates: offered, completed, raw and compliant.
func (t runText) throughputs(s measure.Summary) {
	unit := curve.AxisOf(s).ArrivalUnit() // sessions/s when the schedule's arrivals start sessions
	t.line("Nominal / realised offered rate ("+unit+"):", rateCell(s.NominalRate)+" / "+offeredRate(s.RealisedRate))
	if math.IsNaN(s.NominalRate) {
		t.why("no one nominal rate: the arrival rate changes over the run, see Arrival")
	}
	t.line("Request throughput (req/s):", s.RequestThroughput)
	if s.Objectives != "" {
		t.line("Request goodput (req/s):", s.RequestGoodput)
	}
	t.line("Output token throughput (tok/s):", s.OutputThroughput)
	t.line("Total token throughput (tok/s):", s.TotalTokenThroughput)
	counted := s.Unit.Short() // what the raw and compliant figures count: "output", or "input" (embeddings)
	t.line("Raw "+counted+" throughput (tok/s):", s.RawOutputThroughput)
	t.line("Compliant "+counted+" throughput (tok/s):", s.CompliantOutputThroughput)
	t.line("Compliant token share:", FormatFloat(s.CompliantTokenShare, 4))
	if math.IsNaN(s.CompliantTokenShare) {
		t.why("no output token was streamed")
	}
	t.line("Compliant request share:", FormatFloat(s.CompliantRequestShare, 4))
	if s.Objectives != "" {
		t.line("Objectives:", s.Objectives)
	}
	if s.LatencyFailures > 0 || s.QualityFailures > 0 {
		t.line("Not compliant: latency / quality:", fmt.Sprintf("%d / %d", s.LatencyFailures, s.QualityFailures))
	}
	if s.Window != "" {
		t.line("Metric window:", "steady state (below)")
	}
}

// latencies writes each latency metric the run reports: mean, median and percentiles.
func (t runText) latencies(s measure.Summary) {
	for _, metric := range measure.Metrics {
		m := struct {
			name, title, abbr string
			st                measure.Stats
		}{metric.Key, metric.Title, metric.Abbr, *metric.Stats(&s)}
		if !s.Reports(m.name) {
			continue
		}
		t.rule(m.title)
		if m.st.Count == 0 {
			t.line("(no samples)", "")
			continue
		}
		t.line(fmt.Sprintf("Mean %s (ms):", m.abbr), m.st.Mean)
		t.line(fmt.Sprintf("Median %s (ms):", m.abbr), m.st.Median)
		for _, p := range s.Percentiles {
			if p == 50 {
				continue // printed as the median
			}
			key := measure.PercentileKey(p)
			v, ok := m.st.Percentiles[key]
			if !ok {
				v = math.NaN()
			}
			t.line(fmt.Sprintf("P%s %s (ms):", strings.TrimPrefix(key, "p"), m.abbr), v)
		}
	}
}

// extras writes what only some runs have: reasoning, the prefix cache, sessions, the CPU.
func (t runText) extras(s measure.Summary) {
	if s.ReasoningResponses > 0 {
		t.rule("Reasoning")
		t.line("Responses with reasoning:", s.ReasoningResponses)
		t.line("Reasoning / answer tokens:", fmt.Sprintf("%d / %d", s.ReasoningTokens, s.AnswerTokens))
		if s.ReasoningTokensFromChunks > 0 {
			t.line("  estimated from chunks (no usage detail):", s.ReasoningTokensFromChunks)
		}
	}
	if s.CachedReported > 0 {
		t.line("Prompt tokens from the prefix cache:", fmt.Sprintf("%d (%s %%)", s.CachedPromptTokens, FormatFloat(100*s.CachedPromptShare, 1)))
	}
	if ss := s.Sessions; ss != nil {
		sessionText(t.w, t.rule, t.line, ss)
	}
	if c := s.CPU; c != nil {
		t.line("Client's CPU (one core = 100 %):", pctCPU(c.Cores()))
		if c.InProcessTarget {
			t.why("the embedded deployment runs in the client's process: its CPU is included")
		}
		if c.MachineCPUs > 0 {
			t.line(fmt.Sprintf("Machine's CPUs busy (%d CPUs):", c.MachineCPUs), pctCPU(c.MachineBusy))
		}
	}
}

// steady writes the steady state's figures, the ones the decisions use, and the verdict.
func (t runText) steady(f result.RunFile, st *measure.Steady) {
	unit, counted := curve.AxisOf(f.Summary).ArrivalUnit(), f.Summary.Unit.Short()
	t.rule("Steady State (the decisions' figures)")
	t.line("Window (s):", FormatFloat(st.Start, 2)+" – "+FormatFloat(st.End, 2))
	t.line("Realised rate in the window ("+unit+"):", offeredRate(st.RealisedRate))
	t.line("Completions in the window (req/s):", st.RequestThroughput)
	t.line("Raw / compliant "+counted+" (tok/s):", FormatFloat(st.RawOutputThroughput, 0)+" / "+FormatFloat(st.CompliantOutputThroughput, 0))
	if !(st.End > st.Start) {
		t.why("the window has no length: every arrival was planned at one instant, so no rate is defined over it; the whole-run throughputs above stand")
	}
	t.line("Compliant request share:", FormatFloat(st.CompliantShare, 4))
	if v := f.Verdict; v != nil {
		t.line("Interval, on effective requests:", fmt.Sprintf("[%s, %s] on %s", FormatFloat(v.ShareLo, 4), FormatFloat(v.ShareHi, 4), FormatFloat(v.EffectiveRequests, 0)))
		t.line("Verdict against the target share:", string(v.Verdict))
	}
	if st.Note != "" {
		fmt.Fprintf(t.w, "  %s\n", st.Note)
	}
	if c := st.Client; c != nil {
		t.line("Client's delays, write / read p99 (ms):", FormatFloat(c.SendP99, 2)+" / "+FormatFloat(c.ReadP99, 2))
		t.line("  misses they may have made / took out:", fmt.Sprintf("%d / %d (share without them at most %s)", c.SendMisses, c.ReadMisses, FormatFloat(c.ShareWithout(st.Compliant, st.Requests), 4)))
	}
}

// runNotes writes the notes and warnings under a run's summary: the window, a client-bound or
// incomplete run, approximate percentiles, counts that could not be believed.
func runNotes(w io.Writer, s measure.Summary) {
	if s.Window != "" {
		fmt.Fprintf(w, "Note: %s.\n", s.Window)
	}
	if s.ClientBound {
		fmt.Fprintf(w, "CLIENT-BOUND: %s\n", s.ClientBoundReason)
	}
	if !s.Complete {
		fmt.Fprintln(w, "INCOMPLETE: the run was stopped before every planned request finished.")
	}
	if s.PercentileError > 0 {
		fmt.Fprintf(w, "Note: --bounded-memory: medians and percentiles are within ±%g %% (relative) of the exact values; counts, throughputs, means and standard deviations are exact. `loadcurve report` on records.jsonl gives the exact percentiles.\n", 100*s.PercentileError)
	}
	if s.Completed > 0 && s.TotalOutputTokens == 0 && s.Unit.Or() == records.UnitOutputTokens {
		fmt.Fprintf(w, "WARNING: none of the %d successful requests streamed an output token: the server answers, but generates nothing this client can see (check --endpoint, the model and the server's streaming format); every throughput here is 0.\n", s.Completed)
	}
	if s.OutputTokensBadUsage > 0 {
		fmt.Fprintf(w, "WARNING: %d requests had a usage message that cannot be believed (a count beyond both the max_tokens sent and what was streamed, a negative, fractional or absurd count, no completion_tokens, or 0 after output chunks); their output tokens were counted as chunks (usage_rejected in records.jsonl says why).\n", s.OutputTokensBadUsage)
	}
	if s.InputTokensBadUsage > 0 {
		fmt.Fprintf(w, "WARNING: %d requests had a usage.prompt_tokens beyond what the request could carry (a token per byte of its body, and 1,024 for a chat template); their input tokens are the workload's count (usage_rejected in records.jsonl says why).\n", s.InputTokensBadUsage)
	}
	if s.Stalls > 0 {
		fmt.Fprintf(w, "WARNING: %d requests stalled: the server sent nothing on them for 5 s or more (or the whole drain) when the tier's drain deadline ended them; they are counted as timeouts, the server's failure.\n", s.Stalls)
	}
	if s.CutShort > 0 {
		fmt.Fprintf(w, "Note: %d successful replies ended with finish_reason \"length\" below the max_tokens sent: the server cut them short; under a tpot objective, those of one token are not compliant.\n", s.CutShort)
	}
	if n := s.OutputTokensFromChunks - s.OutputTokensBadUsage; n > 0 {
		fmt.Fprintf(w, "Note: %d requests had no usage message; their output tokens were counted as chunks.\n", n)
	}
}

// sessionText prints the sessions of a tier and its metrics by turn.
func sessionText(w io.Writer, rule func(string), line func(string, any), ss *measure.Sessions) {
	rule("Sessions")
	line("Sessions / completed:", fmt.Sprintf("%d / %d", ss.Sessions, ss.Completed))
	line("Session rate (sessions/s):", float64(ss.SessionRate))
	line("Turns per session (mean):", float64(ss.MeanTurns))
	if ss.Duration.Count > 0 {
		line("Session duration median / p99 (s):", FormatFloat(float64(ss.Duration.Median), 2)+" / "+FormatFloat(float64(ss.Duration.P99), 2))
	}
	t := SessionTable(ss)
	fmt.Fprintln(w)
	_ = t.Text(w) // a well-formed table: Text fails only on a malformed one
}

// SessionTable is the metrics of a tier of sessions by turn index: the history grows with the
// turn, so the prompt, the prefix cache's share of it and the latencies do too.
func SessionTable(ss *measure.Sessions) Table {
	t := Table{Title: "by turn (the history grows with the turn)", Columns: []string{"turn", "requests", "ok", "compliant", "mean input tok", "cached %", "median ttft ms", "p99 ttft ms", "median tpot ms", "median e2el ms"},
		Align: []bool{true, true, true, true, true, true, true, true, true, true}, Highlight: -1}
	f := func(v measure.Number, digits int) string { return FormatFloat(float64(v), digits) }
	for _, ts := range ss.ByTurn {
		cached := FormatFloat(100*float64(ts.CachedPromptShare), 1) // NaNText when no request reported it
		t.Rows = append(t.Rows, []string{strconv.Itoa(ts.Turn), strconv.Itoa(ts.Requests), strconv.Itoa(ts.Ok), strconv.Itoa(ts.Compliant),
			f(ts.MeanInputTokens, 0), cached, f(ts.TTFT.Median, 1), f(ts.TTFT.P99, 1), f(ts.TPOT.Median, 2), f(ts.E2EL.Median, 1)})
	}
	return t
}

// ServerText prints what the target's own metrics endpoint reported over a tier (nothing when
// it was not scraped).
func ServerText(w io.Writer, raw json.RawMessage) {
	if raw == nil {
		return
	}
	tm := decodeServer(raw)
	fmt.Fprintf(w, "Server-side, from the target's metrics (%s, %d scrapes, %d failed):\n", tm.Source, tm.Scrapes, tm.Failures)
	row := func(label string, v *float64, scale float64, digits int, unit string) {
		if v != nil {
			fmt.Fprintf(w, "  %-42s %12s%s\n", label, FormatFloat(*v*scale, digits), unit)
		}
	}
	row("mean running requests:", tm.MeanRunning, 1, 1, "")
	row("max running:", tm.MaxRunning, 1, 0, "")
	row("mean waiting requests:", tm.MeanWaiting, 1, 1, "")
	row("max waiting:", tm.MaxWaiting, 1, 0, "")
	row("mean KV-cache usage:", tm.MeanKVUsage, 100, 1, " %")
	row("prefix-cache hit rate (tokens):", tm.PrefixCacheHitRate, 100, 1, " %")
	row("preemptions:", tm.Preemptions, 1, 0, "")
	row("generated tokens:", tm.GenerationTokens, 1, 0, "")
	row("requests received:", tm.RequestsReceived, 1, 0, "")
	row("engine step lateness p99 (ms):", tm.StepLatenessP99, 1, 2, "")
	for _, n := range tm.Notes {
		fmt.Fprintf(w, "  note: %s\n", n)
	}
}

// decodeServer reads a tier's server metrics; the zero value when absent.
func decodeServer(raw json.RawMessage) servermetrics.TierMetrics {
	var tm servermetrics.TierMetrics
	if raw != nil {
		_ = json.Unmarshal(raw, &tm) // written by loadcurve; a damaged value shows as absent
	}
	return tm
}

// optF formats an optional value times scale, NaNText when absent.
func optF(v *float64, scale float64, digits int) string {
	if v == nil {
		return NaNText
	}
	return FormatFloat(*v*scale, digits)
}

// SummaryCSV writes a summary as CSV: a header of summary.json's keys, in its order, and one row
// of values. The outcome counts become outcomes_<outcome> columns, the list of percentiles one
// space-separated cell and the steady state steady_state_<key> columns; a null is an empty cell.
func SummaryCSV(w io.Writer, s measure.Summary) error {
	b, err := json.Marshal(s)
	if err != nil {
		return err
	}
	var keys, vals []string
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if _, err := dec.Token(); err != nil { // {
		return err
	}
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			return err
		}
		var v any
		if err := dec.Decode(&v); err != nil {
			return err
		}
		key := k.(string)
		switch x := v.(type) {
		case map[string]any:
			if key == "outcomes" {
				for _, o := range records.Outcomes() {
					keys = append(keys, key+"_"+o.String())
					vals = append(vals, fmt.Sprint(x[o.String()]))
				}
				continue
			}
			sub := make([]string, 0, len(x))
			for sk := range x {
				if _, nested := x[sk].(map[string]any); !nested {
					sub = append(sub, sk)
				}
			}
			sort.Strings(sub)
			for _, sk := range sub {
				keys = append(keys, key+"_"+sk)
				if x[sk] == nil {
					vals = append(vals, "")
				} else {
					vals = append(vals, fmt.Sprint(x[sk]))
				}
			}
		case []any:
			parts := make([]string, len(x))
			for i, e := range x {
				parts[i] = fmt.Sprint(e)
			}
			keys, vals = append(keys, key), append(vals, strings.Join(parts, " "))
		case nil:
			keys, vals = append(keys, key), append(vals, "")
		default:
			keys, vals = append(keys, key), append(vals, fmt.Sprint(x))
		}
	}
	cw := csv.NewWriter(w)
	if err := cw.Write(keys); err != nil {
		return err
	}
	if err := cw.Write(vals); err != nil {
		return err
	}
	cw.Flush()
	return cw.Error()
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

// pctText prints a fraction as a percentage with up to 4 significant digits.
// spreadPct prints a run-to-run spread as a percentage with one decimal: a few repetitions do
// not know it better than that.
func spreadPct(v float64) string { return strconv.FormatFloat(100*v, 'f', 1, 64) + " %" }

func pctText(v float64) string { return strconv.FormatFloat(100*v, 'g', 4, 64) + " %" }

// fmtRate prints a rate with 3 significant digits (whole numbers from 1000 up).
func fmtRate(r float64) string {
	switch {
	case math.IsNaN(r):
		return "—"
	case math.IsInf(r, 1):
		return "inf"
	case math.Abs(r) >= 1000:
		return strconv.FormatFloat(r, 'f', 0, 64)
	}
	return strconv.FormatFloat(r, 'g', 3, 64)
}

// durText prints seconds as "95 s" or "12.5 min" or "2.1 h".
func durText(s float64) string {
	switch {
	case s < 120:
		return FormatFloat(s, 0) + " s"
	case s < 7200:
		return FormatFloat(s/60, 1) + " min"
	}
	return FormatFloat(s/3600, 1) + " h"
}
