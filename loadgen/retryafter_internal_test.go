package loadgen

import (
	"net/http"
	"testing"
	"time"
)

// TestParseRetryAfter: the rule of parseRetryAfter. No header, no wait; a usable wait is kept
// within [MinRetryWait, MaxRetryWait]; a huge or overflowing one waits MaxRetryWait; one that
// gives no usable wait (zero, negative, past, malformed) waits MinRetryWait, never nothing: a
// negative or overflowing value once re-sent at once.
func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		in   string
		want time.Duration
	}{
		{"", 0},
		{"   ", 0},
		{"1", time.Second},
		{" 3 ", 3 * time.Second},
		{"30", MaxRetryWait},
		{"0", MinRetryWait},
		{"-3", MinRetryWait},
		{"-99999999999999999999999", MinRetryWait},
		{"1.5", MinRetryWait}, // not delay-seconds, not a date
		{"soon", MinRetryWait},
		{"99999999999999", MaxRetryWait},
		{"9223372036854775807", MaxRetryWait},
		{"99999999999999999999999999999", MaxRetryWait}, // beyond int64
		{now.Add(2 * time.Second).Format(http.TimeFormat), 2 * time.Second},
		{now.Add(100 * time.Millisecond).Format(http.TimeFormat), MinRetryWait}, // whole seconds: now
		{now.Add(-time.Minute).Format(http.TimeFormat), MinRetryWait},
		{now.Add(24 * time.Hour).Format(http.TimeFormat), MaxRetryWait},
		{"Fri, 31 Dec 9999 23:59:59 GMT", MaxRetryWait},
	} {
		if got := parseRetryAfter(tt.in, now); got != tt.want {
			t.Errorf("parseRetryAfter(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
}
