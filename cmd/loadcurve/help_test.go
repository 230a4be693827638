package main

// Tests of what a person reads before anything runs (issue 22, "Help"): the order of the flags
// in --help, one default per flag, references that exist, suggestions for a mistyped command or
// flag, and parse errors that say the form expected.

import (
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"

	"github.com/loadcurve/loadcurve/cmd/internal/clihelp"
)

// helpLines runs `loadcurve ARGS` and returns its stdout's lines; it must exit 0 and say nothing
// on stderr.
func helpLines(t *testing.T, args ...string) []string {
	t.Helper()
	code, stdout, stderr := runCLI(t, args...)
	if code != exitOK || stderr != "" {
		t.Fatalf("loadcurve %s: exit %d, stderr %q", strings.Join(args, " "), code, stderr)
	}
	return strings.Split(stdout, "\n")
}

// lineOf is the 1-based line of lines that matches re, 0 when none does.
func lineOf(lines []string, re string) int {
	r := regexp.MustCompile(re)
	for i, l := range lines {
		if r.MatchString(l) {
			return i + 1
		}
	}
	return 0
}

// TestHelpPutsTheEssentialsFirst: run's and sweep's help list the target, the load, the
// objectives and the output first, in that order, and the embedded deployment's flags last,
// behind --help-sim; --help-all does the same with every flag. Before, urfave/cli's lexical
// order of categories put the 30 --sim-* flags first and --base-url on line 93 of run's help.
// (A heading of the ordinary help says how many more flags --help-all lists.)
func TestHelpPutsTheEssentialsFirst(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"run", "--help"}, {"sweep", "--help"}, {"run", "--help-all"}, {"sweep", "--help-all"}} {
		cmd := args[0]
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			lines := helpLines(t, args...)
			var at []int
			for _, heading := range []string{catTarget, catLoad, catObjective, catOutput, catWorkload, catSim} {
				n := lineOf(lines, `^   `+regexp.QuoteMeta(heading)+`( \(\d+ more with --help-all\))?$`)
				if n == 0 {
					t.Fatalf("no heading %q in:\n%s", heading, strings.Join(lines, "\n"))
				}
				at = append(at, n)
			}
			if !slices.IsSorted(at) {
				t.Errorf("headings target, load, objectives, output, workload, sim at lines %v: not in that order", at)
			}
			if n := lineOf(lines, `^   --base-url `); n == 0 || n > 20 {
				t.Errorf("--base-url on line %d, want within the first 20", n)
			}
			if n := lineOf(lines, `^   --sim-`); n != 0 {
				t.Errorf("a --sim-* flag on line %d of the ordinary help: %s", n, lines[n-1])
			}
			if n := lineOf(lines, `^   --help-sim `); n < at[len(at)-1] {
				t.Errorf("--help-sim on line %d, want under the last heading (line %d)", n, at[len(at)-1])
			}
			// --help-sim lists every --sim-* flag the command takes, and nothing else runs.
			sim := strings.Join(helpLines(t, cmd, "--help-sim"), "\n")
			for _, f := range commandFlags(t, cmd) {
				if n := f.Names()[0]; strings.HasPrefix(n, "sim-") && !strings.Contains(sim, "--"+n+" ") {
					t.Errorf("--help-sim does not list --%s", n)
				}
			}
			if regexp.MustCompile(`(?m)^   --(base-url|request-rate|goodput|out) `).MatchString(sim) {
				t.Errorf("--help-sim lists other flags:\n%s", sim)
			}
		})
	}
}

