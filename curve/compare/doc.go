// Package compare puts two results ([result.Result]) side by side
// ([Results]): the comparability check of DESIGN.md "Comparability"
// ([Check]: request sets, schedules, seeds, cache policy, metric definitions,
// objectives, request body parameters, common rates), the tiers at equal
// rate, paired comparisons of a per-request metric over the request ids both
// runs share ([Paired], [PairedBootstrap]), both sides' decisions and the cost
// ledger at their operating points and at equal load.
//
// The paired comparison estimates the median of the differences d = B − A
// with a distribution-free confidence interval from order statistics (the
// interval that inverts the sign test), and cross-checks it with a seeded
// paired bootstrap. Apart from reading and writing compare.json
// ([ReadResult], [Result.Write]) it is pure computation.
package compare
