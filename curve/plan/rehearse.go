package plan

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/loadcurve/loadcurve/curve"
)

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
	// TargetShare is the share of compliant requests the objectives ask for (the sweep's).
	TargetShare float64 `json:"target_share"`
	Share       float64 `json:"compliant_request_share"`
	ShareLo     float64 `json:"share_lo"`
	ShareHi     float64 `json:"share_hi"`
	Reason      string  `json:"reason"`
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

// TrialConfig is one rehearsal tier: the deployment's name, the replicas it runs on and the
// forecast's peak, with the tier's seed and bounds. The command runs it (sweep.RunTrial) and
// TrialOf says what its verdict means.
type TrialConfig struct {
	Deployment string
	Replicas   int
	Peak       float64
	Seed       int64
	// TierRequests bounds the arrivals the tier plans. 0: as long in time as the sweep's
	// confirmation needed to be (the executor's rule: sweep.TrialTier).
	TierRequests int
	// MaxTierDuration bounds the tier's arrival phase. 0: a confirmation tier's.
	MaxTierDuration time.Duration
}

// TrialOf is the trial tc made, judged by the tier's verdict v (curve's, in steady state, as a
// sweep's tier is: "meets", "fails", "fails (unstable)", "uncertain") against targetShare; ran
// is false when the tier gave no verdict.
func TrialOf(tc TrialConfig, v curve.PointVerdict, ran bool, targetShare float64) Trial {
	t := Trial{Deployment: tc.Deployment, Replicas: tc.Replicas, PeakRate: tc.Peak, RealisedRate: math.NaN(), TargetShare: targetShare,
		Share: math.NaN(), ShareLo: math.NaN(), ShareHi: math.NaN(), Verdict: "no verdict"}
	if !ran {
		return t
	}
	t.RealisedRate, t.Verdict, t.Share, t.ShareLo, t.ShareHi, t.Reason = v.Rate, string(v.Verdict), v.Share, v.ShareLo, v.ShareHi, v.Reason
	if !v.Stable {
		t.Verdict = "fails (unstable)"
	}
	return t
}

// Conclusion says what one deployment's rehearsal (trials as Rehearse returns them: the planned
// count first) means for the plan: whether it holds, whether it is tight (one replica fewer
// fails), and, when it fails, by how much and which count passed.
func Conclusion(trials []Trial) string {
	if len(trials) == 0 {
		return ""
	}
	at := trials[0]
	name, n := at.Deployment, at.Replicas
	var fewer *Trial
	if last := trials[len(trials)-1]; len(trials) > 1 && last.Replicas < n {
		fewer = &last
	}
	switch {
	case at.Verdict == "meets":
		switch {
		case fewer == nil:
			return fmt.Sprintf("%s: the plan holds: %s the objectives.", name, verb(n, "meets", "meet"))
		case fewer.Failed():
			return fmt.Sprintf("%s: the plan holds and is tight: %s the objectives, %s them.", name, verb(n, "meets", "meet"), verb(fewer.Replicas, "fails", "fail"))
		case fewer.Verdict == "meets":
			return fmt.Sprintf("%s: the plan holds with room: %s the objectives too (the plan assumes each replica sees the peak's burstiness; a balancer that smooths it, such as round-robin, needs fewer).", name, verb(fewer.Replicas, "meets", "meet"))
		default:
			return fmt.Sprintf("%s: the plan holds: %s the objectives; %s: %s.", name, verb(n, "meets", "meet"), replicasText(fewer.Replicas), fewer.Verdict)
		}
	case at.Failed():
		short := fmt.Sprintf("%s served %s compliant against the %s target (%.2f points short; its interval reaches %s)",
			replicasText(n), pctText(at.Share), pctText(at.TargetShare), 100*(at.TargetShare-at.Share), pctText(at.ShareHi))
		for _, t := range trials[1:] {
			if t.Replicas > n && t.Verdict == "meets" {
				return fmt.Sprintf("%s: the plan fails its rehearsal: %s. %s the objectives: plan %d.", name, short, verb(t.Replicas, "meets", "meet"), t.Replicas)
			}
		}
		return fmt.Sprintf("%s: the plan fails its rehearsal: %s, and no count up to %d met the objectives: the operating point does not hold at this scale (sweep again).", name, short, n+MaxExtraReplicas)
	case at.Verdict == "uncertain":
		return fmt.Sprintf("%s: the rehearsal of %s was uncertain: a longer tier (--tier-requests, --max-tier-duration) would decide.", name, replicasText(n))
	default:
		return fmt.Sprintf("%s: the rehearsal of %s gave no verdict (%s): %s.", name, replicasText(n), at.Verdict, at.Reason)
	}
}

// verb is "N replicas meet" (or "1 replica meets", with the verb's forms given).
func verb(n int, one, many string) string {
	if n == 1 {
		return "1 replica " + one
	}
	return fmt.Sprintf("%d replicas %s", n, many)
}

func replicasText(n int) string {
	if n == 1 {
		return "1 replica"
	}
	return fmt.Sprintf("%d replicas", n)
}

func pctText(v float64) string {
	if math.IsNaN(v) {
		return "—"
	}
	return strconv.FormatFloat(100*v, 'f', 2, 64) + " %"
}
