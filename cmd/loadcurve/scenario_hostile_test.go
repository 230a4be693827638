package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"

	"github.com/loadcurve/loadcurve/cmd/internal/clihelp"
)

// scenarioFlags applies the scenario in body to `run` with the command line args and returns
// what --label and --num-requests then hold (set: whether set at all), or the exit code and
// stderr of a refusal. Nothing is sent: the command's action only reads its flags.
func scenarioFlags(t *testing.T, body string, args ...string) (label string, labelSet bool, n int, code int, stderr string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "s.yaml")
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := runCommand()
	cmd.Flags = clihelp.Fast(cmd.Flags) // as newApp's commands are
	cmd.HideHelpCommand = true          // and without urfave/cli's one shared help command, a data race beside other apps
	cmd.Action = func(c *cli.Context) error {
		label, labelSet, n = c.String("label"), c.IsSet("label"), c.Int("num-requests")
		return nil
	}
	var out, errb bytes.Buffer
	app := newApp(&out, &errb)
	app.Commands = []*cli.Command{cmd}
	err := app.RunContext(context.Background(), append([]string{"loadcurve", "run", "--config", path}, args...))
	var ue usageError
	switch {
	case err == nil:
		return label, labelSet, n, exitOK, errb.String()
	case errors.As(err, &ue):
		return label, labelSet, n, exitUsage, bind.Error(err).Error()
	}
	return label, labelSet, n, 1, err.Error()
}

// TestScenarioHostileFiles: what a careless or hostile scenario file did before: `label: null`
// became the label "null", a second document was ignored, a value the command line overrides
// was never checked, and 300,000 bad keys printed 17 MB of errors.
func TestScenarioHostileFiles(t *testing.T) {
	t.Parallel()
	var many strings.Builder
	for i := range 1000 {
		fmt.Fprintf(&many, "no-such-flag-%d: 1\n", i)
	}
	for _, tc := range []struct {
		name, body string
		args       []string
		wantLabel  string
		labelSet   bool
		wantN      int
		refused    []string // what the refusal says (exit 2); nil: accepted
		maxLines   int      // the refusal's lines at most (0: no bound checked)
	}{
		{name: "null is unset", body: "label: null\nnum-requests: 7\n", wantN: 7},
		{name: "tilde is unset", body: "label: ~\n", wantN: 200},
		{name: "nothing is unset", body: "label:\nnum-requests: 9\n", wantN: 9},
		{name: "quoted null is the text", body: "label: \"null\"\n", wantLabel: "null", labelSet: true, wantN: 200},
		{name: "a list holding null", body: "goodput: [ttft:500, null]\n", refused: []string{":1: --goodput: a list may not hold null"}},
		{name: "a second document", body: "num-requests: 3\n---\nrequest-rate: 100\n",
			refused: []string{":3: one document expected: a second one starts here"}},
		{name: "a second document that is not YAML", body: "num-requests: 3\n---\nrequest-rate: [1\n", refused: []string{"one document expected"}},
		{name: "a leading and a trailing separator", body: "---\nnum-requests: 4\n---\n", wantN: 4},
		{name: "an overridden key is still checked", body: "num-requests: many\n", args: []string{"--num-requests", "5"},
			refused: []string{":1: --num-requests many: not a number", "the command line overrides it"}},
		{name: "an overridden duration is still checked", body: "duration: 10\n", args: []string{"--duration", "5s"},
			refused: []string{":1: --duration 10: give a unit"}},
		{name: "an overridden good value is overridden", body: "num-requests: 3\nlabel: file\n", args: []string{"--num-requests", "5", "--label", "cli"},
			wantLabel: "cli", labelSet: true, wantN: 5},
		{name: "a thousand bad keys", body: many.String(), maxLines: 21,
			refused: []string{":1: loadcurve run has no flag --no-such-flag-0", ":20: loadcurve run has no flag --no-such-flag-19", "and 980 more problems"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			label, set, n, code, stderr := scenarioFlags(t, tc.body, tc.args...)
			if tc.refused != nil {
				if code != exitUsage {
					t.Fatalf("exit %d, want %d (label %q, n %d): %s", code, exitUsage, label, n, stderr)
				}
				for _, w := range tc.refused {
					if !strings.Contains(stderr, w) {
						t.Errorf("stderr lacks %q:\n%s", w, stderr)
					}
				}
				if lines := strings.Count(strings.TrimSpace(stderr), "\n") + 1; tc.maxLines > 0 && lines > tc.maxLines {
					t.Errorf("%d lines of errors, want at most %d", lines, tc.maxLines)
				}
				return
			}
			if code != exitOK {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			if label != tc.wantLabel || set != tc.labelSet || n != tc.wantN {
				t.Errorf("label %q (set %v), num-requests %d; want %q (set %v), %d", label, set, n, tc.wantLabel, tc.labelSet, tc.wantN)
			}
		})
	}
}
