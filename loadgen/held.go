package loadgen

import (
	"errors"
	"fmt"
	"io"
	"math/bits"
	"sync"
	"sync/atomic"
)

// DefaultMaxHeldBytes bounds what all the requests of one client in flight hold together
// beyond their fixed buffers (Target.MaxHeldBytes): the pieces of an SSE line longer than the
// line reader, the data lines of an event not yet whole, a reply's text kept for a quality
// check or a session's history, an answer read whole (embeddings), an error body. Whatever the
// servers send, and however many streams stall holding such a piece, the client holds no more
// than this in them; a request that would need more is refused as a stream_error
// (errHeldFull). 64 MiB is what one response may stream (DefaultMaxResponseBytes), and seven
// times the longest SSE line a stream may hold (maxLineLen).
const DefaultMaxHeldBytes = 64 << 20

// heldBudget counts the bytes the requests of a client hold beyond their fixed buffers, against
// a limit. Taking and giving back are single atomic additions: no lock is held, never across
// I/O.
type heldBudget struct {
	limit int64
	used  atomic.Int64
	peak  atomic.Int64 // the most ever held, for the tests and the benchmark
	// refused counts the requests ended because the budget was spent.
	refused atomic.Int64
}

func newHeldBudget(limit int64) *heldBudget {
	if limit <= 0 {
		limit = DefaultMaxHeldBytes
	}
	return &heldBudget{limit: limit}
}

// take reserves n bytes; false, and nothing reserved, when they would take the total past the
// limit.
func (b *heldBudget) take(n int64) bool {
	if n <= 0 {
		return true
	}
	now := b.used.Add(n)
	if now > b.limit {
		b.used.Add(-n)
		return false
	}
	for p := b.peak.Load(); now > p && !b.peak.CompareAndSwap(p, now); p = b.peak.Load() {
	}
	return true
}

// give hands back n bytes taken before.
func (b *heldBudget) give(n int64) {
	if n > 0 {
		b.used.Add(-n)
	}
}

// errHeldFull is the cause of a request whose data the client could not hold: every byte it
// holds for pieces of lines, event data and answers (Target.MaxHeldBytes) was held by other
// requests in flight.
var errHeldFull = errors.New("the client's memory for long lines and answers is held by other requests")

// heldLimit is the budget of a client for t: t's MaxHeldBytes, or the larger of
// DefaultMaxHeldBytes and the response cap (MaxResponseBytes), and one read more: one answer as
// large as the cap is always read whole, and one beyond it is cut as the cap says.
func heldLimit(t Target) int64 {
	if t.MaxHeldBytes > 0 {
		return t.MaxHeldBytes
	}
	return max(DefaultMaxHeldBytes, t.maxResponseBytes()) + readerSize
}

// heldFullError words errHeldFull for a record: what the request needed and the bound.
func (b *heldBudget) heldFullError(what string, need int) error {
	b.refused.Add(1)
	if int64(need) > b.limit {
		return fmt.Errorf("%s of more than %d bytes: %w, more than the %s the client holds for all of them", what, need, errHeldFull, sizeText(b.limit))
	}
	return fmt.Errorf("%s of more than %d bytes: %w (%s in all, %s held now); the servers send such pieces to many streams at once",
		what, need, errHeldFull, sizeText(b.limit), sizeText(b.used.Load()))
}

// held is one request's share of its client's heldBudget: the bytes it took, given back by
// release once the request no longer holds them.
type held struct {
	b *heldBudget
	n int64
}

// grow returns buf with room for extra more bytes (cap(buf) >= len(buf)+extra), the added
// capacity taken from the budget first; limit caps what buf may hold in all (0: none). what
// names the data in the error: the line cap's lineTooLongError when limit is passed, the
// budget's errHeldFull when it is spent. Capacities are powers of two (from minHeldPiece),
// taken from and handed back to pools (heldBuffer, putHeld): a stream that stalls or is refused
// passes its buffer on to the next, so holding many stalled lines makes no garbage, and the
// copies of a growing piece cost at most twice its length.
func (h *held) grow(buf []byte, extra, limit int, what string) ([]byte, error) {
	need := len(buf) + extra
	if need <= cap(buf) {
		return buf, nil
	}
	if limit > 0 && need > limit {
		return buf, &lineTooLongError{what: what, limit: limit}
	}
	c := heldClass(need)
	if !h.b.take(int64(c - cap(buf))) {
		return buf, h.b.heldFullError(what, need)
	}
	h.n += int64(c - cap(buf))
	nb := heldBuffer(c)[:len(buf)]
	copy(nb, buf)
	putHeld(buf)
	return nb, nil
}

