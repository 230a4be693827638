// Package cost keeps the economic ledger of METRICS.md "Cost": the running
// cost per million effective (compliant) output tokens of a deployment option,
// the comparison of an option B against an option A (relative unit-cost
// change, break-even compliant share and effective throughput), and the
// payback period of a one-time investment from the net savings per period.
//
// Effective throughput is token-weighted: raw output throughput times the
// compliant token share. It is not the request-counted goodput of vLLM's
// benchmark client, and a request share must never be passed as a token share.
//
// The package is pure computation: no I/O, and it imports nothing else of
// loadcurve.
package cost
