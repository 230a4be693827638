package report_test

import (
	"flag"
	"math"

	"github.com/loadcurve/loadcurve/curve/report"
)

// update rewrites the golden files under testdata/.
var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// plotDir, when set, receives every plot and the HTML page the tests render,
// for a person to look at.
var plotDir = flag.String("plotdir", "", "also write the rendered plots and HTML here")

// sweep builds a constructed load curve with the shape of a real one: output
// throughput rising linearly and saturating at capacity tok/s, latency flat
// then exploding past saturation, compliant share falling. scale stretches
// the latencies (a slower deployment) so that two series differ.
func sweep(name string, capacity, scale float64) report.CurveSeries {
	rates := []float64{1, 2, 4, 6, 8, 10, 12, 14, 16}
	s := report.CurveSeries{Name: name}
	for _, r := range rates {
		offered := 200 * r // 200 output tokens per request
		raw := capacity * (1 - math.Exp(-offered/capacity))
		load := offered / capacity // >1 past saturation
		ttft := 60 * scale * (1 + 0.2*load + 40*math.Pow(math.Max(0, load-0.7), 2))
		share := 1 / (1 + math.Exp(8*(load-1.1)))
		n := 200.0
		// Wilson score interval at 95 % (z = 1.96) for share over n requests.
		z := 1.96
		centre := (share + z*z/(2*n)) / (1 + z*z/n)
		half := z / (1 + z*z/n) * math.Sqrt(share*(1-share)/n+z*z/(4*n*n))
		s.Points = append(s.Points, report.CurvePoint{
			Rate:                      r,
			NominalRate:               r * 0.99,
			RawOutputThroughput:       raw,
			CompliantOutputThroughput: raw * share,
			CompliantRequestShare:     share,
			WilsonLow:                 centre - half,
			WilsonHigh:                centre + half,
			FailureRatio:              math.Max(0, (load-1.2)*0.05),
			Latency: map[string]map[string]float64{
				"ttft": {"p50": ttft, "p90": ttft * 1.8, "p99": ttft * 3},
				"itl":  {"p50": 18 * scale * (1 + 0.3*math.Min(load, 1)), "p90": 25 * scale * (1 + 0.3*math.Min(load, 1)), "p99": 40 * scale * (1 + 0.4*math.Min(load, 1))},
			},
		})
	}
	return s
}

// fixtureCurve is one deployment with every marker, objective and target.
func fixtureCurve() report.Curve {
	return report.Curve{
		Title:          "sim latency-tuned",
		Subtitle:       "model sim-7b · synthetic 512/200 · Poisson · seed 42",
		Series:         []report.CurveSeries{sweep("", 2400, 1)},
		Plateau:        &report.Marker{Label: "plateau", Rate: 12},
		Knee:           &report.Marker{Label: "knee", Rate: 9.5},
		OperatingPoint: &report.Marker{Label: "operating point", Rate: 8},
		Capacity:       &report.Marker{Label: "capacity at objective", Rate: 10},
		Objectives:     map[string]float64{"ttft": 500, "itl": 50},
		TargetShare:    0.95,
	}
}

// compareCurve overlays two deployments.
func compareCurve() report.Curve {
	c := fixtureCurve()
	c.Title = "A vs B"
	c.Series = []report.CurveSeries{sweep("A latency-tuned", 2400, 1), sweep("B throughput-tuned", 3000, 1.6)}
	return c
}
