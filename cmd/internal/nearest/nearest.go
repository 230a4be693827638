// Package nearest finds the names a user probably meant (a mistyped command, flag or value) and
// joins them for a message: "did you mean a, b or c?".
package nearest

import (
	"slices"
	"strings"
)

// Or joins "a", "a or b", "a, b or c".
func Or(s []string) string {
	if len(s) <= 1 {
		return strings.Join(s, "")
	}
	return strings.Join(s[:len(s)-1], ", ") + " or " + s[len(s)-1]
}

// MaxNames bounds the names Names offers.
const MaxNames = 3

// Names returns the names of candidates that typed was probably meant to be, nearest first:
// those within a few edits of it (one in three of its characters, at least one, at most
// three), else those it abbreviates (at least three characters long). Nothing is offered for a
// name that is none of these: a far suggestion misleads more than none.
func Names(typed string, candidates []string) []string {
	longest := 0
	for _, c := range candidates {
		longest = max(longest, len(c))
	}
	if len(typed) > 4*longest+3 {
		// Further than 3 edits from every candidate, and the prefix of none: a name of megabytes
		// (a hostile file's key) is not compared letter by letter with each.
		return nil
	}
	typed = strings.ToLower(typed)
	limit := min(max(len([]rune(typed))/3, 1), 3)
	type hit struct {
		name string
		d    int
	}
	var hits []hit
	seen := map[string]bool{}
	for _, c := range candidates {
		if seen[c] || len(c) < 2 && len(typed) > 2 {
			continue
		}
		seen[c] = true
		if d := editDistance(typed, strings.ToLower(c)); d <= limit {
			hits = append(hits, hit{c, d})
		}
	}
	if len(hits) == 0 && len(typed) >= 3 {
		for _, c := range candidates {
			if strings.HasPrefix(strings.ToLower(c), typed) && !slices.ContainsFunc(hits, func(h hit) bool { return h.name == c }) {
				hits = append(hits, hit{c, len(c) - len(typed)})
			}
		}
	}
	slices.SortStableFunc(hits, func(a, b hit) int { return a.d - b.d })
	var out []string
	for _, h := range hits[:min(len(hits), MaxNames)] {
		out = append(out, h.name)
	}
	return out
}

// editDistance is the optimal-string-alignment distance of a and b: insertions, deletions,
// substitutions and transpositions of adjacent characters each count one.
func editDistance(a, b string) int {
	s, t := []rune(a), []rune(b)
	prev2 := make([]int, len(t)+1)
	prev := make([]int, len(t)+1)
	cur := make([]int, len(t)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(s); i++ {
		cur[0] = i
		for j := 1; j <= len(t); j++ {
			cost := 1
			if s[i-1] == t[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && s[i-1] == t[j-2] && s[i-2] == t[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(t)]
}
