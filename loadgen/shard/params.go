package shard

import (
	"time"

	"github.com/loadcurve/loadcurve/internal/field"
	"github.com/loadcurve/loadcurve/internal/param"
)

// Settings are the user's choices about sharding a run: which shard of how many (the zero Spec:
// the whole run) and the wall-clock start all shards share (zero: none).
type Settings struct {
	Spec    Spec
	StartAt time.Time
}

// Params declares the settings, bound to s: the shard read as Parse reads it, the start as
// ParseStartAt reads it against now(); an empty text is none.
func (s *Settings) Params(now func() time.Time) []param.Param {
	return []param.Param{
		param.Var(FieldShard, specText{&s.Spec}, "send only shard i of k of the run: i/k, or auto/k to take i from JOB_COMPLETION_INDEX (Kubernetes Indexed Job); merge the shards' results with 'loadcurve merge'"),
		param.Var(FieldStartAt, startText{&s.StartAt, now}, "RFC 3339 wall-clock time at which every shard starts (its T0), e.g. 2026-05-01T12:00:00Z"),
	}
}

// MissingStartAt reports that the run is one of several shards without a common start: the
// shards' union would not be the planned schedule.
func (s Settings) MissingStartAt() bool {
	return s.Spec.Sharded() && s.Spec.Count > 1 && s.StartAt.IsZero()
}

type specText struct{ p *Spec }

func (t specText) String() string { return t.p.String() }
func (t specText) Set(s string) (err error) {
	*t.p = Spec{}
	if s != "" {
		*t.p, err = Parse(s)
	}
	return err
}

type startText struct {
	p   *time.Time
	now func() time.Time
}

func (t startText) String() string {
	if t.p.IsZero() {
		return ""
	}
	return t.p.Format(time.RFC3339Nano)
}
func (t startText) Set(s string) (err error) {
	*t.p = time.Time{}
	if s != "" {
		*t.p, err = ParseStartAt(s, t.now())
	}
	return err
}

// Check returns what is wrong with the settings together: shards of one run without a common
// start (MissingStartAt).
func (s Settings) Check() []error {
	if s.MissingStartAt() {
		return []error{field.Sentencef(FieldStartAt, "%v needs %v: the shards must share one T0 for their union to be the planned schedule", field.Ref(FieldShard), field.Ref(FieldStartAt))}
	}
	return nil
}
