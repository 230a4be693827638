package arrival_test

import (
	"fmt"

	"github.com/loadcurve/loadcurve/arrival"
)

// A Poisson schedule of five requests at 4 requests/s. The same spec and
// seed always give these offsets.
func ExampleSpec_Offsets() {
	s := arrival.Spec{Rate: 4, Burstiness: arrival.DefaultBurstiness}
	offsets, err := s.Offsets(5, 42)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(s)
	for i, o := range offsets {
		fmt.Printf("request %d at %.6f s\n", i, o.Seconds())
	}
	fmt.Printf("realised rate %.3f/s\n", arrival.RealisedRate(offsets))
	// Output:
	// poisson(rate=4/s)
	// request 0 at 0.021190 s
	// request 1 at 0.547033 s
	// request 2 at 0.637658 s
	// request 3 at 1.002023 s
	// request 4 at 1.026038 s
	// realised rate 4.873/s
}
