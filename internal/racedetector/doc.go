// Package racedetector says whether the program was built with the race detector (-race).
// The statistical tests that run many sweeps on the virtual clock use it to run their short
// form under -race, where the detector checks the code paths and costs ten to twenty times
// the CPU; the README's test command runs them again, at full strength, without it. The
// packages that start no goroutine (report, plan) run their tests natively only
// (RunNatively).
package racedetector
