package main

import (
	"github.com/urfave/cli/v2"

	"github.com/loadcurve/loadcurve/report"
)

// plotFormatsFlag is --plot-formats, for the commands that write a result's plots (run, sweep,
// report, compare), in category.
func plotFormatsFlag(category string) cli.Flag {
	return &cli.StringFlag{Name: "plot-formats", Category: category, Value: report.DefaultPlotFormats.String(), EnvVars: []string{"LOADCURVE_PLOT_FORMATS"},
		Usage: "files written of every plot with --out: svg, png, svg,png or none (report.html draws its own; the PNGs are most of the time spent writing a result)"}
}

// plotFormats reads --plot-formats.
func plotFormats(c *cli.Context) (report.PlotFormats, error) {
	f, err := report.ParsePlotFormats(c.String("plot-formats"))
	if err != nil {
		return f, usagef("--plot-formats: %v", err)
	}
	return f, nil
}
