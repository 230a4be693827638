package vllm

import (
	"fmt"
	"io"

	"github.com/urfave/cli/v2"
)

// SaveFlags are run's own flags of vLLM's result file, which ReadSave reads (--save-result,
// --result-dir, --result-filename), under category.
func SaveFlags(category string) []cli.Flag {
	return []cli.Flag{
		&cli.BoolFlag{Name: "save-result", Category: category, Usage: "also write the result in the layout of vLLM's --save-result file (vLLM's keys only, its default statistics: ttft, tpot, itl at p99 unless --percentile-metrics or --metric-percentiles say otherwise), for tools that read vLLM's results"},
		&cli.StringFlag{Name: "result-dir", Category: category, DefaultText: "the current directory, as vLLM", Usage: "directory of the --save-result file (implies --save-result)"},
		&cli.StringFlag{Name: "result-filename", Category: category, DefaultText: "vLLM's, {label}-{rate}qps[-concurrency{N}]-{model}-{date}.json", Usage: "name of the --save-result file (implies --save-result); an existing file is replaced only with --replace, and never one of the run's own result in --out"},
	}
}

// Why a run that asked for vLLM's result file did not write it (NotWritten).
const (
	CutShort    = "the run did not run to its end"
	Interrupted = "the run was interrupted"
)

// NotWritten tells notes that the file asked for was not written, and why (CutShort,
// Interrupted); nothing when none was asked for (s nil).
func (s *Save) NotWritten(notes io.Writer, why string) {
	if s != nil {
		fmt.Fprintf(notes, "loadcurve: --save-result: no vLLM result file written: %s (summary.json says so; vLLM's layout cannot)\n", why)
	}
}