// TestTheOrdinaryHelpIsShort: run's and sweep's --help show the common flags, each group
// saying how many more --help-all lists and the groups it leaves out named, in well under half
// the lines of --help-all, which lists every flag but the embedded deployment's (--help-sim).
// Before, sweep's --help was 193 lines, 83 of them vLLM's flags.
func TestTheOrdinaryHelpIsShort(t *testing.T) {
	t.Parallel()
	for _, cmd := range []string{"run", "sweep"} {
		t.Run(cmd, func(t *testing.T) {
			brief := helpLines(t, cmd, "--help")
			all := helpLines(t, cmd, "--help-all")
			if len(brief) > 80 || 2*len(brief) > len(all) {
				t.Errorf("--help is %d lines, --help-all %d", len(brief), len(all))
			}
			text, every := strings.Join(brief, "\n"), strings.Join(all, "\n")
			for _, f := range commandFlags(t, cmd) {
				n := f.Names()[0]
				cf, ok := f.(cli.CategorizableFlag)
				if n == "help" || strings.HasPrefix(n, "sim-") || ok && !cf.IsVisible() {
					continue
				}
				listed := regexp.MustCompile(`(?m)^   --` + regexp.QuoteMeta(n) + `[ ,]`)
				if !listed.MatchString(every) {
					t.Errorf("--help-all does not list --%s", n)
				}
				common := ok && slices.Contains(commonFlags[cf.GetCategory()], n)
				if common != listed.MatchString(text) && n != helpAllFlag && n != helpSimFlag {
					t.Errorf("--%s (common: %v) listed in --help: %v", n, common, !common)
				}
			}
			for _, want := range []string{"   --help-all ", "more with --help-all)", "Client limits and scale-out (4)."} {
				if !strings.Contains(text, want) {
					t.Errorf("--help lacks %q", want)
				}
			}
		})
	}
}

// commandFlags are the flags of the command called name.
func commandFlags(t *testing.T, name string) []cli.Flag {
	t.Helper()
	cmd := newApp(io.Discard, io.Discard).Command(name)
	if cmd == nil {
		t.Fatalf("no command %s", name)
	}
	return cmd.Flags
}

// TestHelpGivesOneDefaultPerFlag: every flag of every command states at most one default, and
// none "(default: false)". Before, --max-concurrency read "(default: no cap) (default: 0)", as
// did every flag that said its default in its usage.
func TestHelpGivesOneDefaultPerFlag(t *testing.T) {
	t.Parallel()
	app := newApp(io.Discard, io.Discard)
	for _, cmd := range app.Commands {
		for _, f := range cmd.Flags {
			u := clihelp.Usage(f)
			if n := strings.Count(u, "(default"); n > 1 {
				t.Errorf("%s --%s states %d defaults: %s", cmd.Name, f.Names()[0], n, u)
			}
			if strings.Contains(u, "(default: false)") || strings.Contains(u, "(default: )") {
				t.Errorf("%s --%s: %s", cmd.Name, f.Names()[0], u)
			}
		}
		// The rendered help too: one flag a line when not on a terminal, so a line is a flag.
		for _, l := range helpLines(t, cmd.Name, "--help") {
			if strings.Count(l, "(default") > 1 {
				t.Errorf("%s --help: %s", cmd.Name, l)
			}
		}
	}
}

// TestHelpReferencesExist: a file the help of any command points to exists in the repository,
// and a README anchor names one of its headings. Before, the top-level help pointed to a
// METRICS.md there is none of.
func TestHelpReferencesExist(t *testing.T) {
	t.Parallel()
	root := filepath.Join("..", "..")
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	anchors := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^#+ (.+)$`).FindAllStringSubmatch(string(readme), -1) {
		anchors[githubAnchor(m[1])] = true
	}
	ref := regexp.MustCompile(`[A-Za-z0-9_./-]+\.md(#[a-z0-9-]+)?`)
	texts := []string{strings.Join(helpLines(t, "--help"), "\n")}
	for _, cmd := range newApp(io.Discard, io.Discard).Commands {
		texts = append(texts, strings.Join(helpLines(t, cmd.Name, "--help"), "\n"))
	}
	seen := 0
	for _, text := range texts {
		for _, m := range ref.FindAllStringSubmatch(text, -1) {
			seen++
			path, anchor, _ := strings.Cut(m[0], "#")
			if _, err := os.Stat(filepath.Join(root, path)); err != nil {
				t.Errorf("help points to %s, which does not exist", m[0])
			}
			if anchor != "" && path == "README.md" && !anchors[anchor] {
				t.Errorf("help points to %s, and README.md has no heading with that anchor", m[0])
			}
		}
	}
	if seen == 0 {
		t.Error("no help text points to any document: the metric definitions should be named")
	}
}

