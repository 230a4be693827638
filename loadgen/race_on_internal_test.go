//go:build race

package loadgen

// raceEnabled: the race detector is on; it makes sync.Pool drop values at random, so pooled
// paths allocate.
const raceEnabled = true
