package result

import (
	"fmt"

	"github.com/loadcurve/loadcurve/measure/records"
)

// CutShortError says that a tier of a run, not interrupted, did not run to its end: requests
// canceled by the drain deadline, or never sent. Its records and summary are written (and say
// which); the exit status must say it too.
type CutShortError struct {
	Tier     int
	Canceled int // the tier's requests canceled before they ended
	Planned  int
}

func (e *CutShortError) Error() string {
	return fmt.Sprintf("the run did not run to its end: %d of %d planned requests were canceled before they ended (each record's error says why, e.g. the drain deadline after the arrivals; summary.json has \"complete\": false)",
		e.Canceled, e.Planned)
}

// CutShort returns a *CutShortError for the first tier of r whose summary is not complete, or
// nil when every tier ran to its end. Only a run that was not interrupted asks: an interrupted
// one is incomplete by its own account.
func (r *Result) CutShort() error {
	for _, t := range r.Tiers {
		s := t.Summary
		if s.Complete {
			continue
		}
		return &CutShortError{Tier: t.Tier.Tier, Canceled: s.Outcomes[records.Canceled.String()], Planned: s.Planned}
	}
	return nil
}

// ClientBoundWarnings warn, a line for each tier whose summary found it client-bound (the
// client's own lag shaped the load: measure.Summary.ClientBound), that its latencies describe
// the client as much as the server.
func (r *Result) ClientBoundWarnings() []string {
	var out []string
	for _, t := range r.Tiers {
		if t.Summary.ClientBound {
			out = append(out, fmt.Sprintf("tier %d is CLIENT-BOUND: %s. Its latencies describe this client as much as the server.",
				t.Tier.Tier, t.Summary.ClientBoundReason))
		}
	}
	return out
}
