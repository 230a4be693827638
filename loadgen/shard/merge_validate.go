package shard

import "github.com/loadcurve/loadcurve/internal/field"

// Validate returns what is wrong with the settings: a merge writes a directory, which must be
// named (Out).
func (s MergeSettings) Validate() []error {
	if s.Out == "" {
		return []error{field.Sentencef(FieldOut, "merge: %v DIR is required (the merged result directory)", field.Ref(FieldOut))}
	}
	return nil
}
