//go:build race

package main

// raceDetector reports whether the tests run under the race detector, which slows the
// in-process deployment's real-time model several times over.
const raceDetector = true
