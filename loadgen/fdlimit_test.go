package loadgen_test

import (
	"testing"

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
