package bench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/loadcurve/loadcurve/internal/field"
)

// Role names in the report.
const (
	NameProbe     = "probe"
	NameLoadcurve = "loadcurve"
	NameSpin      = "loadcurve+spin" // loadcurve with loadgen's sleep-then-spin pacer (Tier.Spin)
	NameProbeSpin = "probe+spin"     // the probe busy-waiting for the last Spin before each arrival
)

// Options configure a benchmark run. Start from DefaultOptions or QuickOptions.
type Options struct {
	// Exec is the command line that starts a child, without its role: the runner appends two
	// arguments, the role ("server", "probe" or "client") and the job as JSON, to be handed to
	// RunChild. For loadcurve it is {path of the loadcurve binary, "bench"}.
	Exec []string
	Env  []string // extra environment of the children (KEY=value)

	Rates         []float64     // requests/s of the Poisson schedules
	Concurrencies []int         // --max-concurrency values to run each rate at; 0 = no cap
	Duration      time.Duration // length of each schedule
	Repeats       int           // runs of each (rate, concurrency, role); the report shows medians
	Seed          int64         // schedule seed (the same for probe and client)

	Chunks   int           // content chunks (one token each) per stream
	ChunkGap time.Duration // between content chunks; 0 = as fast as possible

	Streams        int     // stalled streams to hold open for the memory figure; 0 = skip
	StreamOpenRate float64 // requests/s at which the stalled streams are opened

	LightRate     float64       // rate of the TTFT-overhead phase; 0 = skip
	LightDuration time.Duration // length of the TTFT-overhead phase

	// Spin > 0 also runs, at every rate, loadcurve with Tier.Spin = Spin and the probe
	// busy-waiting for the last Spin before each arrival.
	Spin time.Duration

	// ProfileDir, when set, receives a CPU profile of every probe and client run at a rate and a
	// heap profile of each stalled-stream run, taken while the streams are held.
	ProfileDir string
	Progress   io.Writer // one line per child run; nil = silent
}

// DefaultOptions is the full benchmark of docs/PERFORMANCE.md.
func DefaultOptions() Options {
	return Options{
		Rates: []float64{250, 500, 1000}, Concurrencies: []int{0}, Duration: 10 * time.Second, Repeats: 3, Seed: 1,
		Chunks: DefaultChunks, ChunkGap: DefaultChunkGap,
		Streams: 10_000, StreamOpenRate: 2_000,
		LightRate: 20, LightDuration: 5 * time.Second,
	}
}

// QuickOptions is a run of a few seconds for CI: small rates, one repeat, few stalled streams.
func QuickOptions() Options {
	o := DefaultOptions()
	o.Rates = []float64{100, 200}
	o.Duration = time.Second
	o.Repeats = 1
	o.Streams = 200
	o.StreamOpenRate = 1_000
	o.LightDuration = 500 * time.Millisecond
	return o
}

// The inputs of a benchmark as its errors name them (field.Error), in the benchmark's words; a
// command maps them to the way its user gives them.
const (
	FieldRates          = "benchmark rates"
	FieldConcurrency    = "benchmark concurrency cap"
	FieldDuration       = "benchmark duration"
	FieldRepeats        = "benchmark repeats"
	FieldChunks         = "chunks per response"
	FieldChunkGap       = "gap between chunks"
	FieldStreams        = "stalled streams"
	FieldStreamOpenRate = "stalled streams' open rate"
	FieldLightRate      = "light-load rate"
	FieldLightDuration  = "light-load duration"
	FieldSpin           = "server spin per chunk"
)

// Validate returns every problem of o at once.
func (o Options) Validate() []error {
	var errs []error
	if len(o.Exec) == 0 {
		errs = append(errs, errors.New("bench: no command to start the children with"))
	}
	for _, r := range o.Rates {
		if !(r > 0) || math.IsInf(r, 0) {
			errs = append(errs, field.Errorf(FieldRates, "every rate must be a finite number > 0, got %v", r))
		}
	}
	for _, c := range o.Concurrencies {
		if c < 0 {
			errs = append(errs, field.Errorf(FieldConcurrency, "want >= 0, got %d", c))
		}
	}
	if len(o.Rates) > 0 && o.Duration <= 0 {
		errs = append(errs, field.Errorf(FieldDuration, "must be > 0, got %v", o.Duration))
	}
	if o.Repeats < 1 {
		errs = append(errs, field.Errorf(FieldRepeats, "must be >= 1, got %d", o.Repeats))
	}
	if o.Chunks < 1 || o.ChunkGap < 0 {
		errs = append(errs, field.Errorf(FieldChunks, "must be >= 1 and %v >= 0, got %d and %v", field.Ref(FieldChunkGap), o.Chunks, o.ChunkGap))
	}
	if o.Streams < 0 || (o.Streams > 0 && !(o.StreamOpenRate > 0)) {
		errs = append(errs, field.Errorf(FieldStreams, "must be >= 0 and %v > 0, got %d and %v", field.Ref(FieldStreamOpenRate), o.Streams, o.StreamOpenRate))
	}
	if o.LightRate < 0 || (o.LightRate > 0 && o.LightDuration <= 0) {
		errs = append(errs, field.Errorf(FieldLightRate, "must be >= 0 and %v > 0, got %v and %v", field.Ref(FieldLightDuration), o.LightRate, o.LightDuration))
	}
	if o.Spin < 0 {
		errs = append(errs, field.Errorf(FieldSpin, "must be >= 0, got %v", o.Spin))
	}
	return errs
}

