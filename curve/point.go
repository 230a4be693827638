package curve

import (
	"encoding/json"
	"fmt"
	"math"
)

// Point is one tier of a sweep as the analysis needs it: the figures of the
// tier's summary (METRICS.md) and its trend test.
type Point struct {
	// Tier is the tier's number in the sweep, used only to name it.
	Tier int
	// OfferedRate is the nominal offered rate in requests per second; +Inf
	// for a tier that sent everything at T0. Such a tier is judged, but is
	// not a point on the rate axis: plateau, knee and capacity use finite
	// tiers only.
	OfferedRate float64
	// RealisedRate is the realised offered rate (requests / last planned
	// offset); 0 when unknown.
	RealisedRate float64
	// RequestThroughput is completed ok requests per second.
	RequestThroughput float64
	// RawOutputThroughput is every output token received, per second.
	RawOutputThroughput float64
	// CompliantOutputThroughput is the compliant requests' output tokens per
	// second (effective output).
	CompliantOutputThroughput float64
	// Issued is the number of requests issued in the tier.
	Issued int
	// Compliant is the number of compliant requests among them.
	Compliant int
	// CompliantTokenShare is compliant over raw output tokens (reported,
	// never used as a request share).
	CompliantTokenShare float64
	// TimeoutRatio and FailureRatio are the shares of issued requests that
	// timed out, and that failed in any other way.
	TimeoutRatio, FailureRatio float64
	// ClientBound marks a tier whose schedule lag said the client, not the
	// server, shaped the load.
	ClientBound bool
	// Trend is the stability of the tier's queueing ([TrendTest]); the zero
	// Trend means "not tested".
	Trend Trend
}

// pointJSON is Point on the wire: snake_case keys, null for a number that is
// not finite, and offered_rate_inf for the unbounded rate.
type pointJSON struct {
	Tier                      int      `json:"tier"`
	OfferedRate               *float64 `json:"offered_rate"`
	OfferedRateInf            bool     `json:"offered_rate_inf,omitempty"`
	RealisedRate              *float64 `json:"realised_rate"`
	RequestThroughput         *float64 `json:"request_throughput"`
	RawOutputThroughput       *float64 `json:"raw_output_throughput"`
	CompliantOutputThroughput *float64 `json:"compliant_output_throughput"`
	Issued                    int      `json:"issued"`
	Compliant                 int      `json:"compliant"`
	CompliantTokenShare       *float64 `json:"compliant_token_share"`
	TimeoutRatio              *float64 `json:"timeout_ratio"`
	FailureRatio              *float64 `json:"failure_ratio"`
	ClientBound               bool     `json:"client_bound"`
	Trend                     Trend    `json:"trend"`
}

// MarshalJSON writes snake_case keys and never NaN or Inf: a non-finite
// number is null, and an offered rate of +Inf is null with
// "offered_rate_inf": true.
func (p Point) MarshalJSON() ([]byte, error) {
	j := pointJSON{
		Tier:                      p.Tier,
		OfferedRate:               finite(p.OfferedRate),
		OfferedRateInf:            math.IsInf(p.OfferedRate, 1),
		RealisedRate:              finite(p.RealisedRate),
		RequestThroughput:         finite(p.RequestThroughput),
		RawOutputThroughput:       finite(p.RawOutputThroughput),
		CompliantOutputThroughput: finite(p.CompliantOutputThroughput),
		Issued:                    p.Issued,
		Compliant:                 p.Compliant,
		CompliantTokenShare:       finite(p.CompliantTokenShare),
		TimeoutRatio:              finite(p.TimeoutRatio),
		FailureRatio:              finite(p.FailureRatio),
		ClientBound:               p.ClientBound,
		Trend:                     p.Trend,
	}
	b, err := json.Marshal(j)
	if err != nil {
		return nil, fmt.Errorf("encoding tier %d: %w", p.Tier, err)
	}
	return b, nil
}

// UnmarshalJSON reads what MarshalJSON writes; null numbers become NaN
// (offered_rate_inf gives +Inf).
func (p *Point) UnmarshalJSON(b []byte) error {
	var j pointJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return fmt.Errorf("decoding a curve point: %w", err)
	}
	*p = Point{
		Tier:                      j.Tier,
		OfferedRate:               orNaN(j.OfferedRate),
		RealisedRate:              orNaN(j.RealisedRate),
		RequestThroughput:         orNaN(j.RequestThroughput),
		RawOutputThroughput:       orNaN(j.RawOutputThroughput),
		CompliantOutputThroughput: orNaN(j.CompliantOutputThroughput),
		Issued:                    j.Issued,
		Compliant:                 j.Compliant,
		CompliantTokenShare:       orNaN(j.CompliantTokenShare),
		TimeoutRatio:              orNaN(j.TimeoutRatio),
		FailureRatio:              orNaN(j.FailureRatio),
		ClientBound:               j.ClientBound,
		Trend:                     j.Trend,
	}
	if j.OfferedRateInf {
		p.OfferedRate = math.Inf(1)
	}
	return nil
}

// trendJSON is Trend on the wire, with null for a non-finite number.
type trendJSON struct {
	Tested      bool     `json:"tested"`
	N           int      `json:"n"`
	SlopeMsPerS *float64 `json:"slope_ms_per_s"`
	Growth      *float64 `json:"growth_ms"`
	PValue      *float64 `json:"p_value"`
	Growing     bool     `json:"growing"`
	Reason      string   `json:"reason,omitempty"`
}

// MarshalJSON writes snake_case keys with null for a non-finite number
// (TrendTest itself never produces one). Decoding uses the struct tags: a
// null leaves the field 0.
func (t Trend) MarshalJSON() ([]byte, error) {
	b, err := json.Marshal(trendJSON{
		Tested:      t.Tested,
		N:           t.N,
		SlopeMsPerS: finite(t.SlopeMsPerS),
		Growth:      finite(t.Growth),
		PValue:      finite(t.PValue),
		Growing:     t.Growing,
		Reason:      t.Reason,
	})
	if err != nil {
		return nil, fmt.Errorf("encoding a trend: %w", err)
	}
	return b, nil
}

func finite(v float64) *float64 {
	if !isFinite(v) {
		return nil
	}
	return &v
}

func orNaN(v *float64) float64 {
	if v == nil {
		return math.NaN()
	}
	return *v
}
