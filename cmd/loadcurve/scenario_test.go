package main

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"

	"github.com/loadcurve/loadcurve/curve/result"
	"github.com/loadcurve/loadcurve/measure/records"
)

// TestScenarioRoundTrip: a scenario file sets the flags it names, the command line overrides
// it, and the resolved scenario written with the result runs the same thing again.
func TestScenarioRoundTrip(t *testing.T) {
	t.Parallel()
	scenario := filepath.Join(t.TempDir(), "staging.yaml")
	body := `# a small staging run
num-requests: 12
request-rate: 50
random-input-len: 16
random-output-len: 4
goodput: [ttft:500, tpot:50]
seed: 7
api-key: sk-scenario-secret-123456
quiet: true
`
	if err := os.WriteFile(scenario, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	first := filepath.Join(t.TempDir(), "first")
	// The command line overrides the file's request rate.
	if code, _, stderr := runCLI(t, "run", "--config", scenario, "--request-rate", "40", "--out", first); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	f, err := records.ReadFile(filepath.Join(first, "records.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Records) != 12 || f.Header.Seed != 7 || f.Tiers[0].RequestRate != 40 {
		t.Fatalf("%d records, seed %d, rate %v: the scenario or the override was not applied", len(f.Records), f.Header.Seed, f.Tiers[0].RequestRate)
	}
	resolved, err := os.ReadFile(filepath.Join(first, result.ScenarioName))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"num-requests: 12", "request-rate: 40", `- "ttft:500"`, "seed: 7", "Left out (secrets): --api-key"} {
		if !strings.Contains(string(resolved), want) {
			t.Errorf("the resolved scenario lacks %q:\n%s", want, resolved)
		}
	}
	if strings.Contains(string(resolved), "sk-scenario") {
		t.Errorf("the resolved scenario shows the API key:\n%s", resolved)
	}
	// The per-second time series come with the result, and report reproduces them from the
	// records alone, byte for byte.
	series, err := os.ReadFile(filepath.Join(first, "timeseries_tier00.csv"))
	if err != nil || !strings.HasPrefix(string(series), "t_s,offered,sent,completed") || strings.Count(string(series), "\n") < 2 {
		t.Fatalf("timeseries_tier00.csv: %v\n%s", err, series)
	}
	if again, _ := os.ReadFile(filepath.Join(reportTo(t, first), "timeseries_tier00.csv")); string(again) != string(series) {
		t.Errorf("report did not reproduce the time series:\n%s\n---\n%s", series, again)
	}
	// Run again from the resolved scenario: the same workload and schedule.
	again := filepath.Join(t.TempDir(), "again")
	if code, _, stderr := runCLI(t, "run", "--config", filepath.Join(first, result.ScenarioName), "--out", again); code != exitOK {
		t.Fatalf("rerun: exit %d: %s", code, stderr)
	}
	g, err := records.ReadFile(filepath.Join(again, "records.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if g.Header.WorkloadFingerprint != f.Header.WorkloadFingerprint || g.Tiers[0].RequestRate != 40 || len(g.Records) != 12 {
		t.Errorf("the rerun differs: fingerprint %s vs %s, rate %v", g.Header.WorkloadFingerprint, f.Header.WorkloadFingerprint, g.Tiers[0].RequestRate)
	}
}

// TestScenarioErrors: a bad scenario is refused with its file and line, whole, before anything
// is sent.
func TestScenarioErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, body string
		want       []string
	}{
		{"not a mapping", "- 1\n- 2\n", []string{":1: want a mapping"}},
		{"unknown flag", "num-requests: 3\nrequest-rat: 4\n", []string{":2: loadcurve run has no flag --request-rat"}},
		{"twice", "seed: 1\nseed: 2\n", []string{":2: --seed is given twice (first on line 1)"}},
		{"bad value", "num-requests: many\n", []string{":1: --num-requests many: not a number; give a whole number, e.g. 200"}},
		{"nested", "goodput: {ttft: 5}\n", []string{":1: --goodput: want a value or a list of values, got a mapping"}},
		{"itself", "config: other.yaml\n", []string{":1: a scenario cannot name another scenario"}},
		{"several at once", "seed: x\nnope: 1\n", []string{":1: --seed", ":2: loadcurve run has no flag --nope"}},
		{"not YAML", "seed: [1\n", []string{"--config"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "s.yaml")
			if err := os.WriteFile(path, []byte(tc.body), 0o644); err != nil {
				t.Fatal(err)
			}
			code, _, stderr := runCLI(t, "run", "--config", path, "--base-url", "http://127.0.0.1:9/v1", "--model", "m")
			if code != exitUsage {
				t.Errorf("exit %d, want %d: %s", code, exitUsage, stderr)
			}
			for _, w := range tc.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, stderr)
				}
			}
		})
	}
}

