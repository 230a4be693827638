package main

import (
	"context"
	"io"
	"testing"
)

// BenchmarkCommandStart is what every invocation pays before it does anything: the app with
// its eleven commands and their flags built, sweep's ~230 flags parsed and read, and a usage
// error returned (so nothing is started). urfave/cli computed each flag's names with a regular
// expression on every lookup, and asked whether every flag was set: clihelp.Fast keeps them.
func BenchmarkCommandStart(b *testing.B) {
	args := []string{"loadcurve", "sweep", "--request-rates", "1,2", "--goodput", "ttft:500", "--max-tiers", "0"}
	for b.Loop() {
		if code := runApp(context.Background(), args, io.Discard, io.Discard); code != exitUsage {
			b.Fatalf("exit %d, want %d", code, exitUsage)
		}
	}
}
