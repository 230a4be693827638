// Command stalledstreams measures the peak memory of loadcurve against a hostile server whose
// every stream makes the client hold data and then stalls (issue 37): it serves on loopback, in
// its own process, and runs `loadcurve run` as a child at --max-concurrency N --request-rate
// inf, N requests, for each N asked; it prints the child's peak RSS (getrusage of the exited
// child) and the outcomes of the records it wrote.
//
//	go build -o /tmp/loadcurve ./cmd/loadcurve
//	go run ./scripts/stalledstreams -bin /tmp/loadcurve -streams 200,500 -mode line -size 7500000 -timeout 40s -repeat 3
//
// With -repeat N every number of streams runs N times, a line each, then the median peak RSS.
// Modes: line (each stream sends "data: " and size bytes with no newline, then stalls), data
// (size bytes of short data lines that never make a payload, then a stall), header (a response
// whose header never ends, size bytes long). The preflight gets a well-formed answer.
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/loadcurve/loadcurve/measure/records"
)

func main() {
	bin := flag.String("bin", "", "the loadcurve binary to measure (required)")
	streams := flag.String("streams", "200,500", "comma-separated numbers of streams, one run each")
	mode := flag.String("mode", "line", "line, data or header")
	size := flag.Int("size", 7_500_000, "bytes each stream sends before it stalls")
	timeout := flag.Duration("timeout", 40*time.Second, "loadcurve's --timeout")
	repeat := flag.Int("repeat", 1, "runs of each number of streams")
	flag.Parse()
	if *bin == "" {
		fmt.Fprintln(os.Stderr, "stalledstreams: -bin is required")
		os.Exit(2)
	}
	if err := run(*bin, *streams, *mode, *size, *timeout, max(*repeat, 1)); err != nil {
		fmt.Fprintln(os.Stderr, "stalledstreams:", err)
		os.Exit(1)
	}
}

func run(bin, streams, mode string, size int, timeout time.Duration, repeat int) error {
	if mode != "line" && mode != "data" && mode != "header" {
		return fmt.Errorf("-mode %q: want line, data or header", mode)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	h := &hostile{mode: mode, size: size, stop: make(chan struct{})}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(l) }()
	defer srv.Close()
	defer close(h.stop)
	base := "http://" + l.Addr().String() + "/v1"
	fmt.Printf("mode %s, %d bytes a stream, --timeout %v\n\n", mode, size, timeout)
	fmt.Println("| streams | peak RSS | wall | records | outcomes | exit |")
	fmt.Println("| ---: | ---: | ---: | ---: | --- | ---: |")
	for _, f := range strings.Split(streams, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return fmt.Errorf("-streams: %q is not a number of streams", f)
		}
		var peaks []float64
		for range repeat {
			peak, err := measure(bin, base, n, timeout)
			if err != nil {
				return err
			}
			peaks = append(peaks, peak)
		}
		if repeat > 1 {
			sort.Float64s(peaks)
			fmt.Printf("| %d | **%.1f MiB** (median of %d) | | | | |\n", n, peaks[len(peaks)/2], repeat)
		}
	}
	return nil
}

// measure runs loadcurve against base with n streams, prints its line of the table and returns
// its peak RSS in MiB.
func measure(bin, base string, n int, timeout time.Duration) (float64, error) {
	dir, err := os.MkdirTemp("", "stalledstreams-")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(dir)
	ns := strconv.Itoa(n)
	cmd := exec.Command(bin, "run", "--base-url", base, "--model", "m", "--max-concurrency", ns, "--request-rate", "inf",
		"--num-requests", ns, "--timeout", timeout.String(), "--out", dir, "--quiet")
	var stderr strings.Builder
	cmd.Stdout, cmd.Stderr = io.Discard, &stderr
	start := time.Now()
	err = cmd.Run()
	wall := time.Since(start)
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		return 0, fmt.Errorf("run %s: %w", bin, err)
	}
	ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		return 0, errors.New("no resource usage of the child on this system")
	}
	f, err := records.ReadFile(filepath.Join(dir, "records.jsonl"))
	if err != nil {
		return 0, fmt.Errorf("%w\n%s", err, stderr.String())
	}
	outcomes := map[string]int{}
	for _, r := range f.Records {
		k := r.Outcome.String()
		switch {
		case strings.Contains(r.Error, "held by other requests"):
			k += " (held by others)"
		case strings.Contains(r.Error, "longer than"):
			k += " (too long)"
		}
		outcomes[k]++
	}
	keys := make([]string, 0, len(outcomes))
	for k := range outcomes {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s %d", k, outcomes[k]))
	}
	peak := float64(ru.Maxrss) / 1024 // KiB on Linux
	fmt.Printf("| %d | %.1f MiB | %.1f s | %d of %d | %s | %d |\n", n, peak, wall.Seconds(), len(f.Records), n,
		strings.Join(parts, ", "), cmd.ProcessState.ExitCode())
	return peak, nil
}

// hostile answers the preflight well and every other completion request with its mode's
// stall; GET /v1/models names the one model, anything else is 404.
type hostile struct {
	mode  string
	size  int
	stop  chan struct{}
	calls atomic.Int64
}

func (h *hostile) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/models"):
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"object":"list","data":[{"id":"m","object":"model"}]}`)
		return
	case r.Method != http.MethodPost:
		http.NotFound(w, r)
		return
	}
	body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if strings.Contains(string(body), "Reply with the word ready.") {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, `data: {"choices":[{"index":0,"delta":{"content":"ready"}}]}`+"\n\n"+
			`data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`+"\n\ndata: [DONE]\n\n")
		return
	}
	h.calls.Add(1)
	switch h.mode {
	case "header":
		h.header(w, r)
		return
	case "line":
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		h.write(w, "data: ", h.size, 'a', 0)
	case "data":
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		h.write(w, "", h.size, 'b', 1000)
	}
	select { // the stall
	case <-r.Context().Done():
	case <-h.stop:
	}
}

// write sends prefix and then n bytes of c (in data lines of width bytes each when width > 0),
// flushing as it goes; it stops when the client goes.
func (h *hostile) write(w http.ResponseWriter, prefix string, n int, c byte, width int) {
	fl := w.(http.Flusher)
	if _, err := io.WriteString(w, prefix); err != nil {
		return
	}
	block := []byte(strings.Repeat(string(c), 64<<10))
	if width > 0 {
		line := "data: " + strings.Repeat(string(c), width) + "\n"
		block = []byte(strings.Repeat(line, (64<<10)/len(line)))
	}
	for sent := 0; sent < n; sent += len(block) {
		if _, err := w.Write(block[:min(len(block), n-sent)]); err != nil {
			return
		}
		fl.Flush()
	}
}

// header writes a status line and a header that never ends, size bytes of it, on the raw
// connection, then stalls.
func (h *hostile) header(w http.ResponseWriter, r *http.Request) {
	conn, rw, err := w.(http.Hijacker).Hijack()
	if err != nil {
		return
	}
	defer conn.Close()
	bw := bufio.NewWriterSize(rw, 64<<10)
	_, _ = bw.WriteString("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nX-Padding: ")
	pad := strings.Repeat("h", 64<<10)
	for sent := 0; sent < h.size; sent += len(pad) {
		if _, err := bw.WriteString(pad[:min(len(pad), h.size-sent)]); err != nil {
			return
		}
	}
	if bw.Flush() != nil {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { // the client hangs up: the read ends
		_, _ = io.Copy(io.Discard, conn)
		cancel()
	}()
	select {
	case <-ctx.Done():
	case <-h.stop:
	}
}
