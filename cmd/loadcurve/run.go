package main

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/loadcurve/loadcurve/measure"
	"github.com/loadcurve/loadcurve/records"
	"github.com/loadcurve/loadcurve/report"
)

func runCommand() *cli.Command {
	return &cli.Command{
		Name:      "run",
		Usage:     "send one tier of load to a target and summarise it",
		ArgsUsage: " ",
		Description: "Sends --num-requests requests (or those planned within --duration) on a seeded arrival schedule,\n" +
			"streams every response and prints TTFT, TPOT, ITL, E2EL, client queue time, goodput and compliant\n" +
			"throughput. Without --base-url it starts the embedded simulated deployment.",
		Flags: concat(targetFlags(), loadFlags("4", 200), shardFlags(), sourceFlags(), objectiveFlags(), outputFlags(),
			[]cli.Flag{boundedMemoryFlag("summarise on the fly and keep no records in memory, for long runs")},
			simFlags("sim-")),
		Action: runAction,
	}
}

func concat(groups ...[]cli.Flag) []cli.Flag {
	var out []cli.Flag
	for _, g := range groups {
		out = append(out, g...)
	}
	return out
}

func runAction(c *cli.Context) error {
	spec, errs := arrivalSpec(c)
	n, d, cErrs := loadCount(c)
	errs = append(errs, cErrs...)
	if d > 0 && math.IsInf(spec.Rate, 1) && spec.Ramp == 0 {
		errs = append(errs, fmt.Errorf("--duration needs a finite --request-rate (with inf every request is planned at once): use --num-requests"))
	}
	s, err := openSession(c, "run", errs)
	if err != nil {
		return err
	}
	defer s.close()
	if s.boundedMemory, err = boundedMemory(c, s.measureOpts); err != nil {
		return err
	}
	switch {
	case s.source.trace != nil && d > 0:
		return usagef("--duration does not apply to a trace replay: the trace is the schedule (cut it with --num-requests, stretch it with --trace-time-scale)")
	case s.source.trace != nil:
		if !c.IsSet("num-requests") {
			n = 0 // the whole trace
		}
		fmt.Fprintf(s.stderr, "loadcurve: the trace is the schedule: --request-rate and --burstiness do not apply\n")
	case !s.source.generated() && !c.IsSet("num-requests") && d == 0:
		n = s.source.size() // every request of the file, once
	}
	label := fmt.Sprintf("run %s", spec)
	out, err := s.runTier(c.Context, tierPlan{index: 0, spec: spec, n: n, duration: d, seed: s.seed, startAt: s.startAt}, label)
	if err != nil {
		return err
	}
	sum := out.summary
	s.warnClientBound(sum)
	if s.outDir != "" {
		if err := writeJSON(s.outDir, "summary.json", summaryFile{Header: s.header, Summary: sum, Server: out.server}); err != nil {
			return err
		}
	}
	if err := s.close(); err != nil {
		return err
	}
	switch s.format {
	case "json":
		b, err := json.MarshalIndent(sum, "", "  ")
		if err != nil {
			return err
		}
		fmt.Fprintln(s.stdout, string(b))
	case "csv":
		if err := writeSummaryCSV(s.stdout, sum); err != nil {
			return err
		}
	default:
		writeSummaryText(s.stdout, sum, s.header.Model, s.header.Target)
		writeServerText(s.stdout, out.server)
	}
	if s.outDir != "" {
		fmt.Fprintf(s.stderr, "loadcurve: wrote %s/records.jsonl and %s/summary.json\n", s.outDir, s.outDir)
	}
	if c.Context.Err() != nil {
		return errInterrupted
	}
	return nil
}

// summaryFile is summary.json: the run's identity and the tier summary, flat, with vLLM's keys
// where vLLM defines the metric.
type summaryFile struct {
	Header  any
	Summary measure.Summary
	Server  json.RawMessage // server-side metrics, nil when not scraped
}

