package shard_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/loadcurve/loadcurve/internal/field"
	"github.com/loadcurve/loadcurve/loadgen/shard"
)

func TestParseStartAt(t *testing.T) {
	now := time.Date(2026, 5, 1, 11, 30, 0, 0, time.UTC)
	tests := []struct {
		in      string
		want    time.Time
		wantIs  error  // errors.Is target, or nil
		wantErr string // substring; "" = no error
	}{
		{in: "2026-05-01T12:00:00Z", want: time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)},                    // 30 min ahead
		{in: "2026-05-01T13:45:00.25+02:00", want: time.Date(2026, 5, 1, 11, 45, 0, 250e6, time.UTC)},       // zone and fraction
		{in: "2026-05-01T11:29:59.5Z", want: time.Date(2026, 5, 1, 11, 29, 59, 500e6, time.UTC)},            // 0.5 s past: tolerated
		{in: "2026-05-01T12:30:00Z", want: time.Date(2026, 5, 1, 12, 30, 0, 0, time.UTC)},                   // exactly MaxStartAhead
		{in: "2026-05-01T12:30:01Z", wantIs: shard.ErrStartTooFar, wantErr: "check the date and time zone"}, // just beyond
		{in: "2026-05-01T13:30:00+00:00", wantIs: shard.ErrStartTooFar, wantErr: "2h0m0s from now"},         // a zone mistake
		{in: "2026-05-01T11:29:58Z", wantIs: shard.ErrStartPassed, wantErr: "2s ago"},                       // too late to join
		{in: "2026-05-01T12:00:00", wantErr: "RFC 3339"},                                                    // no zone
		{in: "2026-05-01 12:00:00Z", wantErr: "RFC 3339"},                                                   // space instead of T
		{in: "in 5 minutes", wantErr: "RFC 3339"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := shard.ParseStartAt(tt.in, now)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || field.Of(err) == nil || field.Of(err).Name != shard.FieldStartAt {
					t.Fatalf("ParseStartAt(%q) = %v, %v; want a field error naming the start time containing %q", tt.in, got, err, tt.wantErr)
				}
				if tt.wantIs != nil && !errors.Is(err, tt.wantIs) {
					t.Errorf("error %v is not %v", err, tt.wantIs)
				}
				return
			}
			if err != nil || !got.Equal(tt.want) {
				t.Fatalf("ParseStartAt(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
			}
		})
	}
}

// The wait runs on synctest's fake clock: it must end exactly at the start time.
func TestStartAtWaitsUntilTheStart(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		at := time.Now().Add(10 * time.Minute).Round(0)
		begin := time.Now()
		late, err := shard.StartAt(context.Background(), at)
		if err != nil {
			t.Fatal(err)
		}
		if waited := time.Since(begin); waited != 10*time.Minute || late != 0 {
			t.Errorf("waited %v, late %v; want exactly 10m0s and 0", waited, late)
		}
	})
}

func TestStartAtWindow(t *testing.T) {
	tests := []struct {
		name     string
		offset   time.Duration // start time relative to now
		wantIs   error
		wantLate time.Duration
	}{
		{"already started, within tolerance", -500 * time.Millisecond, nil, 500 * time.Millisecond},
		{"exactly now", 0, nil, 0},
		{"passed beyond tolerance", -1500 * time.Millisecond, shard.ErrStartPassed, 0},
		{"too far ahead", shard.MaxStartAhead + time.Second, shard.ErrStartTooFar, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				begin := time.Now()
				late, err := shard.StartAt(context.Background(), begin.Add(tt.offset))
				if !errors.Is(err, tt.wantIs) {
					t.Fatalf("err = %v, want %v", err, tt.wantIs)
				}
				if late != tt.wantLate || time.Since(begin) != 0 {
					t.Errorf("late %v after waiting %v; want %v without waiting", late, time.Since(begin), tt.wantLate)
				}
			})
		})
	}
}

func TestStartAtCanceled(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		begin := time.Now()
		_, err := shard.StartAt(ctx, begin.Add(30*time.Minute))
		if !errors.Is(err, context.DeadlineExceeded) || time.Since(begin) != time.Minute {
			t.Errorf("err %v after %v; want context.DeadlineExceeded after 1m0s", err, time.Since(begin))
		}
	})
}
