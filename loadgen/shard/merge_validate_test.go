package shard_test

import (
	"testing"

	"github.com/loadcurve/loadcurve/internal/field"
	"github.com/loadcurve/loadcurve/loadgen/shard"
)

// TestMergeSettingsValidate: a merge without its directory is refused, naming the input; with
// one it is not.
func TestMergeSettingsValidate(t *testing.T) {
	for _, tc := range []struct {
		out  string
		want string
	}{
		{"", "merge: --out DIR is required (the merged result directory)"},
		{"m", ""},
	} {
		s := shard.DefaultMergeSettings()
		s.Out = tc.out
		var got string
		for _, err := range s.Validate() {
			fe := field.Of(err)
			if fe == nil || fe.Name != shard.FieldOut {
				t.Fatalf("out %q: %v, want a field error on %s", tc.out, err, shard.FieldOut)
			}
			got += fe.Render(func(n string) string {
				if n == shard.FieldOut {
					return "--out"
				}
				return n
			})
		}
		if got != tc.want {
			t.Errorf("out %q: %q, want %q", tc.out, got, tc.want)
		}
	}
}