// TestREADMEScenarios: every scenario in the README names only flags its command has, with
// values they accept (each block's first line says which command reads it).
func TestREADMEScenarios(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	blocks := strings.Split(string(b), "```yaml\n")[1:]
	if len(blocks) < 3 {
		t.Fatalf("%d scenario blocks in the README, want 3", len(blocks))
	}
	for _, blk := range blocks {
		body, _, _ := strings.Cut(blk, "```")
		first, _, _ := strings.Cut(body, "\n")
		_, cmdline, ok := strings.Cut(first, "loadcurve ")
		if !ok {
			t.Fatalf("a README scenario does not say which command reads it: %q", first)
		}
		command := strings.Fields(cmdline)[0]
		path := filepath.Join(t.TempDir(), "s.yaml")
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		// The command's own flags and Before, with an action that runs nothing.
		var found *cli.Command
		for _, c := range newApp(io.Discard, io.Discard).Commands {
			if c.Name == command {
				found = c
			}
		}
		if found == nil {
			t.Fatalf("no command %q", command)
		}
		// No help command, as newApp's: urfave/cli shares one, and writes to it as each app
		// runs, a data race beside the package's other apps.
		app := &cli.App{Name: "loadcurve", HideHelpCommand: true, Commands: []*cli.Command{{Name: command, Flags: found.Flags, Before: found.Before,
			HideHelpCommand: true, Action: func(*cli.Context) error { return nil }}}}
		if err := app.Run([]string{"loadcurve", command, "--config", path}); err != nil {
			t.Errorf("%s scenario %q: %v", command, first, err)
		}
	}
}

// TestScenarioKeepsVLLMGoodputForm: in vLLM's form, --goodput ttft:500 tpot:50, the pairs after
// the first arrive as positional arguments; the resolved scenario holds them all, so a rerun from
// it judges by the same objectives (it kept only ttft:500).
func TestScenarioKeepsVLLMGoodputForm(t *testing.T) {
	t.Parallel()
	out := filepath.Join(t.TempDir(), "r")
	if code, _, stderr := runCLI(t, "run", "--num-requests", "4", "--request-rate", "inf", "--random-input-len", "8",
		"--random-output-len", "4", "--quiet", "--out", out, "--goodput", "ttft:500", "tpot:50"); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	resolved, err := os.ReadFile(filepath.Join(out, result.ScenarioName))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`- "ttft:500"`, `- "tpot:50"`} {
		if !strings.Contains(string(resolved), want) {
			t.Errorf("the resolved scenario lacks %q:\n%s", want, resolved)
		}
	}
	again := filepath.Join(t.TempDir(), "again")
	if code, _, stderr := runCLI(t, "run", "--config", filepath.Join(out, result.ScenarioName), "--out", again); code != exitOK {
		t.Fatalf("rerun: exit %d: %s", code, stderr)
	}
	f, err := records.ReadFile(filepath.Join(again, "records.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if o := f.Header.Settings; o == nil || !strings.Contains(o.Objectives, "ttft:500") || !strings.Contains(o.Objectives, "tpot:50") {
		t.Errorf("the rerun's settings: %+v, want objectives ttft:500 and tpot:50", o)
	}
}