// Measurement is one child run and what the server saw during it.
type Measurement struct {
	Phase          string  `json:"phase"` // "rate", "stall" or "light"
	Role           string  `json:"role"`  // NameProbe, NameLoadcurve or NameSpin
	Rate           float64 `json:"rate"`
	MaxConcurrency int     `json:"max_concurrency"`
	Repeat         int     `json:"repeat"`

	Child  ChildResult `json:"child"`
	Server Stats       `json:"server"`

	// CPUPerChunkUs is the child's whole-process CPU time (user + system) divided by the content
	// chunks the server streamed to it.
	CPUPerChunkUs float64 `json:"cpu_us_per_chunk"`
	// RSSPerStreamKiB is (peak RSS - RSS before the streams were opened) / streams held
	// (stall phase only).
	RSSPerStreamKiB float64 `json:"rss_kib_per_stream,omitempty"`
	// HeldRSSPerStreamKiB uses the RSS read while the streams were held instead of the peak.
	HeldRSSPerStreamKiB float64 `json:"held_rss_kib_per_stream,omitempty"`
}

// Machine describes where the benchmark ran.
type Machine struct {
	GOOS       string `json:"goos"`
	GOARCH     string `json:"goarch"`
	CPUs       int    `json:"cpus"`
	GoVersion  string `json:"go_version"`
	GOMAXPROCS int    `json:"gomaxprocs"`
	// LoadAvg is the 1-minute load average (/proc/loadavg, Linux) before and after the run: on
	// a shared machine, other work competes with the benchmark for the CPU.
	LoadAvgBefore float64 `json:"load_avg_before,omitempty"`
	LoadAvgAfter  float64 `json:"load_avg_after,omitempty"`
}

// Report is everything a benchmark run measured.
type Report struct {
	Options      ReportOptions `json:"options"`
	Machine      Machine       `json:"machine"`
	Measurements []Measurement `json:"measurements"`
	Rates        []RateRow     `json:"rates"`
	Stall        []StallRow    `json:"stall,omitempty"`
	Light        []LightRow    `json:"light,omitempty"`
	Goals        []Goal        `json:"goals"`
}

// ReportOptions are the options a report was made with.
type ReportOptions struct {
	Rates          []float64 `json:"rates"`
	Concurrencies  []int     `json:"max_concurrencies"`
	DurationS      float64   `json:"duration_s"`
	Repeats        int       `json:"repeats"`
	Seed           int64     `json:"seed"`
	Chunks         int       `json:"chunks_per_stream"`
	ChunkGapMs     float64   `json:"chunk_gap_ms"`
	Streams        int       `json:"streams"`
	StreamOpenRate float64   `json:"stream_open_rate"`
	LightRate      float64   `json:"light_rate"`
	LightDurationS float64   `json:"light_duration_s"`
	SpinMs         float64   `json:"spin_ms"`
}

