package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/loadcurve/loadcurve/cmd/internal/stopsignal"
	"github.com/loadcurve/loadcurve/measure/records"
)

// TestMain lets the test binary act as the loadcurve command when asked, so that signal tests
// can run the real process without building it.
//
// The end-to-end tests that mostly wait on the embedded deployment's real time run in parallel,
// three at a time unless -parallel says otherwise: on two cores the package's tests under -race
// kept about one core busy while its sequential tests waited, and took over ten minutes in CI
// beside the other packages. (Four at a time slowed the in-process deployment past the
// objectives of the tests that measure its accuracy; those run alone, before.)
func TestMain(m *testing.M) {
	if os.Getenv("LOADCURVE_TEST_AS_MAIN") == "1" {
		os.Exit(run(os.Args, os.Stdout, os.Stderr))
	}
	flag.Parse()
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	if !given {
		_ = flag.Set("test.parallel", "3")
	}
	// Results' plots as SVG only (the tests that read PNGs ask for them): under -race
	// rasterising and deflating PNGs took more than half of the sequential tests' time.
	if _, ok := os.LookupEnv("LOADCURVE_PLOT_FORMATS"); !ok {
		_ = os.Setenv("LOADCURVE_PLOT_FORMATS", "svg")
	}
	os.Exit(m.Run())
}

// startCLI starts the CLI as a child process.
func startCLI(t *testing.T, args ...string) (*exec.Cmd, *bytes.Buffer) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "LOADCURVE_TEST_AS_MAIN=1")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd, &out
}

// waitForRecords waits until records.jsonl holds at least n request lines.
func waitForRecords(t *testing.T, path string, n int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if f, err := records.ReadFile(path); err == nil && len(f.Records) >= n {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("%s never held %d records", path, n)
}

func exitCode(err error) int {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	if err == nil {
		return 0
	}
	return -1
}

var slowRun = []string{"run", "--num-requests", "400", "--request-rate", "20", "--random-input-len", "32", "--random-output-len", "8", "--quiet"}

func TestSIGINTStopsAndWritesEverything(t *testing.T) {
	dir := t.TempDir()
	cmd, out := startCLI(t, append(slowRun, "--out", dir)...)
	waitForRecords(t, filepath.Join(dir, "records.jsonl"), 10)
	start := time.Now()
	cmd.Process.Signal(syscall.SIGINT)
	err := cmd.Wait()
	if code := exitCode(err); code != exitSignaled {
		t.Fatalf("exit %d, want %d\n%s", code, exitSignaled, out)
	}
	// In-flight requests are canceled, not awaited: stopping takes far less than the 20 s the
	// schedule had left.
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("stopping took %v", d)
	}
	stoppedWhole(t, dir, "after SIGINT")
}

func TestSecondSIGINTExitsAtOnce(t *testing.T) {
	dir := t.TempDir()
	// Long outputs (~30 s each) keep requests in flight: the first signal's orderly stop still has
	// to cancel them; the second must not wait for anything.
	cmd, out := startCLI(t, "run", "--num-requests", "50", "--request-rate", "20", "--random-input-len", "32",
		"--random-output-len", "2000", "--quiet", "--out", dir)
	waitForFile(t, filepath.Join(dir, "records.jsonl"))
	time.Sleep(300 * time.Millisecond)
	cmd.Process.Signal(syscall.SIGINT)
	time.Sleep(stopsignal.ForceAfter + 100*time.Millisecond) // a second press, not the same signal twice
	cmd.Process.Signal(syscall.SIGINT)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if code := exitCode(err); code != exitSignaled {
			t.Errorf("exit %d, want %d\n%s", code, exitSignaled, out)
		}
	case <-time.After(10 * time.Second):
		cmd.Process.Kill()
		t.Fatal("a second SIGINT did not exit")
	}
}

