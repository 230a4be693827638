package arrival

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"strconv"
	"time"
)

// The listing of a schedule: its planned offsets in seconds, one a line, to the nanosecond
// ("0.017099711"), and a line that describes it (Describe). It is what `loadcurve schedule`
// prints, for plotting and for comparing schedules across versions and seeds.

// WriteOffsets writes offsets to w, one a line in seconds with nine decimals.
func WriteOffsets(w io.Writer, offsets []time.Duration) error {
	bw := bufio.NewWriter(w)
	buf := make([]byte, 0, 32)
	for _, o := range offsets {
		buf = strconv.AppendFloat(buf[:0], o.Seconds(), 'f', 9, 64)
		buf = append(buf, '\n')
		if _, err := bw.Write(buf); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// Describe says what the offsets of schedule s drawn with seed are: "poisson(rate=4/s), seed 1:
// 12 arrivals, realised rate 3.389/s" (RealisedRate; "inf (all at once)" when every arrival
// is at T0).
func Describe(s Schedule, seed int64, offsets []time.Duration) string {
	r := RealisedRate(offsets)
	rate := fmt.Sprintf("%.4g/s", r)
	if math.IsInf(r, 1) {
		rate = "inf (all at once)"
	}
	return fmt.Sprintf("%s, seed %d: %d arrivals, realised rate %s", s, seed, len(offsets), rate)
}