// MarshalJSON flattens the summary's keys and adds the identity under "run".
func (f summaryFile) MarshalJSON() ([]byte, error) {
	sum, err := json.Marshal(f.Summary)
	if err != nil {
		return nil, err
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(sum, &m); err != nil {
		return nil, err
	}
	h, err := json.Marshal(f.Header)
	if err != nil {
		return nil, err
	}
	m["run"] = h
	if f.Server != nil {
		m["server_metrics"] = f.Server
	}
	return json.Marshal(m)
}

// writeSummaryText prints a tier summary in the layout of vLLM's benchmark client, with
// loadcurve's additions.
func writeSummaryText(w io.Writer, s measure.Summary, model, target string) {
	line := func(label string, v any) {
		switch x := v.(type) {
		case float64:
			fmt.Fprintf(w, "%-44s %12.2f\n", label, x)
		default:
			fmt.Fprintf(w, "%-44s %12v\n", label, x)
		}
	}
	rule := func(title string) {
		pad := 57 - len(title)
		fmt.Fprintf(w, "%s%s%s\n", strings.Repeat("-", pad/2), title, strings.Repeat("-", pad-pad/2))
	}
	fmt.Fprintln(w, strings.Repeat("=", 20)+" loadcurve result "+strings.Repeat("=", 19))
	line("Target:", target)
	line("Model:", model)
	line("Arrival:", s.Arrival)
	if s.MaxConcurrency > 0 {
		line("Maximum request concurrency:", s.MaxConcurrency)
	}
	line("Planned / issued requests:", fmt.Sprintf("%d / %d", s.Planned, s.Issued))
	line("Successful requests:", s.Completed)
	line("Failed requests:", s.Failed)
	for _, k := range []string{"http_error", "timeout", "stream_error", "canceled"} {
		if s.Outcomes[k] > 0 {
			line("  "+k+":", s.Outcomes[k])
		}
	}
	line("Benchmark duration (s):", s.Duration)
	line("Total input tokens:", s.TotalInputTokens)
	line("Total generated tokens:", s.TotalOutputTokens)
	line("Nominal / realised offered rate (req/s):", fmt.Sprintf("%s / %.2f", rateString(s.NominalRate), s.RealisedRate))
	line("Request throughput (req/s):", s.RequestThroughput)
	if s.Objectives != "" {
		line("Request goodput (req/s):", s.RequestGoodput)
	}
	line("Output token throughput (tok/s):", s.OutputThroughput)
	line("Total token throughput (tok/s):", s.TotalTokenThroughput)
	line("Raw output throughput (tok/s):", s.RawOutputThroughput)
	line("Compliant output throughput (tok/s):", s.CompliantOutputThroughput)
	line("Compliant token share:", fmt.Sprintf("%.4f", s.CompliantTokenShare))
	line("Compliant request share:", fmt.Sprintf("%.4f", s.CompliantRequestShare))
	if s.Objectives != "" {
		line("Objectives:", s.Objectives)
	}
	if s.LatencyFailures > 0 || s.QualityFailures > 0 {
		line("Not compliant: latency / quality:", fmt.Sprintf("%d / %d", s.LatencyFailures, s.QualityFailures))
	}
	if s.Window != "" {
		line("Metric window:", "steady state (below)")
	}
	for _, m := range []struct {
		name  string
		title string
		abbr  string
		st    measure.Stats
	}{
		{"ttft", "Time to First Token", "TTFT", s.TTFT},
		{"tpot", "Time per Output Token (excl. 1st token)", "TPOT", s.TPOT},
		{"itl", "Inter-token Latency", "ITL", s.ITL},
		{"e2el", "End-to-end Latency", "E2EL", s.E2EL},
		{"client_queue_time", "Client Queue Time (from planned arrival)", "client queue", s.ClientQueueTime},
		{"e2el_including_client_queue", "E2EL including Client Queue", "E2EL+queue", s.E2ELIncludingClientQueue},
		{"schedule_lag", "Schedule Lag (client's own lateness)", "lag", s.ScheduleLag},
	} {
		if !s.Reports(m.name) {
			continue
		}
		rule(m.title)
		if m.st.Count == 0 {
			line("(no samples)", "")
			continue
		}
		line(fmt.Sprintf("Mean %s (ms):", m.abbr), m.st.Mean)
		line(fmt.Sprintf("Median %s (ms):", m.abbr), m.st.Median)
		for _, p := range s.Percentiles {
			if p == 50 {
				continue // printed as the median
			}
			key := measure.PercentileKey(p)
			line(fmt.Sprintf("P%s %s (ms):", strings.TrimPrefix(key, "p"), m.abbr), m.st.Percentiles[key])
		}
	}
	fmt.Fprintln(w, strings.Repeat("=", 57))
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
	if s.OutputTokensFromChunks > 0 {
		fmt.Fprintf(w, "Note: %d requests had no usage message; their output tokens were counted as chunks.\n", s.OutputTokensFromChunks)
	}
}

func rateString(r float64) string {
	if math.IsInf(r, 1) {
		return "inf"
	}
	return fmt.Sprintf("%.2f", r)
}

// writeServerText prints what the target's own metrics endpoint reported over the tier.
func writeServerText(w io.Writer, raw json.RawMessage) {
	if raw == nil {
		return
	}
	tm := decodeServer(raw)
	fmt.Fprintf(w, "Server-side, from the target's metrics (%s, %d scrapes, %d failed):\n", tm.Source, tm.Scrapes, tm.Failures)
	row := func(label string, v *float64, scale float64, digits int, unit string) {
		if v != nil {
			fmt.Fprintf(w, "  %-42s %12s%s\n", label, report.FormatFloat(*v*scale, digits), unit)
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

// writeSummaryCSV writes a summary as CSV: a header of summary.json's keys, in its order, and one
// row of values. The outcome counts become outcomes_<outcome> columns and the list of
// percentiles one space-separated cell; a null is an empty cell.
func writeSummaryCSV(w io.Writer, s measure.Summary) error {
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
			for _, o := range records.Outcomes() {
				keys = append(keys, key+"_"+o.String())
				vals = append(vals, fmt.Sprint(x[o.String()]))
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
