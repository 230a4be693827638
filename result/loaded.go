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

// ReadPeaks sets the vLLM peak figures of a one-tier result (the Peaks of summary.json): from
// the records in memory, or from the file read again in bounded memory. A sweep has none.
func (l *Loaded) ReadPeaks() error {
	if !l.Result.Shape().OneTier() {
		return nil
	}
	if l.File != nil {
		l.Result.Peaks = PeaksOf(l.File)
		return nil
	}
	p, err := PeaksOfFile(l.Path)
	if err != nil {
		return err
	}
	l.Result.Peaks = p
	return nil
}
