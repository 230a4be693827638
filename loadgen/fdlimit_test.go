package loadgen_test

import (
	"testing"

	"github.com/loadcurve/loadcurve/internal/field"
	"github.com/loadcurve/loadcurve/internal/param"
	"github.com/loadcurve/loadcurve/loadgen"
)

func TestStreamsWithin(t *testing.T) {
	for _, tc := range []struct {
		limit    uint64
		embedded bool
		want     int
	}{
		{1024, false, 1024 - loadgen.FDReserve},
		{1024, true, (1024 - loadgen.FDReserve) / 2},
		{loadgen.FDReserve - 1, false, 0},
		{1 << 62, false, 1<<30 - loadgen.FDReserve},
	} {
		if got := loadgen.StreamsWithin(tc.limit, tc.embedded); got != tc.want {
			t.Errorf("StreamsWithin(%d, %v) = %d, want %d", tc.limit, tc.embedded, got, tc.want)
		}
	}
}

// TestCheckStreams: a cap beyond the streams the limit holds is refused, naming the cap; no cap
// under a low limit is a warning; an unknown limit, a cap that fits, or no cap under a high
// limit pass.
func TestCheckStreams(t *testing.T) {
	usable := loadgen.StreamsWithin(1024, true) // 480
	for _, tc := range []struct {
		limit    uint64
		cap      int
		embedded bool
		refused  string
		warning  string
	}{
		{0, 1 << 20, false, "", ""},
		{1024, usable, true, "", ""},
		{1024, usable + 1, true, "concurrency cap 481 needs a connection each, and this process may open 1024 files, enough for 480 streams: raise the limit (ulimit -n) or lower concurrency cap", ""},
		{1024, 0, false, "", "this process may open 1024 files: without concurrency cap, requests in flight beyond about 960 fail as the client's and mark their tier client-bound"},
		{1 << 14, 0, false, "", ""},
	} {
		w, err := loadgen.CheckStreams(tc.limit, tc.cap, tc.embedded)
		var refused string
		if err != nil {
			fe := field.Of(err)
			if fe == nil || fe.Name != loadgen.FieldMaxConcurrency {
				t.Fatalf("CheckStreams(%d, %d): %v is not the cap's field error", tc.limit, tc.cap, err)
			}
			refused = fe.Render(nil)
		}
		if refused != tc.refused || param.Render(w, nil) != tc.warning {
			t.Errorf("CheckStreams(%d, %d, %v) = %q, %q; want %q, %q", tc.limit, tc.cap, tc.embedded, param.Render(w, nil), refused, tc.warning, tc.refused)
		}
	}
}
