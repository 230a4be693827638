package compare

import (
	"fmt"
	"strconv"
)

// Identity is what must agree for two result sets to share a table.
type Identity struct {
	// Fingerprint is the request-set fingerprint.
	Fingerprint string
	// Schedule describes the arrival process and its rate tiers (the
	// schedule's String form).
	Schedule string
	// Seed is the schedule's seed.
	Seed int64
	// CachePolicy is the workload's cache policy (e.g. cold or warm).
	CachePolicy string
	// MetricsVersion is the metric-definition version.
	MetricsVersion string
	// Objectives is the objectives in a canonical text form; the caller
	// canonicalises (same keys in the same order) before comparing.
	Objectives string
	// Endpoint is the API kind ("chat" or "completions"), not the target URL,
	// which naturally differs between the two deployments being compared.
	Endpoint string
	// MaxConcurrency is the client's concurrency cap (0 = none).
	MaxConcurrency int
	// NumRequests is the number of requests per tier.
	NumRequests int
	// ExtraBody is the request body's extra parameters (--extra-body, --ignore-eos) in a
	// canonical form: a run with ignore_eos and one without do not send identical requests.
	ExtraBody string
	// TargetShare is the share of compliant requests the decisions were held to.
	TargetShare string
	// Tokenizer is the hash of the tokenizer file the prompts were sized or counted in ("" for
	// words): the same file in two places is the same tokenizer.
	Tokenizer string
}

// Mismatch is one field in which two identities differ.
type Mismatch struct {
	// Field names the field in words, e.g. "request-set fingerprint".
	Field string `json:"field"`
	// A and B are the two values as text.
	A string `json:"a"`
	B string `json:"b"`
}

// String gives e.g. "request-set fingerprint differs: A=3f2a…, B=9c41…".
// An empty value shows as "(empty)".
func (m Mismatch) String() string {
	return fmt.Sprintf("%s differs: A=%s, B=%s", m.Field, orEmpty(m.A), orEmpty(m.B))
}

func orEmpty(s string) string {
	if s == "" {
		return "(empty)"
	}
	return s
}

// Field labels used in [Mismatch].Field, in the order [Check] reports them.
const (
	FieldFingerprint    = "request-set fingerprint"
	FieldSchedule       = "schedule"
	FieldSeed           = "seed"
	FieldCachePolicy    = "cache policy"
	FieldMetricsVersion = "metric-definition version"
	FieldObjectives     = "objectives"
	FieldEndpoint       = "endpoint"
	FieldMaxConcurrency = "max concurrency"
	FieldNumRequests    = "number of requests"
	FieldExtraBody      = "request body parameters (--extra-body)"
	FieldTargetShare    = "target share"
	FieldTokenizer      = "tokenizer (--tokenizer)"
)

// Check returns every field in which a and b differ, in the order of the
// Field* constants, or nil when the two are comparable. Strings are compared
// exactly.
func Check(a, b Identity) []Mismatch {
	var ms []Mismatch
	str := func(field, x, y string) {
		if x != y {
			ms = append(ms, Mismatch{Field: field, A: x, B: y})
		}
	}
	num := func(field string, x, y int64) {
		if x != y {
			ms = append(ms, Mismatch{Field: field, A: strconv.FormatInt(x, 10), B: strconv.FormatInt(y, 10)})
		}
	}
	str(FieldFingerprint, a.Fingerprint, b.Fingerprint)
	str(FieldSchedule, a.Schedule, b.Schedule)
	num(FieldSeed, a.Seed, b.Seed)
	str(FieldCachePolicy, a.CachePolicy, b.CachePolicy)
	str(FieldMetricsVersion, a.MetricsVersion, b.MetricsVersion)
	str(FieldObjectives, a.Objectives, b.Objectives)
	str(FieldEndpoint, a.Endpoint, b.Endpoint)
	num(FieldMaxConcurrency, int64(a.MaxConcurrency), int64(b.MaxConcurrency))
	num(FieldNumRequests, int64(a.NumRequests), int64(b.NumRequests))
	str(FieldExtraBody, a.ExtraBody, b.ExtraBody)
	str(FieldTargetShare, a.TargetShare, b.TargetShare)
	str(FieldTokenizer, a.Tokenizer, b.Tokenizer)
	return ms
}
