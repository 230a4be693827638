package curve

import (
	"encoding/json"

	"github.com/loadcurve/loadcurve/measure"
)

// pointJSON is PointVerdict on the wire: an undefined number (the fit of an unstable tier, the
// rate of a tier without a window) is null, not an encoding error.
type pointJSON struct {
	Tier                      int                 `json:"tier"`
	NominalRate               measure.Number      `json:"nominal_rate"`
	Rate                      measure.Number      `json:"realised_rate"`
	RequestThroughput         measure.Number      `json:"request_throughput"`
	RawOutputThroughput       measure.Number      `json:"raw_output_throughput"`
	CompliantOutputThroughput measure.Number      `json:"compliant_output_throughput"`
	Requests                  int                 `json:"window_requests"`
	Share                     measure.Number      `json:"compliant_request_share"`
	EffectiveRequests         measure.Number      `json:"effective_requests"`
	ShareLo                   measure.Number      `json:"share_lo"`
	ShareHi                   measure.Number      `json:"share_hi"`
	Verdict                   Verdict             `json:"verdict"`
	Stable                    bool                `json:"stable"`
	Fit                       measure.Number      `json:"fitted_share"`
	FitLo                     measure.Number      `json:"fitted_share_lo"`
	FitHi                     measure.Number      `json:"fitted_share_hi"`
	OnPlateau                 bool                `json:"on_plateau"`
	GainPerDoubling           *float64            `json:"gain_per_doubling"`
	Reason                    string              `json:"reason"`
	Pooled                    []int               `json:"pooled_tiers,omitempty"`
	Controlled                *measure.Controlled `json:"controlled,omitempty"`
	MeasuredShare             *measure.Number     `json:"measured_share,omitempty"`
}

// MarshalJSON implements json.Marshaler.
func (v PointVerdict) MarshalJSON() ([]byte, error) {
	return json.Marshal(pointJSON{Tier: v.Tier, NominalRate: measure.Number(v.NominalRate), Rate: measure.Number(v.Rate),
		RequestThroughput: measure.Number(v.RequestThroughput), RawOutputThroughput: measure.Number(v.RawOutputThroughput),
		CompliantOutputThroughput: measure.Number(v.CompliantOutputThroughput), Requests: v.Requests, Share: measure.Number(v.Share),
		EffectiveRequests: measure.Number(v.EffectiveRequests), ShareLo: measure.Number(v.ShareLo), ShareHi: measure.Number(v.ShareHi),
		Verdict: v.Verdict, Stable: v.Stable, Fit: measure.Number(v.Fit), FitLo: measure.Number(v.FitLo), FitHi: measure.Number(v.FitHi),
		OnPlateau: v.OnPlateau, GainPerDoubling: v.GainPerDoubling, Reason: v.Reason, Pooled: v.Pooled, Controlled: v.Controlled, MeasuredShare: measured(v)})
}

// UnmarshalJSON implements json.Unmarshaler.
func (v *PointVerdict) UnmarshalJSON(b []byte) error {
	var j pointJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*v = PointVerdict{Tier: j.Tier, NominalRate: float64(j.NominalRate), Rate: float64(j.Rate),
		RequestThroughput: float64(j.RequestThroughput), RawOutputThroughput: float64(j.RawOutputThroughput),
		CompliantOutputThroughput: float64(j.CompliantOutputThroughput), Requests: j.Requests, Share: float64(j.Share),
		EffectiveRequests: float64(j.EffectiveRequests), ShareLo: float64(j.ShareLo), ShareHi: float64(j.ShareHi),
		Verdict: j.Verdict, Stable: j.Stable, Fit: float64(j.Fit), FitLo: float64(j.FitLo), FitHi: float64(j.FitHi),
		OnPlateau: j.OnPlateau, GainPerDoubling: j.GainPerDoubling, Reason: j.Reason, Pooled: j.Pooled, Controlled: j.Controlled}
	if j.MeasuredShare != nil {
		v.MeasuredShare = float64(*j.MeasuredShare)
	}
	return nil
}

// measured is a controlled point's measured share, nil for one not controlled.
func measured(v PointVerdict) *measure.Number {
	if v.Controlled == nil {
		return nil
	}
	n := measure.Number(v.MeasuredShare)
	return &n
}

// confirmationJSON is Confirmation on the wire.
type confirmationJSON struct {
	Tier                      int            `json:"tier"`
	NominalRate               measure.Number `json:"nominal_rate"`
	AtThisPoint               bool           `json:"at_this_operating_point"`
	Rate                      measure.Number `json:"realised_rate"`
	Share                     measure.Number `json:"compliant_request_share"`
	ShareLo                   measure.Number `json:"share_lo"`
	ShareHi                   measure.Number `json:"share_hi"`
	EffectiveRequests         measure.Number `json:"effective_requests"`
	Verdict                   Verdict        `json:"verdict"`
	RequestThroughput         measure.Number `json:"request_throughput"`
	RawOutputThroughput       measure.Number `json:"raw_output_throughput"`
	CompliantOutputThroughput measure.Number `json:"compliant_output_throughput"`
	Reason                    string         `json:"reason"`
	ConfidenceReached         measure.Number `json:"confidence_reached"`
	Pooled                    []int          `json:"pooled_tiers,omitempty"`
	RequestsToDecide          measure.Number `json:"requests_to_decide,omitempty"`
}

// MarshalJSON implements json.Marshaler.
func (c Confirmation) MarshalJSON() ([]byte, error) {
	return json.Marshal(confirmationJSON{Tier: c.Tier, NominalRate: measure.Number(c.NominalRate), AtThisPoint: c.AtThisPoint,
		Rate: measure.Number(c.Rate), Share: measure.Number(c.Share), ShareLo: measure.Number(c.ShareLo), ShareHi: measure.Number(c.ShareHi),
		EffectiveRequests: measure.Number(c.EffectiveRequests), Verdict: c.Verdict, RequestThroughput: measure.Number(c.RequestThroughput),
		RawOutputThroughput: measure.Number(c.RawOutputThroughput), CompliantOutputThroughput: measure.Number(c.CompliantOutputThroughput),
		Reason: c.Reason, ConfidenceReached: measure.Number(c.ConfidenceReached), Pooled: c.Pooled, RequestsToDecide: measure.Number(c.RequestsToDecide)})
}

// UnmarshalJSON implements json.Unmarshaler.
func (c *Confirmation) UnmarshalJSON(b []byte) error {
	var j confirmationJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*c = Confirmation{Tier: j.Tier, NominalRate: float64(j.NominalRate), AtThisPoint: j.AtThisPoint, Rate: float64(j.Rate),
		Share: float64(j.Share), ShareLo: float64(j.ShareLo), ShareHi: float64(j.ShareHi), EffectiveRequests: float64(j.EffectiveRequests),
		Verdict: j.Verdict, RequestThroughput: float64(j.RequestThroughput), RawOutputThroughput: float64(j.RawOutputThroughput),
		CompliantOutputThroughput: float64(j.CompliantOutputThroughput), Reason: j.Reason, ConfidenceReached: float64(j.ConfidenceReached), Pooled: j.Pooled,
		RequestsToDecide: float64(j.RequestsToDecide)}
	return nil
}