// Run runs the benchmark: the server in one child process, then every probe and client run in
// its own child process, one at a time.
func Run(ctx context.Context, o Options) (*Report, error) {
	if errs := o.Validate(); len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	r := &runner{o: o, hc: &http.Client{Timeout: 10 * time.Second}}
	srv, err := r.startServer(ctx)
	if err != nil {
		return nil, err
	}
	defer srv.stop()
	r.url = srv.url

	opts := ReportOptions{Rates: o.Rates, Concurrencies: o.Concurrencies, DurationS: o.Duration.Seconds(),
		Repeats: o.Repeats, Seed: o.Seed, Chunks: o.Chunks, ChunkGapMs: ms(o.ChunkGap), Streams: o.Streams,
		StreamOpenRate: o.StreamOpenRate, LightRate: o.LightRate, LightDurationS: o.LightDuration.Seconds(), SpinMs: ms(o.Spin)}
	machine := Machine{GOOS: runtime.GOOS, GOARCH: runtime.GOARCH, CPUs: runtime.NumCPU(), GoVersion: runtime.Version(),
		GOMAXPROCS: runtime.GOMAXPROCS(0), LoadAvgBefore: loadAvg()}
	var all []Measurement
	add := func(phase, role string, rate float64, conc, repeat int, job Job) error {
		m, err := r.measure(ctx, phase, role, rate, conc, repeat, job)
		if err != nil {
			return err
		}
		all = append(all, m)
		return nil
	}
	roles := []string{NameProbe, NameLoadcurve}
	if o.Spin > 0 {
		roles = append(roles, NameSpin, NameProbeSpin)
	}
	for repeat := range o.Repeats {
		// Alternate the order, so neither side always runs on a machine warmed by the other.
		order := roles
		if repeat%2 == 1 {
			order = reversed(roles)
		}
		for _, role := range order {
			if o.LightRate == 0 {
				break
			}
			if err := add("light", role, o.LightRate, 0, repeat, Job{Rate: o.LightRate, Duration: o.LightDuration}); err != nil {
				return nil, err
			}
		}
		for _, rate := range o.Rates {
			for _, conc := range o.Concurrencies {
				for _, role := range order {
					if err := add("rate", role, rate, conc, repeat, Job{Rate: rate, Duration: o.Duration, MaxConcurrency: conc}); err != nil {
						return nil, err
					}
				}
			}
		}
	}
	for _, role := range []string{NameProbe, NameLoadcurve} {
		if o.Streams == 0 {
			break
		}
		if err := add("stall", role, o.StreamOpenRate, 0, 0, Job{Rate: o.StreamOpenRate, Stall: o.Streams}); err != nil {
			return nil, err
		}
	}
	machine.LoadAvgAfter = loadAvg()
	return NewReport(opts, machine, all), nil
}

func reversed(s []string) []string {
	out := make([]string, len(s))
	for i, v := range s {
		out[len(s)-1-i] = v
	}
	return out
}

type runner struct {
	o   Options
	hc  *http.Client
	url string
}

// measure runs one child and reads the server's counts for its run.
func (r *runner) measure(ctx context.Context, phase, role string, rate float64, conc, repeat int, job Job) (Measurement, error) {
	m := Measurement{Phase: phase, Role: role, Rate: rate, MaxConcurrency: conc, Repeat: repeat}
	job.URL, job.Seed, job.MaxTokens = r.url, r.o.Seed, r.o.Chunks
	if phase == "light" {
		// Streams over in a millisecond: at light load each request reuses the idle connection
		// the preflight warmed, so TTFT holds no connection setup.
		job.URL = noGapURL(r.url)
	}
	childRole := RoleClient
	switch role {
	case NameProbe:
		childRole = RoleProbe
	case NameProbeSpin:
		childRole, job.Spin = RoleProbe, r.o.Spin
	case NameSpin:
		job.Spin = r.o.Spin
	}
	if dir := r.o.ProfileDir; dir != "" {
		name := strings.ReplaceAll(role, "+", "-")
		switch phase {
		case "rate":
			job.CPUProfile = filepath.Join(dir, fmt.Sprintf("%s-%g-c%d-r%d.cpu.pprof", name, rate, conc, repeat))
		case "stall":
			job.HeapProfile = filepath.Join(dir, fmt.Sprintf("%s-stall-%d.heap.pprof", name, job.Stall))
		}
	}
	limit := job.Duration + 2*time.Minute
	if job.Stall > 0 {
		limit = time.Duration(float64(job.Stall)/job.Rate*float64(time.Second)) + 2*time.Minute
	}
	res, err := r.runChild(ctx, childRole, job, limit)
	if err != nil {
		return m, fmt.Errorf("%s %s run at %g req/s: %w", phase, role, rate, err)
	}
	m.Child = res
	if m.Server, err = fetchStats(ctx, r.hc, r.url); err != nil {
		return m, err
	}
	if m.Server.Chunks > 0 {
		m.CPUPerChunkUs = (res.CPUUserS + res.CPUSysS) * 1e6 / float64(m.Server.Chunks)
	}
	if job.Stall > 0 && res.Held > 0 {
		if res.MaxRSS > 0 && res.BaselineRSS > 0 {
			m.RSSPerStreamKiB = float64(res.MaxRSS-res.BaselineRSS) / 1024 / float64(res.Held)
		}
		if res.HeldRSS > 0 && res.BaselineRSS > 0 {
			m.HeldRSSPerStreamKiB = float64(res.HeldRSS-res.BaselineRSS) / 1024 / float64(res.Held)
		}
	}
	if w := r.o.Progress; w != nil {
		fmt.Fprintf(w, "bench: %-5s %-15s %6g req/s conc %d run %d: server saw %d requests at %.1f/s, %d chunks, %.2f µs CPU/chunk, lag p50 %.3f ms p99 %.3f ms\n",
			phase, role, rate, conc, repeat+1, m.Server.Requests, m.Server.DeliveredRate, m.Server.Chunks, m.CPUPerChunkUs, res.LagP50Ms, res.LagP99Ms)
	}
	return m, nil
}