// githubAnchor is the anchor GitHub gives a heading: lower case, punctuation dropped, blanks
// as hyphens.
func githubAnchor(h string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(h)) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9':
			b.WriteRune(r)
		}
	}
	return b.String()
}

// TestMistypedCommandsAndFlagsGetSuggestions: a mistyped command or flag is a usage error
// (exit 2) that names what was probably meant; a name near nothing gets no guess. Before,
// `loadcurve swep` said "No help topic for 'swep'" with exit code 3, and a mistyped flag got
// no suggestion.
func TestMistypedCommandsAndFlagsGetSuggestions(t *testing.T) {
	t.Parallel()
	tests := []struct {
		args []string
		want string
		not  string
	}{
		{[]string{"swep"}, `no command "swep"; did you mean sweep?`, ""},
		{[]string{"rnu", "--request-rate", "3"}, `did you mean run?`, ""},
		{[]string{"help", "swep"}, `did you mean sweep?`, ""},
		{[]string{"frobnicate"}, `the commands are run, sweep,`, "did you mean"},
		{[]string{"run", "--requst-rate", "5"}, "flag provided but not defined: -requst-rate; did you mean --request-rate?", ""},
		{[]string{"sweep", "--max-teirs", "3"}, "did you mean --max-tiers?", ""},
		{[]string{"sweep", "--request-rate", "3"}, "did you mean --request-rates?", ""},
		{[]string{"report", "dir", "--golaput", "ttft:5"}, "did you mean --goodput?", ""},
		{[]string{"run", "--zzzzzzzz"}, "flag provided but not defined: -zzzzzzzz", "did you mean"},
		{[]string{"--request-rate", "5", "run"}, "--request-rate is a flag of run, sweep or schedule: give it after the command", ""},
		{[]string{"--requst-rate", "5"}, "did you mean --request-rate, a flag of run, sweep or schedule?", ""},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			code, stdout, stderr := runCLI(t, tt.args...)
			if code != exitUsage {
				t.Errorf("exit %d, want %d", code, exitUsage)
			}
			if !strings.Contains(stderr, tt.want) || tt.not != "" && strings.Contains(stderr, tt.not) {
				t.Errorf("stderr %q: want %q (and not %q)", stderr, tt.want, tt.not)
			}
			if stdout != "" || strings.Count(strings.TrimSpace(stderr), "\n") > 0 {
				t.Errorf("want one line on stderr and nothing on stdout, got stdout %q, stderr %q", stdout, stderr)
			}
		})
	}
	// The help still answers: alone, as `help`, and as `help COMMAND`.
	for _, args := range [][]string{{}, {"help"}, {"help", "sweep"}} {
		if lines := helpLines(t, args...); lineOf(lines, `^NAME:`) != 1 {
			t.Errorf("loadcurve %s: no help:\n%s", strings.Join(args, " "), strings.Join(lines, "\n"))
		}
	}
}

