// Package compare holds the statistics for putting two result sets side by
// side: the comparability check of DESIGN.md "Comparability" ([Check]) and
// paired comparisons of a per-request metric over the request ids both runs
// share ([Paired], [PairedBootstrap]).
//
// The paired comparison estimates the median of the differences d = B − A
// with a distribution-free confidence interval from order statistics (the
// interval that inverts the sign test), and cross-checks it with a seeded
// paired bootstrap. It is pure computation: no I/O, and it imports nothing
// else of loadcurve.
package compare