// drop gives back buf, which the request no longer holds (grown by grow or read by readHeld),
// and returns nil.
func (h *held) drop(buf []byte) []byte {
	n := min(int64(cap(buf)), h.n)
	h.b.give(n)
	h.n -= n
	putHeld(buf)
	return nil
}

// take reserves n more bytes for data held outside a grown buffer (a strings.Builder's growth).
func (h *held) take(n int, what string, need int) error {
	if !h.b.take(int64(n)) {
		return h.b.heldFullError(what, need)
	}
	h.n += int64(n)
	return nil
}

// give hands back n bytes of those taken.
func (h *held) give(n int) {
	n64 := min(int64(n), h.n)
	h.b.give(n64)
	h.n -= n64
}

// release gives back everything the request took.
func (h *held) release() {
	h.b.give(h.n)
	h.n = 0
}

// minHeldPiece is the least a held buffer grows to: small pieces do not each cost a reservation.
// maxPooledPiece is the largest pooled: an answer may be larger (up to --max-response-mib),
// then allocated as it is.
const (
	minHeldShift   = 12
	maxPooledShift = 24
	minHeldPiece   = 1 << minHeldShift
	maxPooledPiece = 1 << maxPooledShift
)

// heldPools hold the buffers of every power-of-two size from minHeldPiece to maxPooledPiece.
var heldPools [maxPooledShift - minHeldShift + 1]sync.Pool

// heldClass is the capacity a held buffer of n bytes gets: the power of two that holds it (at
// least minHeldPiece), or n itself beyond maxPooledPiece.
func heldClass(n int) int {
	if n > maxPooledPiece {
		return n
	}
	return max(minHeldPiece, 1<<bits.Len(uint(n-1)))
}

// heldBuffer returns an empty buffer of capacity c (a heldClass), from its pool when one is there.
func heldBuffer(c int) []byte {
	if c <= maxPooledPiece && c&(c-1) == 0 && c >= minHeldPiece {
		if p, ok := heldPools[bits.Len(uint(c))-1-minHeldShift].Get().(*[]byte); ok {
			return (*p)[:0]
		}
	}
	return make([]byte, 0, c)
}

// putHeld hands buf back to its pool when its capacity is a pooled class; others are left to
// the collector.
func putHeld(buf []byte) {
	c := cap(buf)
	if c > maxPooledPiece || c < minHeldPiece || c&(c-1) != 0 {
		return
	}
	p := new([]byte) // not &buf: that would move every caller's buffer to the heap
	*p = buf[:0]
	heldPools[bits.Len(uint(c))-1-minHeldShift].Put(p)
}

// lineTooLongError ends a stream whose line (or event) passed the per-stream cap.
type lineTooLongError struct {
	what  string
	limit int
}

func (e *lineTooLongError) Error() string {
	return fmt.Sprintf("%s longer than %d bytes", e.what, e.limit)
}

// readHeld reads r to its end into memory held against h, at most limit bytes and one more
// (to tell a body that goes on): the first readerSize bytes cost nothing, since every request
// may read that much, the rest is taken from the budget as it comes. what names the data in
// errHeldFull's message. A read error is returned with what was read. Hand the buffer back with
// drop once it is read.
func (h *held) readHeld(r io.Reader, limit int64, what string) ([]byte, error) {
	buf := make([]byte, 0, min(int64(readerSize), limit+1))
	for {
		if int64(len(buf)) > limit {
			return buf, nil
		}
		if len(buf) == cap(buf) {
			room := int(min(int64(2*cap(buf)), limit+1)) - cap(buf)
			nb, err := h.grow(buf, max(room, 1), int(limit+1), what)
			if err != nil {
				return buf, err
			}
			buf = nb
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if errors.Is(err, io.EOF) {
			return buf, nil
		}
		if err != nil {
			return buf, err
		}
	}
}
