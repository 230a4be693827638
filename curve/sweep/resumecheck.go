package sweep

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/loadcurve/loadcurve/measure/records"
)

// The settings a resumed sweep must measure as the interrupted one did, in ResumeDifference.What.
const (
	ResumeTarget         = "target"
	ResumeSim            = "embedded deployment"
	ResumeSimConfig      = "embedded deployment's configuration"
	ResumeSimReplicas    = "embedded deployment's replicas"
	ResumeEndpoint       = "endpoint"
	ResumeModel          = "model"
	ResumeWorkload       = "workload"
	ResumeSchedule       = "schedule"
	ResumeSeed           = "seed"
	ResumeMaxConcurrency = "concurrency cap"
	ResumeCachePolicy    = "cache policy"
	ResumeExtraBody      = "extra body"
	ResumeTimeout        = "request timeout"
	ResumeRetries        = "retries"
	ResumeSettings       = "objectives and analysis settings"
)

// ResumeDifference is a setting that the interrupted sweep's records header states one way and
// the resumed sweep's would state another: the resumed sweep would not measure what the
// interrupted one did.
type ResumeDifference struct {
	// What is the setting (a Resume* constant).
	What string
	// Was and Is are its values in the interrupted sweep's header and in the resumed one's, as
	// text ("none" for none).
	Was, Is string
}

// Error says the difference in words: "the seed: the interrupted sweep's records say 1, this
// sweep's would say 2".
func (d ResumeDifference) Error() string { return d.Render(nil) }

// Render says the difference with the setting named by name (what sets it, in the caller's
// words: "the seed (--seed)"), or as "the " + What when name is nil.
func (d ResumeDifference) Render(name func(what string) string) string {
	what := "the " + d.What
	if name != nil {
		what = name(d.What)
	}
	return fmt.Sprintf("%s: the interrupted sweep's records say %s, this sweep's would say %s", what, d.Was, d.Is)
}

// ResumeDifferences compares the records header of an interrupted sweep (old) with the one its
// resumption would write (now): every difference in what is measured (the target, the model it
// serves, the workload, the schedule, the seed, the objectives and analysis settings). The
// embedded deployment's address is not compared: it listens on a new port every time.
func ResumeDifferences(old, now records.Header) []ResumeDifference {
	var out []ResumeDifference
	diff := func(what, was, is string) {
		if was != is {
			out = append(out, ResumeDifference{What: what, Was: orNone(was), Is: orNone(is)})
		}
	}
	js := func(v any) string {
		b, err := json.Marshal(v)
		if err != nil {
			return fmt.Sprint(v)
		}
		return string(b)
	}
	compact := func(raw json.RawMessage) string {
		var b bytes.Buffer
		if json.Compact(&b, raw) != nil {
			return string(raw)
		}
		return b.String()
	}
	if old.Sim == "" || now.Sim == "" {
		diff(ResumeTarget, old.Target, now.Target)
	}
	diff(ResumeSim, old.Sim, now.Sim)
	diff(ResumeSimConfig, compact(old.SimConfig)+compact(old.SimQueueConfig), compact(now.SimConfig)+compact(now.SimQueueConfig))
	diff(ResumeSimReplicas, fmt.Sprint(old.SimReplicas, old.SimBalance), fmt.Sprint(now.SimReplicas, now.SimBalance))
	diff(ResumeEndpoint, old.Endpoint, now.Endpoint)
	diff(ResumeModel, old.Model, now.Model)
	diff(ResumeWorkload, old.Workload, now.Workload)
	diff(ResumeSchedule, old.Arrival, now.Arrival)
	diff(ResumeSeed, strconv.FormatInt(old.Seed, 10), strconv.FormatInt(now.Seed, 10))
	diff(ResumeMaxConcurrency, strconv.Itoa(old.MaxConcurrency), strconv.Itoa(now.MaxConcurrency))
	diff(ResumeCachePolicy, old.CachePolicy, now.CachePolicy)
	diff(ResumeExtraBody, compact(old.ExtraBody), compact(now.ExtraBody))
	diff(ResumeTimeout, fmt.Sprint(old.TimeoutS, " s"), fmt.Sprint(now.TimeoutS, " s"))
	diff(ResumeRetries, strconv.Itoa(old.Retries), strconv.Itoa(now.Retries))
	diff(ResumeSettings, js(old.Settings), js(now.Settings))
	return out
}

func orNone(s string) string {
	if s == "" || s == "null" {
		return "none"
	}
	return s
}
