// Command fifoserver is an OpenAI-compatible streaming server that is a FIFO queue with c slots
// (M/D/c, or M/G/c with spread output lengths) and logs every request it served, so that a
// sweep's answer can be held to the truth of a deployment loadcurve did not build.
//
// It is deliberately independent of loadcurve: it imports the standard library only, and
// nothing of loadcurve's simulator, so its queue, its timing and its log are an external check.
//
//	go run ./scripts/fifoserver -addr 127.0.0.1:18080 -slots 8 -service 320ms -first-token 30ms -log fifo.jsonl
//	go run ./scripts/fifoserver -slots 8 -first-token 30ms -token-interval 20ms -output-mean 15 -output-cv 1 -seed 1 -log mgc.jsonl
//
// The queue. A completion request arrives when its handler starts. It starts service as soon as
// fewer than -slots requests are in service, strictly in arrival order, and holds its slot for its
// service time S: its first token is due at start + -first-token, each later one -token-interval
// after the one before, the last at start + S, and its slot is released at start + S whatever the
// client does. The queue's clock is logical: a slot released at start + S is free from that
// moment even when the goroutine that releases it runs late (the next request's start is then
// that moment, or its arrival if later), so the queue is exactly the FIFO queue of its arrivals;
// on a busy machine only the writes run late, and the log says by how much. A request whose
// client leaves while it waits leaves the queue; one whose client leaves in service keeps its
// slot to the end (a GPU batch would not notice either).
//
// Service. Deterministic (-output-mean 0, the default): every response has -tokens tokens and
// S = -service, the tokens spaced evenly after the first. Spread (-output-mean > 0): the k-th
// request to arrive gets the k-th of a seeded sequence of lengths (-output-dist: lognormal,
// exponential or geometric with mean -output-mean and, for lognormal, coefficient of variation
// -output-cv; at least one token, at most -max-output), cut to the request's max_tokens, and
// S = first token + (n − 1) · token interval.
//
// The log (-log, JSON lines): a header with the configuration, then one line per request when it
// ends: its X-Request-Id, arrival, logical start, first token due, first token written (after
// its flush returned), end (after [DONE] was flushed), the logical service, tokens and outcome;
// every time in seconds since the server started, from the monotonic clock. Server-side TTFT is
// first_s − arrival_s.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/loadcurve/loadcurve/scripts/fifoserver/fifo"
)

func main() {
	cfg, logPath, err := parseFlags(os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, "fifoserver:", err)
		os.Exit(2)
	}
	if err := run(cfg, logPath); err != nil {
		fmt.Fprintln(os.Stderr, "fifoserver:", err)
		os.Exit(1)
	}
}

func parseFlags(args []string) (fifo.Config, string, error) {
	fs := flag.NewFlagSet("fifoserver", flag.ContinueOnError)
	var c fifo.Config
	fs.StringVar(&c.Addr, "addr", "127.0.0.1:0", "loopback address to listen on (port 0: any free port; the address is printed)")
	fs.StringVar(&c.Model, "model", "fifo", "the one model served")
	fs.IntVar(&c.Slots, "slots", 8, "slots: requests in service at once")
	fs.DurationVar(&c.Service, "service", 320*time.Millisecond, "deterministic service time (when -output-mean is 0)")
	fs.DurationVar(&c.FirstToken, "first-token", 30*time.Millisecond, "from the start of service to the first token")
	fs.IntVar(&c.Tokens, "tokens", 16, "output tokens of every response (when -output-mean is 0)")
	fs.DurationVar(&c.TokenInterval, "token-interval", 20*time.Millisecond, "between tokens (when -output-mean > 0)")
	fs.StringVar(&c.OutputDist, "output-dist", "lognormal", "output lengths when -output-mean > 0: lognormal, exponential or geometric")
	fs.Float64Var(&c.OutputMean, "output-mean", 0, "mean output length; > 0 draws every response's length (M/G/c), 0 serves -tokens in -service (M/D/c)")
	fs.Float64Var(&c.OutputCV, "output-cv", 1, "coefficient of variation of lognormal output lengths")
	fs.IntVar(&c.MaxOutput, "max-output", 4096, "the longest drawn output")
	fs.Uint64Var(&c.Seed, "seed", 1, "seed of the output lengths")
	logPath := fs.String("log", "", "JSON-lines log of every request (required)")
	if err := fs.Parse(args); err != nil {
		return c, "", err
	}
	var errs []error
	if *logPath == "" {
		errs = append(errs, errors.New("-log is required"))
	}
	host, _, err := net.SplitHostPort(c.Addr)
	if err != nil {
		errs = append(errs, fmt.Errorf("-addr %q: %w", c.Addr, err))
	} else if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		errs = append(errs, fmt.Errorf("-addr %q: only a loopback address (127.0.0.1, ::1, localhost)", c.Addr))
	}
	if err := c.Check(); err != nil {
		errs = append(errs, err)
	}
	return c, *logPath, errors.Join(errs...)
}

func run(cfg fifo.Config, logPath string) error {
	f, err := os.Create(logPath)
	if err != nil {
		return fmt.Errorf("log: %w", err)
	}
	defer f.Close()
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	cfg.Addr = ln.Addr().String()
	cfg.Start = time.Now().Format(time.RFC3339Nano)
	s, err := fifo.New(cfg, f)
	if err != nil {
		ln.Close()
		return err
	}
	hs := &http.Server{Handler: s, ConnContext: s.ConnContext, ReadHeaderTimeout: 10 * time.Second}
	fmt.Printf("fifoserver: listening on http://%s/v1 (%s)\n", cfg.Addr, s)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(s.Listener(ln)) }()
	select {
	case err = <-errc:
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		_ = hs.Shutdown(sctx) // streams still running after 2 s are cut, and logged as such
		cancel()
		err = nil
	}
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	if cerr := s.Close(); err == nil {
		err = cerr
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
