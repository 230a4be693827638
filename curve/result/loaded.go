package result

import "github.com/loadcurve/loadcurve/curve"

// FiguresAt are the figures a cost option takes from this result: the steady-state figures of
// curve tier tier when tier ≥ 0 (TierFigures), else the priced ones (PricedFigures: at the
// operating point, the confirmation's measured figures when it verified it).
func (r *Result) FiguresAt(tier int) (curve.Figures, error) {
	if tier >= 0 {
		return r.TierFigures(tier)
	}
	return r.PricedFigures()
}
