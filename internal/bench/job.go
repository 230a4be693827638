package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"strings"
	"time"

	"github.com/loadcurve/loadcurve/arrival"
)

// Child roles, the first argument after Options.Exec.
const (
	RoleServer = "server"
	RoleProbe  = "probe"
	RoleClient = "client"
)

// maxScheduleRequests bounds a child's schedule.
const maxScheduleRequests = 5_000_000

// Job is what one child process does; it travels as JSON in the child's last argument.
type Job struct {
	// Server
	Addr   string       `json:"addr,omitempty"` // listen address; "" means 127.0.0.1:0
	Server ServerConfig `json:"server"`

	// Probe and client
	URL            string        `json:"url,omitempty"`     // the bench server's base URL, ending in /v1
	Rate           float64       `json:"rate"`              // requests/s of the Poisson schedule; with Stall the constant opening rate
	Duration       time.Duration `json:"duration_ns"`       // requests are planned before this offset
	Seed           int64         `json:"seed"`              // schedule seed, the same for probe and client
	MaxTokens      int           `json:"max_tokens"`        // max_tokens of every request
	MaxConcurrency int           `json:"max_concurrency"`   // 0 = no cap
	Stall          int           `json:"stall_streams"`     // > 0: hold this many stalled streams open, sample RSS, then close them
	Spin           time.Duration `json:"spin_ns,omitempty"` // client: loadgen.Tier.Spin; probe: busy-wait this long before each arrival
	RecordsPath    string        `json:"records_path,omitempty"`
	CPUProfile     string        `json:"cpu_profile,omitempty"` // write a CPU profile of the measured phase here
	// HeapProfile, with Stall, is where a heap profile is written while the streams are held.
	HeapProfile string `json:"heap_profile,omitempty"`
	// WatchStdin makes the child stop when its stdin reaches end of file: the parent keeps a pipe
	// open and its end (or the parent's death) stops the child.
	WatchStdin bool `json:"watch_stdin,omitempty"`
}

// ChildResult is what a probe or client child reports (one JSON line on stdout). The parent adds
// the CPU and memory figures from the child's rusage.
type ChildResult struct {
	Role    string `json:"role"`
	Planned int    `json:"planned"` // requests in the schedule
	Sent    int    `json:"sent"`    // requests sent
	OK      int    `json:"ok"`      // streams read to [DONE]
	Chunks  int64  `json:"chunks"`  // probe: SSE data lines; client: output-bearing chunks in the records

	OfferedRate   float64 `json:"offered_rate"`   // (N-1)/(last-first planned offset): comparable with the server's delivered rate
	RealisedRate  float64 `json:"realised_rate"`  // N / last planned offset (the summary's realised_rate)
	DeliveredRate float64 `json:"delivered_rate"` // sent / last sent offset (the summary's delivered rate)

	LagP50Ms  float64 `json:"schedule_lag_p50_ms"`
	LagP99Ms  float64 `json:"schedule_lag_p99_ms"`
	LagMaxMs  float64 `json:"schedule_lag_max_ms"`
	TTFTP50Ms float64 `json:"ttft_p50_ms"`

	ClientBound       bool   `json:"client_bound"`
	ClientBoundReason string `json:"client_bound_reason,omitempty"`

	// Stall mode: RSS before the streams were opened and while they were held, and how many
	// streams the server was holding when the second was read.
	BaselineRSS int64 `json:"baseline_rss_bytes,omitempty"`
	HeldRSS     int64 `json:"held_rss_bytes,omitempty"`
	Held        int64 `json:"held_streams,omitempty"`
	// Where the held memory is, from the Go runtime at the same moment: heap in use, goroutine
	// stacks, and the number of goroutines.
	HeldHeap       int64 `json:"held_heap_bytes,omitempty"`
	HeldStacks     int64 `json:"held_stack_bytes,omitempty"`
	HeldGoroutines int   `json:"held_goroutines,omitempty"`

	WallS float64 `json:"wall_s"` // the measured phase

	// Filled in by the parent.
	CPUUserS float64 `json:"cpu_user_s"`
	CPUSysS  float64 `json:"cpu_sys_s"`
	MaxRSS   int64   `json:"max_rss_bytes"`
}

