package curve

import (
	"math"
	"strconv"
	"strings"

	"github.com/loadcurve/loadcurve/measure"
	"github.com/loadcurve/loadcurve/measure/records"
)

// pool merges the tiers of one role that ran at the same nominal rate into one point of the
// curve: a sweep extends a tier whose verdict is not yet decided by running another at its rate,
// and the two are one measurement of that rate (measure.PoolSteady). Only open tiers at a
// finite rate whose figures are the deployment's are pooled (not interrupted, cut or
// client-bound: judge excludes those on their own). The merged summary is the first tier's,
// with the pooled steady state; members maps its tier to every tier in it, in order.
func pool(ss []measure.Summary) (out []measure.Summary, members map[int][]int) {
	type key struct {
		role records.Role
		rate float64
	}
	groups := map[key][]int{}
	var order []key
	for i, s := range ss {
		if !poolable(s) {
			continue
		}
		k := key{s.Role, s.NominalRate}
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		groups[k] = append(groups[k], i)
	}
	members = map[int][]int{}
	merged := map[int]bool{} // indices folded into an earlier one
	pooled := map[int]measure.Summary{}
	for _, k := range order {
		idx := groups[k]
		if len(idx) < 2 {
			continue
		}
		first := ss[idx[0]]
		parts := make([]*measure.Steady, 0, len(idx))
		tiers := make([]int, 0, len(idx))
		for _, i := range idx {
			parts = append(parts, ss[i].Steady)
			tiers = append(tiers, ss[i].Tier)
			if i != idx[0] {
				merged[i] = true
			}
		}
		first.Steady = measure.PoolSteady(parts...)
		pooled[idx[0]] = first
		members[first.Tier] = tiers
	}
	for i, s := range ss {
		switch {
		case merged[i]:
		case pooled[i].Steady != nil:
			out = append(out, pooled[i])
		default:
			out = append(out, s)
		}
	}
	return out, members
}

// poolable reports whether a tier may be pooled with others at its rate.
func poolable(s measure.Summary) bool {
	return AxisOf(s).Pools() && s.Steady != nil && !s.Interrupted && s.Recorded >= s.Planned && !s.ClientBound &&
		isFinite(s.NominalRate) && s.NominalRate > 0 && !math.IsInf(s.NominalRate, 1) && s.Role != records.RoleProbe
}

// tierList writes tiers as people read them: "3", "3+7", "3+7+9".
func tierList(tiers []int) string {
	parts := make([]string, len(tiers))
	for i, t := range tiers {
		parts[i] = strconv.Itoa(t)
	}
	return strings.Join(parts, "+")
}