// TestRepeatedSIGTERMIsOneStop: GNU timeout sends SIGTERM to the process, then to its group, a
// moment apart; signals that repeat a stop request within stopsignal.ForceAfter (and every SIGTERM) are the
// same request: the run stops in order, and its records and summary are whole (under `timeout`,
// the usual CI pattern, half of such runs once lost them).
func TestRepeatedSIGTERMIsOneStop(t *testing.T) {
	dir := t.TempDir()
	cmd, out := startCLI(t, append(slowRun, "--out", dir)...)
	waitForRecords(t, filepath.Join(dir, "records.jsonl"), 10)
	cmd.Process.Signal(syscall.SIGTERM)
	cmd.Process.Signal(syscall.SIGTERM)
	cmd.Process.Signal(syscall.SIGINT) // the group's copy of a Ctrl-C, within stopsignal.ForceAfter
	time.Sleep(stopsignal.ForceAfter + 100*time.Millisecond)
	cmd.Process.Signal(syscall.SIGTERM) // SIGTERM never forces
	if code := exitCode(cmd.Wait()); code != exitSignaled {
		t.Fatalf("exit %d, want %d\n%s", code, exitSignaled, out)
	}
	if strings.Contains(out.String(), "exiting now") {
		t.Errorf("repeated stop signals forced an exit:\n%s", out)
	}
	stoppedWhole(t, dir, "after repeated SIGTERMs")
}

func TestKill9LosesAtMostTheLastFlushInterval(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "records.jsonl")
	cmd, _ := startCLI(t, append(slowRun, "--out", dir)...)
	waitForRecords(t, path, 20)
	time.Sleep(records.DefaultFlushInterval + 500*time.Millisecond)
	cmd.Process.Kill()
	cmd.Wait()
	f, err := records.ReadFile(path)
	if err != nil {
		t.Fatalf("report cannot read the file a kill -9 left: %v", err)
	}
	// What this checks: the file a kill -9 leaves (possibly with a cut last line) is readable, keeps
	// what was on disk, and report works on it. That records reach the disk within one flush
	// interval even when nothing else is written is records' TestAutoFlush... test.
	if len(f.Records) < 20 {
		t.Errorf("%d records survived, 20 were on disk before the kill", len(f.Records))
	}
	if code, _, stderr := runCLI(t, "report", dir, "-q"); code != exitOK {
		t.Errorf("report after kill -9: exit %d: %s", code, stderr)
	}
}

