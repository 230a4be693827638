package shard_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/loadcurve/loadcurve/internal/field"
	"github.com/loadcurve/loadcurve/loadgen/shard"
	"github.com/loadcurve/loadcurve/workloads"
)

func TestParse(t *testing.T) {
	tests := []struct {
		in      string
		env     string // JOB_COMPLETION_INDEX; "-" = unset
		want    shard.Spec
		wantErr string // substring; "" = no error
	}{
		{in: "0/3", env: "-", want: shard.Spec{Index: 0, Count: 3}},
		{in: "2/3", env: "-", want: shard.Spec{Index: 2, Count: 3}},
		{in: "0/1", env: "-", want: shard.Spec{Index: 0, Count: 1}},          // one shard is a plain run
		{in: " 1/2 ", env: "-", want: shard.Spec{Index: 1, Count: 2}},        // surrounding space from env expansion
		{in: "auto/3", env: "1", want: shard.Spec{Index: 1, Count: 3}},       // Indexed Job pod 1
		{in: "auto/3", env: "-", wantErr: "JOB_COMPLETION_INDEX is not set"}, // outside a Job
		{in: "auto/3", env: "3", wantErr: "completions equal k"},             // Job with more completions than k
		{in: "auto/3", env: "x", wantErr: "not an integer"},                  // garbage in the environment
		{in: "3/3", env: "-", wantErr: "index must be in [0, 3)"},            // index == k
		{in: "-1/3", env: "-", wantErr: "index must be in [0, 3)"},           // negative index
		{in: "0/0", env: "-", wantErr: "count k must be an integer >= 1"},    // no shards
		{in: "1", env: "-", wantErr: "want i/k"},                             // no slash
		{in: "a/3", env: "-", wantErr: "integer or auto"},                    // bad index
		{in: "1/b", env: "-", wantErr: "count k must be"},                    // bad count
		{in: "", env: "-", wantErr: "want i/k"},                              // empty
	}
	for _, tt := range tests {
		t.Run(tt.in+"_env="+tt.env, func(t *testing.T) {
			if tt.env == "-" {
				t.Setenv(shard.EnvIndex, "") // registers restoration
				unsetenv(t, shard.EnvIndex)
			} else {
				t.Setenv(shard.EnvIndex, tt.env)
			}
			got, err := shard.Parse(tt.in)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || field.Of(err) == nil || field.Of(err).Name != shard.FieldShard {
					t.Fatalf("Parse(%q) = %v, %v; want a field error naming the shard and containing %q", tt.in, got, err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("Parse(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
			}
			if got.String() != strings.TrimSpace(strings.Replace(tt.in, "auto", tt.env, 1)) {
				t.Errorf("String() = %q, want the i/k form of %q", got.String(), tt.in)
			}
		})
	}
}

func TestZeroSpecIsUnsharded(t *testing.T) {
	var s shard.Spec
	if s.Sharded() || s.String() != "" || !s.Owns(7) || s.OwnedCount(10) != 10 || s.Validate() != nil {
		t.Errorf("zero Spec: Sharded=%v String=%q Owns(7)=%v OwnedCount(10)=%d Validate=%v; want false, \"\", true, 10, nil",
			s.Sharded(), s.String(), s.Owns(7), s.OwnedCount(10), s.Validate())
	}
}

func TestOwnedCount(t *testing.T) {
	// OwnedCount must equal a direct count of Owns over 0..n-1, for every shard, including n < k.
	for k := 1; k <= 5; k++ {
		for i := 0; i < k; i++ {
			s := shard.Spec{Index: i, Count: k}
			for n := 0; n <= 13; n++ {
				want := 0
				for id := 0; id < n; id++ {
					if s.Owns(id) {
						want++
					}
				}
				if got := s.OwnedCount(n); got != want {
					t.Errorf("%v.OwnedCount(%d) = %d, want %d", s, n, got, want)
				}
			}
		}
	}
}

func TestFilterPartitionsTheSchedule(t *testing.T) {
	set, err := workloads.Synthetic{InputLen: 3, OutputLen: 2, Seed: 1}.Generate(10)
	if err != nil {
		t.Fatal(err)
	}
	offsets := make([]time.Duration, 10)
	for i := range offsets {
		offsets[i] = time.Duration(i*i) * time.Millisecond
	}
	tests := []struct {
		spec    shard.Spec
		wantIDs []int
	}{
		{shard.Spec{Index: 0, Count: 3}, []int{0, 3, 6, 9}},
		{shard.Spec{Index: 1, Count: 3}, []int{1, 4, 7}},
		{shard.Spec{Index: 2, Count: 3}, []int{2, 5, 8}},
		{shard.Spec{Index: 0, Count: 1}, []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}},
		{shard.Spec{Index: 4, Count: 12}, []int{4}},
		{shard.Spec{Index: 11, Count: 12}, nil}, // more shards than requests: an empty shard
	}
	for _, tt := range tests {
		t.Run(tt.spec.String(), func(t *testing.T) {
			offs, reqs := tt.spec.Filter(offsets, set.Requests)
			if len(offs) != len(reqs) || len(reqs) != tt.spec.OwnedCount(10) {
				t.Fatalf("got %d offsets, %d requests; want %d of each", len(offs), len(reqs), tt.spec.OwnedCount(10))
			}
			var ids []int
			for j, r := range reqs {
				ids = append(ids, r.ID)
				if offs[j] != offsets[r.ID] || r.Text() != set.Requests[r.ID].Text() {
					t.Errorf("request %d: offset %v, want the global %v, and the request unchanged", r.ID, offs[j], offsets[r.ID])
				}
			}
			if !slices.Equal(ids, tt.wantIDs) {
				t.Errorf("ids %v, want %v", ids, tt.wantIDs)
			}
		})
	}
}

func TestFilterPanicsOnLengthMismatch(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("Filter with 2 offsets for 1 request did not panic")
		}
	}()
	shard.Spec{Index: 0, Count: 2}.Filter(make([]time.Duration, 2), make([]workloads.Request, 1))
}