// serverReady is the first line a server child prints.
type serverReady struct {
	URL string `json:"url"`
}

// RunChild runs one child role with the job in config (JSON) and writes its result to stdout as
// one JSON line. The server prints its base URL as {"url":…} and serves until ctx ends (or, with
// WatchStdin, until stdin closes).
func RunChild(ctx context.Context, role string, config []byte, stdout io.Writer) error {
	var job Job
	dec := json.NewDecoder(bytes.NewReader(config))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&job); err != nil {
		return fmt.Errorf("bench %s: the job argument: %w", role, err)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if job.WatchStdin {
		go func() {
			_, _ = io.Copy(io.Discard, os.Stdin)
			cancel()
		}()
	}
	var res ChildResult
	var err error
	switch role {
	case RoleServer:
		return runServer(ctx, job, stdout)
	case RoleProbe:
		res, err = runProbe(ctx, job)
	case RoleClient:
		res, err = runClient(ctx, job)
	default:
		return fmt.Errorf("bench: unknown child role %q (want %s, %s or %s)", role, RoleServer, RoleProbe, RoleClient)
	}
	if err != nil {
		return fmt.Errorf("bench %s: %w", role, err)
	}
	res.Role = role
	b, err := json.Marshal(res)
	if err != nil {
		return fmt.Errorf("bench %s: encode result: %w", role, err)
	}
	if _, err := stdout.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("bench %s: write result: %w", role, err)
	}
	return nil
}

func runServer(ctx context.Context, job Job, stdout io.Writer) error {
	s, err := NewServer(job.Server)
	if err != nil {
		return err
	}
	addr := job.Addr
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	var werr error
	err = s.ListenAndServe(ctx, addr, func(url string) {
		b, _ := json.Marshal(serverReady{URL: url})
		_, werr = stdout.Write(append(b, '\n'))
	})
	if werr != nil {
		return fmt.Errorf("bench server: announce the address: %w", werr)
	}
	return err
}

// schedule returns the job's planned offsets: a seeded Poisson schedule over Duration, or with
// Stall, Stall offsets at a constant Rate.
func (j Job) schedule() ([]time.Duration, error) {
	if j.Stall > 0 {
		offs, err := arrival.Spec{Rate: j.Rate, Burstiness: arrival.Burstiness(math.Inf(1))}.Offsets(j.Stall, j.Seed)
		if err != nil {
			return nil, fmt.Errorf("stall schedule: %w", err)
		}
		return offs, nil
	}
	offs, err := arrival.Spec{Rate: j.Rate, Burstiness: 1}.OffsetsWithin(j.Duration, j.Seed, maxScheduleRequests)
	if err != nil {
		return nil, fmt.Errorf("schedule: %w", err)
	}
	if len(offs) == 0 {
		return nil, errors.New("schedule: no request planned: raise the rate or the duration")
	}
	return offs, nil
}

// offeredRate is (N-1)/(last-first): the rate the schedule offers between its first and last
// arrival, the quantity the server's delivered rate estimates.
func offeredRate(offs []time.Duration) float64 {
	if len(offs) < 2 || offs[len(offs)-1] <= offs[0] {
		return 0
	}
	return float64(len(offs)-1) / (offs[len(offs)-1] - offs[0]).Seconds()
}

// body is the request the probe sends (the client builds its own, of the same shape).
func (j Job) body() []byte {
	return fmt.Appendf(nil, `{"model":"bench","messages":[{"role":"user","content":"hi"}],"max_tokens":%d,"stream":true,"stream_options":{"include_usage":true}}`, j.MaxTokens)
}

