package nearest

import (
	"slices"
	"testing"
)

// TestNames is the rule behind the suggestions: a few edits away (one in three characters), or
// an abbreviation; nothing far.
func TestNames(t *testing.T) {
	names := []string{"request-rate", "request-id-prefix", "rate-limit", "max-concurrency", "max-tiers", "v", "verbose"}
	tests := []struct {
		typed string
		want  []string
	}{
		{"requst-rate", []string{"request-rate"}},  // a letter left out
		{"reqeust-rate", []string{"request-rate"}}, // two letters swapped: one edit
		{"max-tiers", []string{"max-tiers"}},       // exact
		{"max-concurency", []string{"max-concurrency"}},
		{"request", []string{"request-rate", "request-id-prefix"}}, // an abbreviation of two
		{"rate", []string{"rate-limit"}},
		{"verbos", []string{"verbose"}},
		{"zzzz", nil},
		{"xy", nil},
	}
	for _, tt := range tests {
		if got := Names(tt.typed, names); !slices.Equal(got, tt.want) {
			t.Errorf("Names(%q) = %q, want %q", tt.typed, got, tt.want)
		}
	}
	for _, tt := range []struct {
		a, b string
		d    int
	}{{"", "abc", 3}, {"abc", "abc", 0}, {"abc", "acb", 1}, {"kitten", "sitting", 3}, {"sweep", "swep", 1}} {
		if got := editDistance(tt.a, tt.b); got != tt.d {
			t.Errorf("editDistance(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.d)
		}
	}
}
