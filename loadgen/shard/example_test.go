package shard_test

import (
	"fmt"
	"time"

	"github.com/loadcurve/loadcurve/loadgen/shard"
	"github.com/loadcurve/loadcurve/workloads"
)

// Shard 1 of 3 keeps every third request, at its global offset and under its global id.
func ExampleSpec_Filter() {
	sp, err := shard.Parse("1/3")
	if err != nil {
		panic(err)
	}
	offsets := []time.Duration{100, 250, 300, 420, 500, 610, 700} // ms, say
	reqs := make([]workloads.Request, len(offsets))
	for i := range reqs {
		reqs[i].ID = i
	}
	offs, mine := sp.Filter(offsets, reqs)
	for i := range mine {
		fmt.Printf("id %d at %d\n", mine[i].ID, offs[i])
	}
	fmt.Println("planned by this shard:", sp.OwnedCount(len(reqs)))
	// Output:
	// id 1 at 250
	// id 4 at 500
	// planned by this shard: 2
}
