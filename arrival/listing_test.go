package arrival_test

import (
	"bytes"
	"errors"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/loadcurve/loadcurve/arrival"
)

func TestWriteOffsets(t *testing.T) {
	for _, tc := range []struct {
		name    string
		offsets []time.Duration
		want    string
	}{
		{"none", nil, ""},
		{"to the nanosecond", []time.Duration{0, 17099711, 3540387020}, "0.000000000\n0.017099711\n3.540387020\n"},
		{"hours", []time.Duration{2 * time.Hour}, "7200.000000000\n"},
	} {
		var b bytes.Buffer
		if err := arrival.WriteOffsets(&b, tc.offsets); err != nil || b.String() != tc.want {
			t.Errorf("%s: WriteOffsets wrote %q (%v), want %q", tc.name, b.String(), err, tc.want)
		}
	}
}

// TestWriteOffsetsReadsBack: every offset of a drawn schedule is read back from its line exactly.
func TestWriteOffsetsReadsBack(t *testing.T) {
	offsets, err := arrival.Spec{Rate: 4, Burstiness: 0.5}.Arrivals(500, 0, 7, 0)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := arrival.WriteOffsets(&b, offsets); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	if len(lines) != len(offsets) {
		t.Fatalf("%d lines for %d offsets", len(lines), len(offsets))
	}
	for i, l := range lines {
		s, err := strconv.ParseFloat(l, 64)
		if err != nil {
			t.Fatal(err)
		}
		if got := time.Duration(math.Round(s * 1e9)); got != offsets[i] {
			t.Fatalf("line %d: %q reads back as %v, want %v", i, l, got, offsets[i])
		}
	}
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestWriteOffsetsSaysWhatFailed(t *testing.T) {
	if err := arrival.WriteOffsets(failingWriter{}, []time.Duration{time.Second}); err == nil {
		t.Error("WriteOffsets to a failing writer: no error")
	}
}

func TestDescribe(t *testing.T) {
	spec := arrival.Spec{Rate: 4, Burstiness: 1}
	for _, tc := range []struct {
		name    string
		offsets []time.Duration
		want    string
	}{
		{"a rate", []time.Duration{time.Second, 2 * time.Second, 3 * time.Second}, spec.String() + ", seed 1: 3 arrivals, realised rate 1/s"},
		{"all at once", []time.Duration{0, 0}, spec.String() + ", seed 1: 2 arrivals, realised rate inf (all at once)"},
		{"none", nil, spec.String() + ", seed 1: 0 arrivals, realised rate 0/s"},
	} {
		if got := arrival.Describe(spec, 1, tc.offsets); got != tc.want {
			t.Errorf("%s: Describe = %q, want %q", tc.name, got, tc.want)
		}
	}
}
