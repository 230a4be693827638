package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestPlotFormatsFlag: --plot-formats chooses the plot files a sweep's result gets (report.html is
// written whatever it says), LOADCURVE_PLOT_FORMATS sets it for every command (TestMain sets
// svg: the flag given beats it), and a word that is not a format is refused, exit 2, naming the
// flag, before anything is sent.
func TestPlotFormatsFlag(t *testing.T) {
	t.Parallel()
	plotFiles := func(dir string) []string {
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, e := range entries {
			if ext := filepath.Ext(e.Name()); ext == ".svg" || ext == ".png" {
				out = append(out, e.Name())
			}
		}
		if !slices.Contains(namesOf(entries), "report.html") {
			t.Errorf("%s holds no report.html", dir)
		}
		return out
	}
	run := func(extra ...string) string { // a sweep: a run draws its one tier in report.html only
		dir := filepath.Join(t.TempDir(), "sweep")
		tinySweep(t, dir, append([]string{"--quiet"}, extra...)...)
		return dir
	}
	byEnv := run() // LOADCURVE_PLOT_FORMATS=svg (TestMain)
	if got := plotFiles(byEnv); len(got) == 0 || slices.ContainsFunc(got, func(n string) bool { return strings.HasSuffix(n, ".png") }) {
		t.Errorf("with LOADCURVE_PLOT_FORMATS=svg the run wrote %q", got)
	}
	both := plotFiles(run("--plot-formats", "svg,png"))
	if !slices.Contains(both, "throughput.png") || !slices.Contains(both, "throughput.svg") {
		t.Errorf("--plot-formats svg,png wrote %q", both)
	}
	derived := filepath.Join(t.TempDir(), "derived")
	mustRun(t, "report", byEnv, "--out", derived, "--plot-formats", "png", "-q")
	if got := plotFiles(derived); len(got) == 0 || slices.ContainsFunc(got, func(n string) bool { return !strings.HasSuffix(n, ".png") }) {
		t.Errorf("report --plot-formats png wrote %q", got)
	}
	none := filepath.Join(t.TempDir(), "none")
	mustRun(t, "report", byEnv, "--out", none, "--plot-formats", "none", "-q")
	if got := plotFiles(none); len(got) != 0 {
		t.Errorf("report --plot-formats none wrote %q", got)
	}

	code, _, stderr := runCLI(t, append([]string{"run", "--num-requests", "6", "--plot-formats", "svg,gif", "--out", t.TempDir()}, small...)...)
	if code != exitUsage || !strings.Contains(stderr, `--plot-formats: "gif" is not a plot format`) {
		t.Errorf("a bad format: exit %d, %s", code, stderr)
	}
}

func namesOf(entries []os.DirEntry) []string {
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	return out
}