// runChild starts one probe or client child, waits for it and adds its rusage to the result.
func (r *runner) runChild(ctx context.Context, role string, job Job, limit time.Duration) (ChildResult, error) {
	var res ChildResult
	job.WatchStdin = true
	cfg, err := json.Marshal(job)
	if err != nil {
		return res, fmt.Errorf("encode the child's job: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	cmd := r.command(ctx, role, cfg)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return res, fmt.Errorf("start %s: %w", role, err)
	}
	var stdout bytes.Buffer
	stderr := &tailBuffer{max: 4 << 10}
	cmd.Stdout, cmd.Stderr = &stdout, stderr
	if err := cmd.Start(); err != nil {
		return res, fmt.Errorf("start %s: %w", role, err)
	}
	err = cmd.Wait()
	stdin.Close()
	if err != nil {
		return res, fmt.Errorf("%s child failed: %w: %s", role, err, strings.TrimSpace(stderr.String()))
	}
	line := lastLine(stdout.Bytes())
	if err := json.Unmarshal(line, &res); err != nil {
		return res, fmt.Errorf("%s child: result %q: %w", role, line, err)
	}
	res.CPUUserS, res.CPUSysS, res.MaxRSS = usage(cmd.ProcessState)
	return res, nil
}

func (r *runner) command(ctx context.Context, role string, cfg []byte) *exec.Cmd {
	args := append(append([]string{}, r.o.Exec[1:]...), role, string(cfg))
	cmd := exec.CommandContext(ctx, r.o.Exec[0], args...)
	cmd.Env = append(os.Environ(), r.o.Env...)
	cmd.WaitDelay = 5 * time.Second
	return cmd
}

func lastLine(b []byte) []byte {
	b = bytes.TrimSpace(b)
	if i := bytes.LastIndexByte(b, '\n'); i >= 0 {
		return b[i+1:]
	}
	return b
}

// tailBuffer keeps the last max bytes written to it (a child's stderr, for error messages).
type tailBuffer struct {
	max int
	b   []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.b = append(t.b, p...)
	if len(t.b) > t.max {
		t.b = append(t.b[:0], t.b[len(t.b)-t.max:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string { return string(t.b) }

// serverProc is the running server child.
type serverProc struct {
	cmd    *exec.Cmd
	stdin  io.Closer
	url    string
	cancel context.CancelFunc
	stderr *tailBuffer
}

// startServer starts the server child and reads the base URL it announces.
func (r *runner) startServer(ctx context.Context) (*serverProc, error) {
	cfg, err := json.Marshal(Job{Server: ServerConfig{Chunks: r.o.Chunks, Gap: r.o.ChunkGap}, WatchStdin: true})
	if err != nil {
		return nil, fmt.Errorf("encode the server's job: %w", err)
	}
	sctx, cancel := context.WithCancel(ctx)
	cmd := r.command(sctx, RoleServer, cfg)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		cancel()
		return nil, fmt.Errorf("start the server: %w", err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		cancel()
		return nil, fmt.Errorf("start the server: %w", err)
	}
	p := &serverProc{cmd: cmd, stdin: stdin, cancel: cancel, stderr: &tailBuffer{max: 4 << 10}}
	cmd.Stderr = p.stderr
	if err := cmd.Start(); err != nil {
		cancel()
		return nil, fmt.Errorf("start the server: %w", err)
	}
	lines := make(chan []byte, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		if sc.Scan() {
			lines <- append([]byte{}, sc.Bytes()...)
		}
		close(lines)
		_, _ = io.Copy(io.Discard, stdout)
	}()
	var ready serverReady
	select {
	case line, ok := <-lines:
		if !ok {
			p.stop()
			return nil, fmt.Errorf("the server child exited before announcing its address: %s", strings.TrimSpace(p.stderr.String()))
		}
		if err := json.Unmarshal(line, &ready); err != nil || ready.URL == "" {
			p.stop()
			return nil, fmt.Errorf("the server child announced %q, want {\"url\":…}", line)
		}
	case <-time.After(30 * time.Second):
		p.stop()
		return nil, errors.New("the server child did not announce its address within 30 s")
	case <-ctx.Done():
		p.stop()
		return nil, ctx.Err()
	}
	p.url = ready.URL
	return p, nil
}

// stop closes the server's stdin (it exits on end of file) and kills it if it lingers.
func (p *serverProc) stop() {
	p.stdin.Close()
	done := make(chan struct{})
	go func() { _ = p.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		p.cancel() // kills the process
		<-done
	}
	p.cancel()
}

// formatRate prints a rate without a trailing ".0".
func formatRate(r float64) string { return strconv.FormatFloat(r, 'f', -1, 64) }
