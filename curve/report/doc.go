// Package report renders loadcurve results for people and for other tools:
// aligned terminal tables and CSV ([Table]), plots of a load curve as SVG and
// PNG through gonum.org/v1/plot ([ThroughputPlot], [LatencyPlot],
// [SharePlot], [WritePlots]) and a single self-contained HTML page ([HTML]).
//
// The package only renders: it takes loadcurve's results as they are
// ([result.Result] for a run or sweep, [compare.Result] for a comparison) and
// writes them as tables, JSON, CSV, plots and HTML ([Print], [WriteResult],
// [CompareText], [WriteCompareFiles]), and prints and writes each analysis
// command's output ([PrintPlan] and [WritePlan], [PrintComparison] and
// [WriteComparison], [PrintLedger], [WriteLoaded]); it decides nothing. Given the records a
// result comes from, it also writes each tier's time series
// (timeseries_tierNN.csv, [TimeSeriesOf], [ReadTimeSeries],
// [WriteResultSeries]) and plots it second by second in report.html
// ([TimeSeriesPlots]). Units
// follow METRICS.md: rates in requests per second, throughputs in output
// tokens per second, latencies in milliseconds, shares as fractions in [0, 1]
// (plots show shares in per cent).
package report
