package sweep

import "github.com/loadcurve/loadcurve/measure"

// SameObjectives is what a resumed sweep keeps of its objectives: given, the objectives a
// resume states (each argument one or more KEY:MS pairs, as measure.ParseGoodput reads them),
// must be those the interrupted sweep measured against. Those are recorded, as its scenario
// wrote them, unless its records header states them (Objectives), which it does whole (a
// scenario lacks the pairs vLLM's space-separated form leaves as positional arguments). It
// returns the objectives compared against and whether both state the same ones, however
// either is written ("ttft:500 tpot:50", or "ttft:500" "tpot:50", in any order); an argument
// that does not parse states no objectives, so it is never the same.
func (r *Resume) SameObjectives(given, recorded []string) (want []string, same bool) {
	want = recorded
	if o := r.Objectives(); o != "" {
		want = []string{o}
	}
	og, errG := measure.ParseGoodput(given)
	ow, errW := measure.ParseGoodput(want)
	return want, errG == nil && errW == nil && og.String() == ow.String()
}
