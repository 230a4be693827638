package result

import (
	"encoding/json"

	"github.com/loadcurve/loadcurve/measure"
	"github.com/loadcurve/loadcurve/measure/records"
)

// TierResult is one tier of a result: its identity (with its closing line), its summary and
// what the target's metrics endpoint said over it.
type TierResult struct {
	Tier    records.Tier
	Summary measure.Summary
	Server  json.RawMessage
}