func waitForFile(t *testing.T, path string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if _, err := os.Stat(path); err == nil {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("%s never appeared", path)
}

// TestOutOfFileDescriptors runs the real process with 150 file descriptors against a server that
// holds every stream for a second, and a burst of 300 requests: the dials beyond the limit fail.
// They must be recorded as the client's (not stream errors of the server), the tier marked
// client-bound, and the summary still written.
func TestOutOfFileDescriptors(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh to set the child's limit")
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/models") {
			_, _ = io.WriteString(w, `{"object":"list","data":[{"id":"m","object":"model"}]}`)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, `data: {"choices":[{"index":0,"delta":{"content":"hi"}}]}`+"\n\n")
		w.(http.Flusher).Flush()
		select {
		case <-time.After(time.Second):
		case <-r.Context().Done():
			return
		}
		_, _ = io.WriteString(w, "data: [DONE]\n\n")
	}))
	defer srv.Close()
	dir := t.TempDir()
	cmd := exec.Command("sh", "-c", `ulimit -n 150 && exec "$0" "$@"`, os.Args[0], "run", "--base-url", srv.URL+"/v1", "--model", "m",
		"--request-rate", "inf", "--num-requests", "300", "--timeout", "20s", "--server-metrics", "off", "--out", dir, "--quiet")
	cmd.Env = append(os.Environ(), "LOADCURVE_TEST_AS_MAIN=1")
	out, err := cmd.CombinedOutput()
	if exitCode(err) != exitOK {
		t.Fatalf("exit %d:\n%s", exitCode(err), out)
	}
	if !strings.Contains(string(out), "this process may open 150 files") {
		t.Errorf("the limit was not said up front:\n%s", out)
	}
	f, err := records.ReadFile(filepath.Join(dir, "records.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	client, counts := 0, map[records.Outcome]int{}
	for _, r := range f.Records {
		counts[r.Outcome]++
		if strings.HasPrefix(r.Error, records.ClientResourcesPrefix) {
			client++
		} else if r.Outcome == records.StreamError {
			t.Errorf("a stream error blamed on the server: %q", r.Error)
		}
	}
	if client == 0 || counts[records.OK] == 0 {
		t.Fatalf("outcomes %v, %d of the client's: want dials that failed for lack of descriptors and some ok", counts, client)
	}
	var sum map[string]any
	b, err := os.ReadFile(filepath.Join(dir, "summary.json"))
	if err != nil {
		t.Fatalf("no summary: %v\n%s", err, out)
	}
	if err := json.Unmarshal(b, &sum); err != nil {
		t.Fatal(err)
	}
	if sum["client_bound"] != true || !strings.Contains(fmt.Sprint(sum["client_bound_reason"]), "client's own resources") {
		t.Errorf("client_bound %v: %v", sum["client_bound"], sum["client_bound_reason"])
	}
}

// TestRecordsFileFullMidRun runs the real process on a disk that fills up during its tier, two
// ways: with a 50 KiB limit on the size of a file (ulimit -f 100: every write past it fails, as
// on a full disk, with EFBIG; no privilege needed), and, where this process may mount one (as
// root), on a real tmpfs of 128 KiB that fills up (ENOSPC). records.jsonl fails part-way
// through the tier. The tier must still run to its end, its summary be printed from the records
// in memory, the exit status (1) and message say the records file is incomplete; and what is
// left is whole and says what it is (issue 37: scenario.yaml was missing, a 0-byte
// .summary.json.tmp was left and report said "the run was probably killed"): records.jsonl
// reads, ending with the line that names the failed write, scenario.yaml is there, no
// temporary file is, every result file written is whole, and report says the file was cut
// short by a failed write, not by a kill.
func TestRecordsFileFullMidRun(t *testing.T) {
	t.Parallel() // two child processes, waited for
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh to set the child's limit")
	}
	run := []string{"run", "--num-requests", "600", "--request-rate", "300", "--random-input-len", "32", "--random-output-len", "16", "--quiet"}
	tests := []struct {
		name  string
		setup func(t *testing.T) (dir string, shell string) // the --out directory, what sh runs first
	}{
		{"a file-size limit of 50 KiB", func(t *testing.T) (string, string) {
			return filepath.Join(t.TempDir(), "out"), "ulimit -f 100"
		}},
		{"a tmpfs of 128 KiB", func(t *testing.T) (string, string) {
			mnt := t.TempDir()
			if err := exec.Command("mount", "-t", "tmpfs", "-o", "size=128k", "tmpfs", mnt).Run(); err != nil {
				t.Skipf("cannot mount a tmpfs here (%v): the file-size limit stands in for a full disk", err)
			}
			t.Cleanup(func() { _ = exec.Command("umount", mnt).Run() })
			return filepath.Join(mnt, "out"), "true"
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir, shell := tc.setup(t)
			cmd := exec.Command("sh", append([]string{"-c", shell + ` && exec "$0" "$@"`, os.Args[0]}, append(run, "--out", dir)...)...)
			cmd.Env = append(os.Environ(), "LOADCURVE_TEST_AS_MAIN=1")
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			if exitCode(err) != exitFailure {
				t.Fatalf("exit %d, want %d\n%s", exitCode(err), exitFailure, stderr.String())
			}
			if !strings.Contains(stderr.String(), "the records file is incomplete") {
				t.Errorf("stderr does not say the records file is incomplete:\n%s", stderr.String())
			}
			if !regexp.MustCompile(`Planned / issued requests: +600 / 600`).MatchString(stdout.String()) ||
				!strings.Contains(stdout.String(), "Successful requests:") {
				t.Errorf("the tier's result was not printed whole:\n%s", stdout.String())
			}
			f, err := records.ReadFile(filepath.Join(dir, "records.jsonl"))
			if err != nil {
				t.Fatalf("records.jsonl does not read: %v", err)
			}
			if f.Cut == nil || f.Cut.Tier == nil || *f.Cut.Tier != 0 || len(f.Records) == 0 || len(f.Records) >= 600 {
				t.Errorf("records.jsonl: %d records, cut %+v: want some of tier 0's, and the line saying it was cut", len(f.Records), f.Cut)
			}
			if _, err := os.Stat(filepath.Join(dir, "scenario.yaml")); err != nil {
				t.Errorf("no scenario.yaml: %v", err)
			}
			wholeFiles(t, dir)
			code, _, rstderr := runCLI(t, "report", dir)
			if code != exitOK || !strings.Contains(rstderr, "cut short by a failed write") || strings.Contains(rstderr, "killed") {
				t.Errorf("report: exit %d, stderr:\n%s", code, rstderr)
			}
		})
	}
}

