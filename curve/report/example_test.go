package report_test

import (
	"fmt"
	"math"
	"os"

	"github.com/loadcurve/loadcurve/curve/report"
)

func ExampleTable_Text() {
	f := report.FormatFloat
	t := report.Table{
		Title:     "sweep",
		Columns:   []string{"offered req/s", "p99 TTFT ms", "share"},
		Align:     []bool{true, true, true},
		Rows:      [][]string{{f(4, 1), f(191.25, 1), "99.5 %"}, {f(8, 1), f(204.1, 1), "96.9 %"}, {f(math.Inf(1), 1), f(math.NaN(), 1), "0.0 %"}},
		Highlight: 1,
	}
	if err := t.Text(os.Stdout); err != nil {
		fmt.Println(err)
	}
	// Output:
	// sweep
	// offered req/s  p99 TTFT ms   share
	// -------------  -----------  ------
	//           4.0        191.2  99.5 %
	//           8.0        204.1  96.9 %  ◀ operating point
	//           inf            —   0.0 %
}

func ExampleFormatFloat() {
	fmt.Println(report.FormatFloat(1167.25, 1), report.FormatFloat(-0.001, 2), report.FormatFloat(math.Inf(1), 0), report.FormatFloat(math.NaN(), 3))
	// Output: 1167.2 0.00 inf —
}
