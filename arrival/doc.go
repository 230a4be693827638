// Package arrival computes loadcurve's arrival schedules: the planned
// offsets, measured from the tier start T0, at which requests are released.
//
// A schedule is a pure function of its [Spec] and an int64 seed. The
// inter-arrival gap of request i is drawn from Gamma(shape=b,
// scale=1/(r_i·b)), which has mean 1/r_i and coefficient of variation 1/√b:
// b=1 is a Poisson process, b<1 is burstier, b=+Inf is constant spacing and
// a rate of +Inf releases every request at T0. The first request also waits
// one gap, as in vLLM's `vllm bench serve`; unlike vLLM, gaps are never
// rescaled afterwards, so the process stays exact and the realised offered
// rate ([RealisedRate]) may differ from the nominal one.
//
// # How gaps are drawn
//
// Each request consumes exactly one unit-mean draw u_i from a single seeded
// stream (math/rand/v2 PCG, sampled through gonum's distuv.Gamma, or
// distuv.Exponential when b=1), and its gap is u_i/r_i. The stream depends
// only on the seed and b, never on the rate, the ramp or the number of
// requests, so a schedule of n requests is a prefix of one of n+1 requests
// with the same constant-rate spec and seed. With b=+Inf no draw is needed
// and u_i=1 exactly.
//
// Offsets are accumulated in float64 seconds and each is rounded to the
// nearest nanosecond, so the same spec and seed give bit-identical offsets
// on every run and every machine of the same GOARCH (and GOAMD64 level);
// the package tests pin a golden sequence. Builds that fuse multiply-adds
// (arm64, GOAMD64=v3) may differ in the last bit inside gonum's gamma
// sampler and math.Pow/Log1p; the nanosecond rounding absorbs such
// differences unless a value sits on a rounding boundary (the golden
// sequence is unchanged under GOAMD64=v3).
//
// # Ramps
//
// For a count-bound tier ([Spec.Offsets]) ramps follow vLLM: request i of N
// uses the rate r_i = start + (end-start)·i/(N-1) (linear) or
// start·(end/start)^(i/(N-1)) (exponential), with r_0 = start when N=1.
//
// A duration-bound tier ([Spec.OffsetsWithin]) does not know N in advance,
// so there the ramp is a function of elapsed time t over the tier duration
// d: r(t) = start + (end-start)·t/d (linear) or start·(end/start)^(t/d)
// (exponential). The unit-rate gamma renewal process S_k = u_0 + … + u_k is
// mapped through the inverse of the integrated rate Λ(t) = ∫₀ᵗ r, giving
// offset_k = Λ⁻¹(S_k) (time rescaling): the number of arrivals by time t
// is that of the same process at constant unit rate by time Λ(t). For b=1
// this is exactly an inhomogeneous Poisson process of intensity r(t), with
// Λ(d) expected arrivals before d; for other b the rate follows r(t) just
// as a constant-rate gamma process follows its rate.
package arrival
