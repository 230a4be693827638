package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/loadcurve/loadcurve/measure"
)

// Server defaults.
const (
	// DefaultChunks is the number of one-token content chunks per stream (the 32-token
	// streams).
	DefaultChunks = 32
	// DefaultChunkGap is the pause between two content chunks of a stream: an inter-token latency
	// typical of a loaded deployment, so that streams overlap as they do in real traffic (at
	// 1,000 req/s about 1,000 × 32 × 10 ms ≈ 320 streams are open at once).
	DefaultChunkGap = 10 * time.Millisecond
	// maxServerSamples bounds the per-request TTFT samples the server keeps between resets.
	maxServerSamples = 1 << 20
)

// Paths served by Server.
const (
	pathStats = "/bench/stats"
	pathReset = "/bench/reset"
	// StallPrefix is prepended to a base URL's path to get streams that send one chunk and then
	// stay open until the client goes away.
	StallPrefix = "/stall"
	// NoGapPrefix is prepended to a base URL's path to get streams without the gap between
	// chunks: over in about a millisecond, so that at light load every request finds the
	// connection its predecessor used idle (the TTFT-overhead phase).
	NoGapPrefix = "/nogap"
)

// ServerConfig says how the server streams.
type ServerConfig struct {
	Chunks int           // content chunks per stream; 0 means DefaultChunks
	Gap    time.Duration // between content chunks; 0 means as fast as possible
}

// Server is the benchmark's streaming server. Its zero value is not usable; use NewServer.
type Server struct {
	cfg ServerConfig
	// Pre-rendered events: content chunks (the last one also carries finish_reason), then usage
	// and [DONE] in one write.
	chunk, lastChunk, tail []byte

	requests atomic.Int64 // completion requests since the last reset
	chunks   atomic.Int64 // content chunks written since the last reset
	done     atomic.Int64 // streams written to their end since the last reset
	failed   atomic.Int64 // streams cut short by a write error since the last reset
	open     atomic.Int64 // streams currently inside the handler (not reset)
	stalled  atomic.Int64 // stalled streams that sent their chunk and are being held (not reset)

	epoch time.Time // monotonic zero of the server's timestamps

	mu         sync.Mutex
	since      time.Duration   // when the last reset happened, from epoch
	first      time.Duration   // first request arrival after the reset (-1 before any)
	last       time.Duration   // latest request arrival after the reset
	ttft       []time.Duration // handler entry to first chunk flushed, per stream
	sampleDrop int64           // samples not kept (beyond maxServerSamples)
}

