package plan

import (
	"fmt"
	"math"
	"strconv"

	"github.com/loadcurve/loadcurve/internal/field"
)

// Deployment is one replica of a deployment as measured at its operating point, and priced.
type Deployment struct {
	// Name labels the deployment in results and messages (e.g. "H100 TP8").
	Name string `json:"name"`
	// OperatingRate is the request rate (req/s) one replica carries at its verified operating
	// point: the capacity less the headroom. Finite and > 0.
	OperatingRate float64 `json:"operating_rate"`
	// Capacity is one replica's capacity (req/s) at the objectives, used only for the
	// utilisation at peak; 0 means unknown. Otherwise finite and ≥ OperatingRate.
	Capacity float64 `json:"capacity"`
	// CapacityIsLowerBound says the sweep only showed the capacity to be at least Capacity
	// (every tier it judged met the objectives): a utilisation of it is then at most the figure.
	CapacityIsLowerBound bool `json:"capacity_is_lower_bound,omitempty"`
	// CompliantTokensPerRequest is the compliant (effective) output tokens per request at the
	// operating point: the compliant requests' output tokens over the requests ([FromResult]
	// counts them in the records). Finite and > 0.
	CompliantTokensPerRequest float64 `json:"compliant_tokens_per_request"`
	// RawTokensPerRequest is every output token per request at the operating point, whatever
	// the request's outcome. Finite and ≥ CompliantTokensPerRequest.
	RawTokensPerRequest float64 `json:"raw_tokens_per_request"`
	// Tokens is the count the two figures above come from, when they were counted from records
	// ([FromResult]); nil when they were given, or estimated from throughputs ([FromAnalysis]).
	Tokens *TokenCount `json:"tokens_counted,omitempty"`
	// CostPerHour is the running cost of one replica per hour. Finite and > 0.
	CostPerHour float64 `json:"cost_per_hour"`
	// OneTimeCost is what adopting this deployment costs once (migration, first acceptance);
	// optional, finite and ≥ 0. [CompareDeployments] uses it for the payback of the difference.
	OneTimeCost float64 `json:"one_time_cost,omitempty"`
	// Source says where the figures come from (e.g. "confirmation tier 8"); optional.
	Source string `json:"source,omitempty"`
	// Verified says whether the sweep verified the operating point (curve.OperatingPoint:
	// Verified), and Verification why or why not, in the sweep's own sentence; a plan from an
	// unverified point says so wherever it states its replicas. Both are empty for figures given
	// rather than read from a sweep.
	Verified     bool   `json:"verified"`
	Verification string `json:"verification,omitempty"`
}

// Unverified reports whether d comes from a sweep that did not verify its operating point.
func (d Deployment) Unverified() bool { return !d.Verified && d.Verification != "" }

// Names of the inputs in field errors, as a command line would name its flags (without a
// deployment prefix such as "a-").
const (
	FieldOperatingRate             = "operating-rate"
	FieldCapacity                  = "capacity"
	FieldCompliantTokensPerRequest = "compliant-tokens-per-request"
	FieldRawTokensPerRequest       = "raw-tokens-per-request"
	FieldCostPerHour               = "cost-per-hour"
	FieldOneTimeCost               = "one-time-cost"
	FieldScaleUpLag                = "scale-up-lag"
	FieldHoursPerMonth             = "hours-per-month"
	FieldMaxScale                  = "max-scale"
	FieldCurrency                  = "currency"
)

// Validate returns every problem of d at once (nil when it is valid). Each error wraps a
// *field.Error named by one of the Field* constants, and its message names the deployment
// when it has a name.
func (d Deployment) Validate() []error {
	var errs []error
	label := "deployment"
	if d.Name != "" {
		label = fmt.Sprintf("deployment %q", d.Name)
	}
	add := func(name, format string, a ...any) {
		errs = append(errs, fmt.Errorf("%s: %w", label, field.Errorf(name, format, a...)))
	}
	if !(finite(d.OperatingRate) && d.OperatingRate > 0) {
		add(FieldOperatingRate, "%s req/s: must be a finite rate > 0, what one replica carries at its verified operating point (is there an operating point?)", num(d.OperatingRate))
	}
	switch {
	case !finite(d.Capacity) || d.Capacity < 0:
		add(FieldCapacity, "%s req/s: must be a finite rate ≥ the operating rate, or 0 when unknown", num(d.Capacity))
	case d.Capacity > 0 && finite(d.OperatingRate) && d.Capacity < d.OperatingRate:
		add(FieldCapacity, "%s req/s is below the operating rate %s req/s: the operating point is the capacity less the headroom", num(d.Capacity), num(d.OperatingRate))
	}
	if !(finite(d.CompliantTokensPerRequest) && d.CompliantTokensPerRequest > 0) {
		add(FieldCompliantTokensPerRequest, "%s: must be a finite number > 0 (a verified operating point delivers compliant output)", num(d.CompliantTokensPerRequest))
	}
	switch {
	case !(finite(d.RawTokensPerRequest) && d.RawTokensPerRequest > 0):
		add(FieldRawTokensPerRequest, "%s: must be a finite number > 0", num(d.RawTokensPerRequest))
	case finite(d.CompliantTokensPerRequest) && d.RawTokensPerRequest < d.CompliantTokensPerRequest:
		add(FieldRawTokensPerRequest, "%s is below the compliant tokens per request %s: compliant tokens are a part of the raw ones", num(d.RawTokensPerRequest), num(d.CompliantTokensPerRequest))
	}
	if !(finite(d.CostPerHour) && d.CostPerHour > 0) {
		add(FieldCostPerHour, "%s: must be a finite cost > 0 per replica-hour", num(d.CostPerHour))
	}
	if !finite(d.OneTimeCost) || d.OneTimeCost < 0 {
		add(FieldOneTimeCost, "%s: must be a finite cost ≥ 0 (0 when there is none)", num(d.OneTimeCost))
	}
	return errs
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// num formats v for people: at most 6 significant digits, no exponent for ordinary sizes.
func num(v float64) string {
	if v == 0 || !finite(v) {
		return strconv.FormatFloat(v, 'g', -1, 64)
	}
	if a := math.Abs(v); a >= 1e15 || a < 1e-6 {
		return strconv.FormatFloat(v, 'g', 6, 64)
	}
	d := 6 - int(math.Ceil(math.Log10(math.Abs(v))))
	if d < 0 {
		p := math.Pow(10, float64(-d))
		return strconv.FormatFloat(math.Round(v/p)*p, 'f', 0, 64)
	}
	p := math.Pow(10, float64(d))
	return strconv.FormatFloat(math.Round(v*p)/p, 'f', -1, 64)
}
