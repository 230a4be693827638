package plan

import (
	"encoding/json"
	"fmt"
)

// Document is the plan's file (plan.json): the plan of each deployment, A against B when there
// are two, and, when the plan was rehearsed, the trials and what each deployment's mean for its
// plan.
type Document struct {
	Plans      []Result    `json:"plans"`
	Comparison *Comparison `json:"comparison,omitempty"`
	Rehearsals []Trial     `json:"rehearsals,omitempty"`
	// Conclusions say, per deployment rehearsed, what its rehearsal means for its plan
	// (Conclusion of its group of trials), in the order of Rehearsals.
	Conclusions []string `json:"rehearsal_conclusions,omitempty"`
}

// SetRehearsals records the trials of a rehearsal (Rehearse's, one deployment after the
// other) and the conclusion of each deployment's.
func (d *Document) SetRehearsals(trials []Trial) {
	d.Rehearsals, d.Conclusions = trials, nil
	for _, group := range TrialGroups(trials) {
		d.Conclusions = append(d.Conclusions, Conclusion(group))
	}
}

// Encode writes the document as plan.json holds it: indented JSON and a newline.
func (d Document) Encode() ([]byte, error) {
	b, err := json.MarshalIndent(d, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encode the plan: %w", err)
	}
	return append(b, '\n'), nil
}

// TrialGroups splits trials (Rehearse's, one deployment after the other) by deployment: each
// group starts with its planned count.
func TrialGroups(trials []Trial) [][]Trial {
	var out [][]Trial
	for i, t := range trials {
		if t.Planned || i == 0 {
			out = append(out, nil)
		}
		out[len(out)-1] = append(out[len(out)-1], t)
	}
	return out
}
