package shard

import (
	"fmt"

	"github.com/loadcurve/loadcurve/internal/field"
	"github.com/loadcurve/loadcurve/internal/param"
	"github.com/loadcurve/loadcurve/measure"
)

// Names of a merge's settings besides its output directory (FieldOut).
const (
	FieldReplace         = "replacing a result"
	FieldMaxAnchorSpread = "anchor spread"
	FieldMaxScheduleLag  = "shard's schedule-lag ceiling"
)

// MergeSettings are the user's choices about a merge: the directory it writes (one holding a
// result only when Replace says so) and the checks of its report.
type MergeSettings struct {
	Out     string
	Replace bool
	Options
}

// DefaultMergeSettings are the settings nobody chose: no directory, the checks' defaults.
func DefaultMergeSettings() MergeSettings {
	return MergeSettings{Options: Options{MaxAnchorSpread: DefaultMaxAnchorSpread, MaxScheduleLag: measure.DefaultMaxScheduleLag}}
}

// Params declares the settings, bound to s: where the merge writes and the anchors' check
// first, then the schedule-lag ceiling that judges each shard.
func (s *MergeSettings) Params() []param.Param {
	return []param.Param{
		param.String(FieldOut, &s.Out, "directory for the merged records.jsonl and merge.json (required)"),
		param.Bool(FieldReplace, &s.Replace, fmt.Sprintf("let %v replace a result already in that directory", field.Ref(FieldOut))),
		param.Duration(FieldMaxAnchorSpread, &s.MaxAnchorSpread, "warn when the shards' wall-clock anchors of a tier spread more"),
		param.Duration(FieldMaxScheduleLag, &s.MaxScheduleLag, "a shard whose schedule-lag p99 exceeds this was client-bound"),
	}
}