// NewServer returns a server streaming as cfg says.
func NewServer(cfg ServerConfig) (*Server, error) {
	if cfg.Chunks == 0 {
		cfg.Chunks = DefaultChunks
	}
	if cfg.Chunks < 1 || cfg.Gap < 0 {
		return nil, fmt.Errorf("bench server: chunks must be >= 1 and the gap >= 0, got %d and %v", cfg.Chunks, cfg.Gap)
	}
	s := &Server{cfg: cfg, epoch: time.Now(), first: -1}
	const head = `data: {"id":"chatcmpl-bench","object":"chat.completion.chunk","created":1700000000,"model":"bench","choices":[{"index":0,"delta":{"content":"tok"},"finish_reason":`
	s.chunk = []byte(head + "null}]}\n\n")
	s.lastChunk = []byte(head + `"length"}]}` + "\n\n")
	s.tail = []byte(`data: {"id":"chatcmpl-bench","object":"chat.completion.chunk","created":1700000000,"model":"bench","choices":[],"usage":{"prompt_tokens":1,"completion_tokens":` +
		strconv.Itoa(cfg.Chunks) + `,"total_tokens":` + strconv.Itoa(cfg.Chunks+1) + "}}\n\ndata: [DONE]\n\n")
	return s, nil
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	path := r.URL.Path
	switch {
	case r.Method == http.MethodPost && (strings.HasSuffix(path, "/chat/completions") || strings.HasSuffix(path, "/completions")):
		s.stream(w, r, strings.HasPrefix(path, StallPrefix+"/"), strings.HasPrefix(path, NoGapPrefix+"/"))
	case path == pathStats:
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(s.Stats())
	case path == pathReset && r.Method == http.MethodPost:
		s.Reset()
		w.WriteHeader(http.StatusNoContent)
	case strings.HasSuffix(path, "/models"):
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"object":"list","data":[{"id":"bench","object":"model","owned_by":"bench"}]}`)
	default:
		http.NotFound(w, r)
	}
}

// stream answers one completion request.
func (s *Server) stream(w http.ResponseWriter, r *http.Request, stall, noGap bool) {
	start := time.Now()
	s.open.Add(1)
	defer s.open.Add(-1)
	s.requests.Add(1)
	s.arrived(start.Sub(s.epoch))
	_, _ = io.Copy(io.Discard, r.Body)
	fl, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming unsupported", http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	first := s.chunk
	if s.cfg.Chunks == 1 && !stall {
		first = s.lastChunk
	}
	if _, err := w.Write(first); err != nil {
		s.failed.Add(1)
		return
	}
	// Count before the flush: a client that has read the chunk must see it in the stats.
	s.chunks.Add(1)
	if stall {
		s.stalled.Add(1)
	}
	fl.Flush() // headers and the first chunk leave together
	s.firstByte(time.Since(start))
	if stall {
		<-r.Context().Done()
		s.stalled.Add(-1)
		return
	}
	for k := 1; k < s.cfg.Chunks; k++ {
		if s.cfg.Gap > 0 && !noGap {
			// Absolute deadlines: the stream's pace does not drift with the write costs.
			time.Sleep(time.Until(start.Add(time.Duration(k) * s.cfg.Gap)))
		}
		b := s.chunk
		if k == s.cfg.Chunks-1 {
			b = s.lastChunk
		}
		if _, err := w.Write(b); err != nil {
			s.failed.Add(1)
			return
		}
		s.chunks.Add(1)
		fl.Flush()
	}
	if _, err := w.Write(s.tail); err != nil {
		s.failed.Add(1)
		return
	}
	s.done.Add(1)
	fl.Flush()
}

func (s *Server) arrived(at time.Duration) {
	s.mu.Lock()
	if s.first < 0 {
		s.first = at
	}
	s.last = max(s.last, at)
	s.mu.Unlock()
}

func (s *Server) firstByte(d time.Duration) {
	s.mu.Lock()
	if len(s.ttft) < maxServerSamples {
		s.ttft = append(s.ttft, d)
	} else {
		s.sampleDrop++
	}
	s.mu.Unlock()
}

// Reset zeroes the counts of requests, chunks and streams and the TTFT samples. Streams open
// across a reset keep counting their chunks into the new period.
func (s *Server) Reset() {
	s.mu.Lock()
	s.requests.Store(0)
	s.chunks.Store(0)
	s.done.Store(0)
	s.failed.Store(0)
	s.since = time.Since(s.epoch)
	s.first, s.last = -1, 0
	s.ttft = s.ttft[:0]
	s.sampleDrop = 0
	s.mu.Unlock()
}

// Stats is what the server saw since its last reset.
type Stats struct {
	Requests int64 `json:"requests"`       // completion requests received
	Chunks   int64 `json:"content_chunks"` // content chunks written and flushed
	Done     int64 `json:"streams_done"`   // streams written to [DONE]
	Failed   int64 `json:"streams_failed"` // streams cut short (the client went away)
	Open     int64 `json:"streams_open"`   // streams inside the handler now
	Stalled  int64 `json:"streams_held"`   // stalled streams being held now
	// ArrivalSpanS is the time from the first to the last request arrival, in seconds;
	// DeliveredRate is (Requests-1)/ArrivalSpanS, the rate the server was offered.
	ArrivalSpanS  float64 `json:"arrival_span_s"`
	DeliveredRate float64 `json:"delivered_rate"`
	// TTFT is the server-side time to first token: from the handler's entry (request headers
	// parsed) to the first chunk flushed to the socket, in milliseconds.
	TTFTP50Ms   float64 `json:"ttft_p50_ms"`
	TTFTP99Ms   float64 `json:"ttft_p99_ms"`
	TTFTSamples int     `json:"ttft_samples"`
	ChunkGapMs  float64 `json:"chunk_gap_ms"`
	ChunksEach  int     `json:"chunks_per_stream"`
}

// Stats returns the counts since the last reset.
func (s *Server) Stats() Stats {
	s.mu.Lock()
	st := Stats{
		Requests: s.requests.Load(), Chunks: s.chunks.Load(), Done: s.done.Load(), Failed: s.failed.Load(),
		Open: s.open.Load(), Stalled: s.stalled.Load(),
		TTFTSamples: len(s.ttft), ChunkGapMs: ms(s.cfg.Gap), ChunksEach: s.cfg.Chunks,
	}
	if s.first >= 0 {
		st.ArrivalSpanS = (s.last - s.first).Seconds()
	}
	ttft := slices.Clone(s.ttft)
	s.mu.Unlock()
	st.DeliveredRate = deliveredRate(st.Requests, st.ArrivalSpanS)
	st.TTFTP50Ms, st.TTFTP99Ms = p50p99Ms(ttft)
	return st
}

// deliveredRate is (n-1)/span: n arrivals span n-1 gaps. It is 0 when undefined.
func deliveredRate(n int64, spanS float64) float64 {
	if n < 2 || spanS <= 0 {
		return 0
	}
	return float64(n-1) / spanS
}

func ms(d time.Duration) float64 { return float64(d) / 1e6 }

// p50p99Ms returns the median and the 99th percentile of ds in milliseconds (measure.Percentile's
// definition), 0 for an empty sample. It sorts ds.
func p50p99Ms(ds []time.Duration) (p50, p99 float64) {
	if len(ds) == 0 {
		return 0, 0
	}
	slices.Sort(ds)
	v := make([]float64, len(ds))
	for i, d := range ds {
		v[i] = ms(d)
	}
	return measure.Percentile(v, 50), measure.Percentile(v, 99)
}

// ListenAndServe serves s on addr until ctx ends. ready is called with the base URL (ending in
// /v1) once the listener is open.
func (s *Server) ListenAndServe(ctx context.Context, addr string, ready func(baseURL string)) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("bench server: listen on %s: %w", addr, err)
	}
	hs := &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	if ready != nil {
		ready("http://" + ln.Addr().String() + "/v1")
	}
	select {
	case err := <-errc:
		return fmt.Errorf("bench server: %w", err)
	case <-ctx.Done():
		// Close, not Shutdown: held streams would keep a graceful shutdown waiting.
		if err := hs.Close(); err != nil && !errors.Is(err, http.ErrServerClosed) {
			return fmt.Errorf("bench server: close: %w", err)
		}
		return nil
	}
}