// TestParseErrorsSayTheExpectedForm: a value a flag cannot take is refused with the form it
// wants. Before, `--duration 10` said only "parse error" and `--base-url host:8000/v1` that it
// was not a valid URL. Every duration flag of run and sweep is tried.
func TestParseErrorsSayTheExpectedForm(t *testing.T) {
	t.Parallel()
	type tc struct {
		args []string
		want string
	}
	var tests []tc
	for _, cmd := range []string{"run", "sweep"} {
		for _, f := range commandFlags(t, cmd) {
			if _, ok := clihelp.Unwrap(f).(*cli.DurationFlag); ok {
				n := f.Names()[0]
				tests = append(tests, tc{[]string{cmd, "--" + n, "10"}, "--" + n + " 10: give a unit, e.g. 10s or 10m"})
			}
		}
	}
	if len(tests) < 10 {
		t.Fatalf("only %d duration flags found in run and sweep", len(tests))
	}
	tests = append(tests,
		tc{[]string{"run", "--duration", "ten"}, "--duration ten: not a duration; give a number with a unit, e.g. 500ms, 30s, 2m or 1h30m"},
		tc{[]string{"run", "--duration"}, "--duration needs a value: give a number with a unit"},
		tc{[]string{"run", "--num-requests", "1.5"}, "--num-requests 1.5: not a whole number; give a whole number, e.g. 200"},
		tc{[]string{"run", "--num-requests", "lots"}, "--num-requests lots: not a number; give a whole number"},
		tc{[]string{"run", "--seed", "99999999999999999999"}, "--seed 99999999999999999999: out of range"},
		tc{[]string{"run", "--ramp-up-start-rps", "fast"}, "--ramp-up-start-rps fast: not a number; give a number"},
		tc{[]string{"run", "--quiet=maybe"}, "--quiet=maybe: want true or false"},
		tc{[]string{"plan", "--profile-bucket", "5"}, "--profile-bucket 5: give a unit, e.g. 5s"},
		tc{[]string{"run", "--base-url", "host:8000/v1"}, "--base-url host:8000/v1: not a URL with a scheme; did you mean http://host:8000/v1?"},
		tc{[]string{"sweep", "--base-url", "127.0.0.1:8000/v1"}, "did you mean http://127.0.0.1:8000/v1?"},
		tc{[]string{"run", "--base-url", "ftp://host/v1"}, "--base-url ftp://host/v1: the scheme must be http or https; want e.g. http://host:8000/v1"},
		tc{[]string{"run", "--base-url", "http:///v1"}, "--base-url http:///v1: no host"},
		tc{[]string{"run", "--base-url", "http://host:port/v1"}, `--base-url: not a valid URL (invalid port ":port" after host)`},
		tc{[]string{"run", "--sim-model", "queue"}, "--sim-model queue: want batching (a continuous-batching server) or mdc"},
		tc{[]string{"bench", "--rates", "fast"}, `--rates fast: "fast" is not a number; want comma-separated request rates, e.g. 250,500,1000`},
	)
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			code, _, stderr := runCLI(t, tt.args...)
			if code != exitUsage || !strings.Contains(stderr, tt.want) {
				t.Errorf("exit %d (want %d), stderr %q: want %q", code, exitUsage, stderr, tt.want)
			}
			if strings.Contains(stderr, "parse error") {
				t.Errorf("the bare parser error reaches the user: %q", stderr)
			}
		})
	}
}

// TestBaseURLErrorsHideCredentials: a --base-url without a scheme is echoed without its user
// info or query, which may hold credentials (the library's message, which the command's check
// replaces, printed "user:secret@host…" whole).
func TestBaseURLErrorsHideCredentials(t *testing.T) {
	t.Parallel()
	for _, u := range []string{"user:s3cr3tpw@host:8000/v1?key=t0ken", "ftp://user:s3cr3tpw@host/v1?key=t0ken"} {
		code, _, stderr := runCLI(t, "run", "--base-url", u)
		if code != exitUsage || strings.Contains(stderr, "s3cr3tpw") || strings.Contains(stderr, "t0ken") {
			t.Errorf("--base-url %s: exit %d, stderr %q", u, code, stderr)
		}
	}
}

// TestScenarioFileErrorsSayTheExpectedForm: a scenario file's bad value or mistyped key is
// explained as on the command line.
func TestScenarioFileErrorsSayTheExpectedForm(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "s.yaml")
	if err := os.WriteFile(path, []byte("duration: 10\nrequst-rate: 5\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := runCLI(t, "run", "--config", path)
	for _, want := range []string{path + ":1: --duration 10: give a unit, e.g. 10s", path + ":2: loadcurve run has no flag --requst-rate; did you mean --request-rate?"} {
		if code != exitUsage || !strings.Contains(stderr, want) {
			t.Errorf("exit %d, stderr %q: want %q", code, stderr, want)
		}
	}
}
