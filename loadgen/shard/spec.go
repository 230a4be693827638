package shard

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/loadcurve/loadcurve/internal/field"
	"github.com/loadcurve/loadcurve/workloads"
)

// Names of a shard's inputs, as its errors name them (field.Error).
const (
	FieldShard   = "shard"
	FieldStartAt = "start time"
	FieldOut     = "output directory"
)

// EnvIndex is the environment variable a Kubernetes Indexed Job sets to the pod's completion
// index; a shard given as "auto/k" takes its index from it.
const EnvIndex = "JOB_COMPLETION_INDEX"

// Spec names one shard of a sharded run: shard Index of Count, 0 <= Index < Count. The zero Spec
// means "not sharded": it owns every request and its String is "".
type Spec struct {
	Index, Count int
}

// Parse reads a shard: "i/k" (for example "0/3"), or "auto/k", which takes i from the
// JOB_COMPLETION_INDEX environment variable (see [FromEnv]). Errors are field.Errors naming
// FieldShard.
func Parse(s string) (Spec, error) {
	idx, cnt, ok := strings.Cut(strings.TrimSpace(s), "/")
	if !ok {
		return Spec{}, field.Errorf(FieldShard, "%q: want i/k (shard i of k, e.g. 0/3) or auto/k (i from $%s)", s, EnvIndex)
	}
	k, err := strconv.Atoi(cnt)
	if err != nil || k < 1 {
		return Spec{}, field.Errorf(FieldShard, "%q: the shard count k must be an integer >= 1, got %q", s, cnt)
	}
	if idx == "auto" {
		sp, err := FromEnv(k)
		if err != nil {
			return Spec{}, field.Errorf(FieldShard, "%q: %w", s, err)
		}
		return sp, nil
	}
	i, err := strconv.Atoi(idx)
	if err != nil {
		return Spec{}, field.Errorf(FieldShard, "%q: the shard index i must be an integer or auto, got %q", s, idx)
	}
	sp := Spec{Index: i, Count: k}
	if err := sp.Validate(); err != nil {
		return Spec{}, field.Errorf(FieldShard, "%q: %w", s, err)
	}
	return sp, nil
}

// FromEnv returns shard i of k with i read from JOB_COMPLETION_INDEX, which Kubernetes sets in
// every pod of an Indexed Job (completions = k). It fails when the variable is unset, not an
// integer, or not in [0, k).
func FromEnv(k int) (Spec, error) {
	v, ok := os.LookupEnv(EnvIndex)
	if !ok {
		return Spec{}, fmt.Errorf("$%s is not set: it is set in the pods of a Kubernetes Indexed Job; elsewhere give the index explicitly, e.g. --shard 0/%d", EnvIndex, k)
	}
	i, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil {
		return Spec{}, fmt.Errorf("$%s=%q is not an integer", EnvIndex, v)
	}
	sp := Spec{Index: i, Count: k}
	if err := sp.Validate(); err != nil {
		return Spec{}, fmt.Errorf("$%s=%q: %w (does the Job's completions equal k?)", EnvIndex, v, err)
	}
	return sp, nil
}

// Validate reports whether s is a shard (or the zero Spec).
func (s Spec) Validate() error {
	switch {
	case s == Spec{}:
		return nil
	case s.Count < 1:
		return fmt.Errorf("the shard count must be >= 1, got %d", s.Count)
	case s.Index < 0 || s.Index >= s.Count:
		return fmt.Errorf("the shard index must be in [0, %d), got %d", s.Count, s.Index)
	}
	return nil
}

// Sharded reports whether s is a real shard rather than the zero Spec.
func (s Spec) Sharded() bool { return s.Count > 0 }

// String is "i/k", the form of --shard and of the records header's "shard"; "" for the zero Spec.
func (s Spec) String() string {
	if !s.Sharded() {
		return ""
	}
	return strconv.Itoa(s.Index) + "/" + strconv.Itoa(s.Count)
}

// Owns reports whether the request with global index id belongs to this shard: id ≡ Index
// (mod Count). The zero Spec owns every request.
func (s Spec) Owns(id int) bool {
	if !s.Sharded() {
		return true
	}
	return id >= 0 && id%s.Count == s.Index
}

// OwnedCount is how many of the global indexes 0..n−1 the shard owns: ⌈(n − Index)/Count⌉
// (n for the zero Spec). It is the "planned" count of the shard's tier line.
func (s Spec) OwnedCount(n int) int {
	if !s.Sharded() {
		return n
	}
	if n <= s.Index {
		return 0
	}
	return (n - s.Index + s.Count - 1) / s.Count
}

// Filter keeps the requests this shard owns, by their global ID (reqs[j].ID, which equals j in a
// set from package workloads), together with their planned offsets. The request values and the
// offsets are unchanged, so records keep global ids and the global schedule's times. offsets and
// reqs must have the same length; Filter panics otherwise, as that is a programming error.
func (s Spec) Filter(offsets []time.Duration, reqs []workloads.Request) ([]time.Duration, []workloads.Request) {
	if len(offsets) != len(reqs) {
		panic(fmt.Sprintf("shard.Filter: %d offsets for %d requests", len(offsets), len(reqs)))
	}
	n := s.OwnedCount(len(reqs))
	outO := make([]time.Duration, 0, n)
	outR := make([]workloads.Request, 0, n)
	for j := range reqs {
		if s.Owns(reqs[j].ID) {
			outO = append(outO, offsets[j])
			outR = append(outR, reqs[j])
		}
	}
	return outO, outR
}

// errBadShard marks a header "shard" value that does not parse.
var errBadShard = errors.New("not a shard of the form i/k")

// parseHeader reads the "shard" field of a records header: exactly "i/k", never "auto".
func parseHeader(s string) (Spec, error) {
	idx, cnt, ok := strings.Cut(s, "/")
	i, err1 := strconv.Atoi(idx)
	k, err2 := strconv.Atoi(cnt)
	if !ok || err1 != nil || err2 != nil {
		return Spec{}, fmt.Errorf("%q: %w", s, errBadShard)
	}
	sp := Spec{Index: i, Count: k}
	if k < 1 {
		return Spec{}, fmt.Errorf("%q: %w", s, errBadShard)
	}
	if err := sp.Validate(); err != nil {
		return Spec{}, fmt.Errorf("%q: %w", s, err)
	}
	return sp, nil
}
