// Package sweep runs a load curve: it probes where the deployment saturates, places arrival-rate
// tiers around the capacity, runs each tier through a Runner until its verdict is decided (meets
// or misses the target share, overloaded, or not decided in its cap), analyses the tiers into a
// curve (package curve), confirms the operating point it proposes, and writes the result
// directory (its model, and its reading back, are package result's).
//
// Nothing here sends a request: a Runner does (runner.Session against a real target, the
// virtual runners of package virtual on the virtual clock), so the same executor drives a sweep
// of an HTTP endpoint and thousands of sweeps of a simulated queue in a benchmark.
package sweep