// resetServer zeroes the server's counts: the measured phase starts here.
func resetServer(ctx context.Context, hc *http.Client, baseURL string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, serverRoot(baseURL)+pathReset, nil)
	if err != nil {
		return fmt.Errorf("reset the server: %w", err)
	}
	resp, err := hc.Do(req)
	if err != nil {
		return fmt.Errorf("reset the server: %w", err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		return fmt.Errorf("reset the server: HTTP %d", resp.StatusCode)
	}
	return nil
}

// fetchStats reads the server's counts.
func fetchStats(ctx context.Context, hc *http.Client, baseURL string) (Stats, error) {
	var st Stats
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, serverRoot(baseURL)+pathStats, nil)
	if err != nil {
		return st, fmt.Errorf("server stats: %w", err)
	}
	resp, err := hc.Do(req)
	if err != nil {
		return st, fmt.Errorf("server stats: %w", err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		return st, fmt.Errorf("server stats: %w", err)
	}
	return st, nil
}

// serverRoot is the scheme and host of a base URL ("http://127.0.0.1:1234/v1" → "http://127.0.0.1:1234").
func serverRoot(baseURL string) string {
	rest := strings.TrimPrefix(baseURL, "http://")
	if i := strings.IndexByte(rest, '/'); i >= 0 {
		rest = rest[:i]
	}
	return "http://" + rest
}

// stallURL is the base URL whose streams stall.
func stallURL(baseURL string) string { return prefixed(baseURL, StallPrefix) }

// noGapURL is the base URL whose streams have no gap between chunks.
func noGapURL(baseURL string) string { return prefixed(baseURL, NoGapPrefix) }

func prefixed(baseURL, prefix string) string {
	root := serverRoot(baseURL)
	return root + prefix + strings.TrimPrefix(baseURL, root)
}

// startProfile starts a CPU profile when the job asks for one; stop ends it.
func startProfile(path string) (stop func() error, err error) {
	if path == "" {
		return func() error { return nil }, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("cpu profile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("cpu profile: %w", err)
	}
	return func() error {
		pprof.StopCPUProfile()
		if err := f.Close(); err != nil {
			return fmt.Errorf("cpu profile: %w", err)
		}
		return nil
	}, nil
}

// settle collects garbage and returns freed memory to the OS, so a following RSS reading is a
// clean baseline.
func settle() {
	runtime.GC()
	debug.FreeOSMemory()
}

// holdStalled waits until the server holds want stalled streams (or ctx ends, or the time
// limit passes), lets the client read their first chunks, and records in res the RSS then, the
// number of streams held and where the Go runtime holds its memory.
func holdStalled(ctx context.Context, baseURL string, want int, limit time.Duration, heapProfile string, res *ChildResult) error {
	var held int64
	hc := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 5 * time.Second}
	deadline := time.Now().Add(limit)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		st, err := fetchStats(ctx, hc, baseURL)
		if err != nil {
			return err
		}
		held = st.Stalled
		if held >= int64(want) || time.Now().After(deadline) {
			break
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
	// The server counts a held stream just before it flushes the stream's first chunk; give the
	// flushes and the client's reads of those chunks time.
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(500 * time.Millisecond):
	}
	res.HeldRSS, res.Held = currentRSS(), held
	var mst runtime.MemStats
	runtime.ReadMemStats(&mst)
	res.HeldHeap, res.HeldStacks, res.HeldGoroutines = int64(mst.HeapInuse), int64(mst.StackInuse), runtime.NumGoroutine()
	if heapProfile != "" {
		runtime.GC() // a heap profile shows the state as of the last collection
		if err := writeHeapProfile(heapProfile); err != nil {
			return err
		}
	}
	return nil
}

func writeHeapProfile(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("heap profile: %w", err)
	}
	if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
		f.Close()
		return fmt.Errorf("heap profile: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("heap profile: %w", err)
	}
	return nil
}
