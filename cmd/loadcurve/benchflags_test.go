package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loadcurve/loadcurve/measure/records"
	"github.com/loadcurve/loadcurve/workloads"
)

// TestBenchErrorsNameTheirFlags: package bench names its inputs in its own words; the command
// line's messages name each by its flag, once, and the other inputs it mentions too.
func TestBenchErrorsNameTheirFlags(t *testing.T) {
	t.Parallel()
	code, _, stderr := runCLI(t, "bench", "--repeats", "0", "--chunks", "0", "--spin", "-1ms", "--streams", "-1")
	if code != exitUsage {
		t.Fatalf("exit %d, want %d: %s", code, exitUsage, stderr)
	}
	for _, want := range []string{"--repeats must be >= 1, got 0", "--chunks must be >= 1 and --chunk-gap >= 0",
		"--spin must be >= 0, got -1ms", "--streams must be >= 0 and --stream-open-rate > 0"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	if strings.Contains(stderr, "benchmark repeats") || strings.Contains(stderr, "\x00") {
		t.Errorf("a domain name or a reference marker reached the user:\n%s", stderr)
	}
}

// TestThinkTimeOnASessionFileIsRefused: a file's sessions carry their own think times, which a run
// follows; --think-time with such a file would be ignored (issue 26 found it silently was), so it
// is refused before anything starts, saying what the run follows instead.
func TestThinkTimeOnASessionFileIsRefused(t *testing.T) {
	t.Parallel()
	file := filepath.Join("..", "..", "workloads", "testdata", "sessions.jsonl")
	code, _, stderr := runCLI(t, "run", "--workload", file, "--think-time", "2s", "--num-requests", "2", "--quiet")
	if code != exitUsage || !strings.Contains(stderr, "--think-time: the sessions of") || !strings.Contains(stderr, "think_ms") {
		t.Errorf("exit %d, want %d with the reason:\n%s", code, exitUsage, stderr)
	}
	// Without the flag the file's sessions run as they are.
	if code, _, stderr := runCLI(t, "run", "--workload", file, "--num-requests", "1", "--quiet", "--out", t.TempDir()); code != exitOK {
		t.Errorf("the file without --think-time: exit %d: %s", code, stderr)
	}
}

// TestRecordsNameSessionsByTheFilesIDs: a file's sessions are numbered 1..N in the records (the
// metrics group by number) and keep the file's own id beside it, so a record can be traced back
// to its conversation (issue 26 found only the numbers).
func TestRecordsNameSessionsByTheFilesIDs(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := filepath.Join("..", "..", "workloads", "testdata", "sessions.jsonl")
	if code, _, stderr := runCLI(t, "run", "--workload", file, "--request-rate", "inf", "--quiet", "--out", dir); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	f, err := records.ReadFile(filepath.Join(dir, "records.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	set, err := workloads.LoadJSONL(file)
	if err != nil {
		t.Fatal(err)
	}
	want := map[[2]int]string{}
	for _, r := range set.Requests {
		want[[2]int{r.Session, r.Turn}] = r.SessionID
	}
	named := 0
	for _, r := range f.Records {
		id, ok := want[[2]int{r.Session, r.Turn}]
		if !ok || r.SessionID != id {
			t.Errorf("session %d turn %d: session_id %q, want the file's %q", r.Session, r.Turn, r.SessionID, id)
		}
		if id != "" {
			named++
		}
	}
	if named == 0 {
		t.Fatalf("no record of a named session among %d", len(f.Records))
	}
}

// TestBenchCommandEndToEnd runs `loadcurve bench` as a process at a tiny scale: the command
// re-executes its own binary (here this test binary, acting as loadcurve) as the server, the
// probe and the loadcurve client, and writes its report as JSON. It checks the plumbing that
// package bench's TestRunEndToEnd cannot: the command's flags reach the runner, its children
// are started as `loadcurve bench ROLE JOB` and answer, and the JSON file and stdout agree. It
// asserts counts, never a timing.
func TestBenchCommandEndToEnd(t *testing.T) {
	t.Parallel()
	js := filepath.Join(t.TempDir(), "bench.json")
	cmd := exec.Command(os.Args[0], "bench", "--rates", "50", "--duration", "200ms", "--repeats", "1", "--chunks", "3", "--chunk-gap", "1ms",
		"--streams", "10", "--stream-open-rate", "500", "--light-rate", "20", "--light-duration", "200ms", "--format", "json", "--json", js, "--quiet")
	// Under -race each child would sleep 1 s at exit (ThreadSanitizer's atexit_sleep_ms).
	cmd.Env = append(os.Environ(), "LOADCURVE_TEST_AS_MAIN=1", "GORACE=atexit_sleep_ms=0")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("loadcurve bench: %v\n%s", err, stderr.String())
	}
	var rep struct {
		Rates []struct {
			Role           string  `json:"role"`
			Planned        float64 `json:"planned"`
			ServerRequests float64 `json:"server_requests"`
		} `json:"rates"`
		Stall []struct {
			Streams int64 `json:"streams_held"`
		} `json:"stall"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		t.Fatalf("stdout is not the JSON report: %v\n%s", err, stdout.String())
	}
	if len(rep.Rates) != 2 || len(rep.Stall) != 2 {
		t.Fatalf("want the probe's and loadcurve's rows at one rate and stalled: %+v", rep)
	}
	for _, r := range rep.Rates {
		if r.Planned < 5 || r.ServerRequests != r.Planned {
			t.Errorf("%s: planned %v, the server saw %v", r.Role, r.Planned, r.ServerRequests)
		}
	}
	for _, s := range rep.Stall {
		if s.Streams != 10 {
			t.Errorf("stalled streams held: %d, want 10", s.Streams)
		}
	}
	file, err := os.ReadFile(js)
	if err != nil || !bytes.Equal(bytes.TrimSpace(file), bytes.TrimSpace(stdout.Bytes())) {
		t.Errorf("--json %s differs from stdout (%v)", js, err)
	}
}