// wholeFiles checks that dir holds no temporary file and that each result file it holds is whole:
// its JSON decodes, its HTML and SVG end as such documents do.
func wholeFiles(t *testing.T, dir string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		name := e.Name()
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		switch ext := filepath.Ext(name); {
		case strings.HasSuffix(name, ".tmp"):
			t.Errorf("a temporary file is left: %s (%d bytes)", name, len(b))
		case ext == ".json" && !json.Valid(b):
			t.Errorf("%s is not whole JSON (%d bytes)", name, len(b))
		case ext == ".html" && !bytes.HasSuffix(bytes.TrimSpace(b), []byte("</html>")):
			t.Errorf("%s is cut (%d bytes)", name, len(b))
		case ext == ".svg" && !bytes.HasSuffix(bytes.TrimSpace(b), []byte("</svg>")):
			t.Errorf("%s is cut (%d bytes)", name, len(b))
		}
	}
}

// TestUnderGNUTimeout runs loadcurve as CI scripts do, under GNU coreutils' timeout, which sends
// SIGTERM to the process and then to its process group: the run stops in order, and its records
// (one line per planned request) and summary are whole. (In issue 23's report, half of such
// runs lost them.)
func TestUnderGNUTimeout(t *testing.T) {
	t.Parallel() // mostly waiting for timeout
	timeout, err := exec.LookPath("timeout")
	if err != nil {
		t.Skip("no GNU timeout on this machine")
	}
	dir := t.TempDir()
	// 400 requests at 20 req/s take 20 s; timeout stops the run after 6 s (time enough for a
	// -race binary to start sending on a busy machine), and --preserve-status passes
	// loadcurve's own exit code on.
	cmd := exec.Command(timeout, "--preserve-status", "-s", "TERM", "6", os.Args[0])
	cmd.Args = append(cmd.Args, append(slowRun, "--out", dir)...)
	cmd.Env = append(os.Environ(), "LOADCURVE_TEST_AS_MAIN=1")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); exitCode(err) != exitSignaled {
		t.Fatalf("exit %d (%v), want %d\n%s", exitCode(err), err, exitSignaled, out.String())
	}
	if strings.Contains(out.String(), "exiting now") {
		t.Errorf("timeout's two SIGTERMs forced an exit:\n%s", out.String())
	}
	stoppedWhole(t, dir, "under timeout")
}

// stoppedWhole checks the result a run stopped by a signal left in dir (when names the stop): a
// record for each of its 400 planned requests and a summary.
func stoppedWhole(t *testing.T, dir, when string) {
	t.Helper()
	f, err := records.ReadFile(filepath.Join(dir, "records.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Records) != 400 {
		t.Errorf("%d records, want one per planned request (400)", len(f.Records))
	}
	if _, err := os.Stat(filepath.Join(dir, "summary.json")); err != nil {
		t.Errorf("no summary %s: %v", when, err)
	}
}
