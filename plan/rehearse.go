package plan

import "strings"

// Trial is one try of a plan: the forecast's peak sent to a number of replicas of a deployment,
// judged in steady state as a sweep's tier is (curve's verdicts: "meets", "fails", "fails
// (unstable)", "uncertain").
type Trial struct {
	Deployment string `json:"deployment"`
	Replicas   int    `json:"replicas"`
	// Planned is true for the plan's replica count.
	Planned      bool    `json:"planned"`
	PeakRate     float64 `json:"peak_rate"`
	RealisedRate float64 `json:"realised_rate"`
	Verdict      string  `json:"verdict"`
	Share        float64 `json:"compliant_request_share"`
	ShareLo      float64 `json:"share_lo"`
	ShareHi      float64 `json:"share_hi"`
	Reason       string  `json:"reason"`
}

// Failed reports whether the trial failed the objectives (an uncertain one did not: it was too
// short to say).
func (t Trial) Failed() bool { return strings.HasPrefix(t.Verdict, "fails") }

// MaxExtraReplicas bounds how many replicas beyond the plan a rehearsal tries when the plan
// fails.
const MaxExtraReplicas = 3

// Rehearse tries a plan of planned replicas with try: the planned count; when it fails, up to
// MaxExtraReplicas more, until one holds (more replicas would not answer an uncertain trial, a
// longer one would); and, when the plan has more than one replica, one fewer, which a tight plan
// fails. The trials come in that order.
func Rehearse(planned int, try func(replicas int) (Trial, error)) ([]Trial, error) {
	var out []Trial
	t, err := try(planned)
	if err != nil {
		return out, err
	}
	t.Planned = true
	out = append(out, t)
	if t.Failed() {
		for more := planned + 1; more <= planned+MaxExtraReplicas; more++ {
			x, err := try(more)
			if err != nil {
				return out, err
			}
			out = append(out, x)
			if x.Verdict == "meets" {
				break
			}
		}
	}
	if planned > 1 {
		x, err := try(planned - 1)
		if err != nil {
			return out, err
		}
		out = append(out, x)
	}
	return out, nil
}
