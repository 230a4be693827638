package curve_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/loadcurve/loadcurve/curve"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// tier builds a constructed tier: issued requests of which round(share·issued)
// are compliant, raw output throughput raw (tok/s), compliant throughput in
// proportion, and a trend verdict (tested).
func tier(n int, rate float64, issued int, share, raw float64, growing bool) curve.Point {
	compliant := int(math.Round(share * float64(issued)))
	tr := curve.Trend{Tested: true, N: issued, PValue: 0.4, Reason: "stable: constructed"}
	if growing {
		tr.PValue, tr.Growing, tr.SlopeMsPerS, tr.Growth, tr.Reason = 1e-9, true, 100, 6000, "growing: constructed"
	}
	return curve.Point{
		Tier: n, OfferedRate: rate, RealisedRate: rate,
		RequestThroughput:         rate,
		RawOutputThroughput:       raw,
		CompliantOutputThroughput: raw * float64(compliant) / float64(issued),
		CompliantTokenShare:       float64(compliant) / float64(issued),
		Issued:                    issued, Compliant: compliant,
		Trend: tr,
	}
}

// Saturating deployment: raw throughput k·r up to the cap r = 10 req/s,
// then flat; compliant share 1 up to the cap and 10/r beyond; queueing
// grows beyond the cap.
const (
	satK   = 100.0 // tok/s per req/s
	satCap = 10.0  // req/s
)

func saturating(rates ...float64) []curve.Point {
	var pts []curve.Point
	for i, r := range rates {
		pts = append(pts, tier(i+1, r, 1000, math.Min(1, satCap/r), satK*math.Min(r, satCap), r > satCap))
	}
	return pts
}

func hasNote(a curve.Analysis, sub string) bool {
	return slices.ContainsFunc(a.Notes, func(n string) bool { return strings.Contains(n, sub) })
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

func TestAnalyzeSaturating(t *testing.T) {
	pts := saturating(2, 4, 6, 8, 10, 12, 14, 16)
	a := curve.Analyze(pts, curve.DefaultParams())

	// Plateau: the tier at the cap (10 req/s, tier 5) is the first from which
	// throughput stays flat; the step 8 → 10 gains (10/8)^(1/log2(10/8)) − 1
	// = 100 % per doubling, 10 → 12 gains 0.
	if a.Plateau == nil {
		t.Fatalf("no plateau; notes:\n%s", strings.Join(a.Notes, "\n"))
	}
	want := curve.Plateau{StartTier: 5, StartRate: 10, Throughput: satK * satCap, MarginalGain: 0, Tiers: 4}
	if *a.Plateau != want {
		t.Errorf("plateau %+v, want %+v", *a.Plateau, want)
	}
	for _, v := range a.Points {
		if on := v.Point.OfferedRate >= satCap; v.OnPlateau != on {
			t.Errorf("%v req/s: OnPlateau %v", v.Point.OfferedRate, v.OnPlateau)
		}
	}
	if g := a.Points[3].GainPerDoubling; g == nil || !near(*g, 1) {
		t.Errorf("gain per doubling 6 → 8 = %v, want 1", g)
	}
	if a.Points[0].GainPerDoubling != nil {
		t.Error("the first tier has a gain per doubling")
	}

	// Knee: the first tier past the cap, 12 req/s: 833 of 1000 compliant,
	// clearly below 99 %, and growing; after tier 5 (10 req/s).
	if a.Knee == nil {
		t.Fatal("no knee")
	}
	k := *a.Knee
	if k.Tier != 6 || k.Rate != 12 || !k.ClearlyFails || !k.Unstable || k.AfterTier != 5 || k.AfterRate != 10 || k.CompliantShare != 0.833 {
		t.Errorf("knee %+v", k)
	}

	// Capacity: share crosses 0.99 between (10, 1) and (12, 0.833):
	// 10 + (1 − 0.99)/(1 − 0.833)·2.
	wantCap := 10 + (1-0.99)/(1-0.833)*2
	if a.Capacity == nil || !near(a.Capacity.Rate, wantCap) || a.Capacity.Method != curve.CapacityInterpolated ||
		a.Capacity.FromTier != 5 || a.Capacity.ToTier == nil || *a.Capacity.ToTier != 6 {
		t.Fatalf("capacity %+v, want %v interpolated from tier 5 to 6", a.Capacity, wantCap)
	}

	// Operating point: capacity·(1 − 0.2); its compliant throughput lies on
	// the segment (8, 800)–(10, 1000), i.e. 100 tok/s per req/s.
	op := a.OperatingPoint
	if op == nil || !near(op.Rate, wantCap*0.8) || !near(op.ExpectedCompliantThroughput, satK*wantCap*0.8) ||
		!near(op.ExpectedRawThroughput, satK*wantCap*0.8) {
		t.Errorf("operating point %+v, want rate %v", op, wantCap*0.8)
	}

	for i, v := range a.Points {
		want := curve.VerdictMeets
		if v.Point.OfferedRate > satCap {
			want = curve.VerdictFails
		}
		if v.Verdict != want || v.MeetsTarget != (want == curve.VerdictMeets) || v.Stable != (v.Point.OfferedRate <= satCap) {
			t.Errorf("point %d: %+v", i, v)
		}
	}
	for _, sub := range []string{"plateau at tier 5 (10 req/s)", "knee at tier 6 (12 req/s)", "capacity 10.12 req/s", "operating point 8.096 req/s",
		"headroom 20 %", "compliant request share ≥ 99 %", "before the objective gives out (knee at 12 req/s)"} {
		if !hasNote(a, sub) {
			t.Errorf("no note says %q; notes:\n%s", sub, strings.Join(a.Notes, "\n"))
		}
	}
}

func TestAnalyzeNeverSaturates(t *testing.T) {
	// Throughput proportional to load all the way, every tier compliant: no
	// plateau, no knee, capacity only a lower bound at the top tier.
	pts := saturating(1, 2, 4, 8) // all below the cap
	a := curve.Analyze(pts, curve.DefaultParams())
	if a.Plateau != nil || a.Knee != nil {
		t.Errorf("invented plateau %+v or knee %+v", a.Plateau, a.Knee)
	}
	if !hasNote(a, "never saturates") || !hasNote(a, "no knee") {
		t.Errorf("notes do not say it:\n%s", strings.Join(a.Notes, "\n"))
	}
	if a.Capacity == nil || a.Capacity.Rate != 8 || a.Capacity.Method != curve.CapacityLowerBound || a.Capacity.ToTier != nil {
		t.Errorf("capacity %+v, want lower bound 8", a.Capacity)
	}
	if a.OperatingPoint == nil || !near(a.OperatingPoint.Rate, 6.4) || !strings.Contains(a.OperatingPoint.Reason, "lower bound") {
		t.Errorf("operating point %+v", a.OperatingPoint)
	}
}

func TestAnalyzeFirstTierFails(t *testing.T) {
	pts := []curve.Point{
		tier(1, 1, 500, 0.5, 100, false),
		tier(2, 2, 500, 0.4, 200, false),
		tier(3, 4, 500, 0.3, 205, false),
	}
	a := curve.Analyze(pts, curve.DefaultParams())
	if a.Capacity != nil || a.OperatingPoint != nil || a.Knee != nil {
		t.Errorf("capacity %+v, operating point %+v, knee %+v; want none", a.Capacity, a.OperatingPoint, a.Knee)
	}
	if !hasNote(a, "even the lightest tier misses the objective") || !hasNote(a, "no tier met the objective") {
		t.Errorf("notes:\n%s", strings.Join(a.Notes, "\n"))
	}
	// The plateau does not depend on compliance: 2 → 4 req/s gains
	// (205/200)^1 − 1 = 2.5 % per doubling, below 5 %.
	if a.Plateau == nil || a.Plateau.StartTier != 2 || !hasNote(a, "plateau rests on a single step") {
		t.Errorf("plateau %+v, want from tier 2", a.Plateau)
	}
}

func TestAnalyzeCapacityInterpolation(t *testing.T) {
	// A linear segment: share 1 at 8 req/s, 0.9 at 12 req/s, i.e.
	// share(r) = 1 − 0.025·(r − 8). It equals the target T at
	// r = 8 + (1 − T)/0.025.
	for _, tt := range []struct{ target, want float64 }{
		{0.99, 8.4}, {0.95, 10}, {0.91, 11.6}, {1, 8},
	} {
		pts := []curve.Point{tier(1, 8, 1000, 1, 800, false), tier(2, 12, 1000, 0.9, 1080, false)}
		a := curve.Analyze(pts, curve.Params{TargetShare: tt.target})
		if a.Capacity == nil || !near(a.Capacity.Rate, tt.want) {
			t.Errorf("target %v: capacity %+v, want %v", tt.target, a.Capacity, tt.want)
		}
	}
}

func TestAnalyzeOperatingPoint(t *testing.T) {
	// Operating point = capacity·(1 − headroom), whatever the headroom.
	pts := []curve.Point{tier(1, 8, 1000, 1, 800, false), tier(2, 12, 1000, 0.9, 1080, false)}
	for _, h := range []float64{0, 0.1, 0.2, 0.5, 0.99} {
		p := curve.DefaultParams()
		p.Headroom = h
		a := curve.Analyze(pts, p)
		if a.Params.Headroom != h {
			t.Errorf("headroom echoed %v, want %v", a.Params.Headroom, h)
		}
		if a.OperatingPoint == nil || !near(a.OperatingPoint.Rate, 8.4*(1-h)) {
			t.Errorf("headroom %v: operating point %+v, want %v", h, a.OperatingPoint, 8.4*(1-h))
		}
		// Below the first tier the expectation runs through the origin:
		// 100 tok/s per req/s up to 8 req/s.
		if r := 8.4 * (1 - h); r <= 8 && !near(a.OperatingPoint.ExpectedCompliantThroughput, 100*r) {
			t.Errorf("headroom %v: expected compliant %v, want %v", h, a.OperatingPoint.ExpectedCompliantThroughput, 100*r)
		}
		if (h == 0) != hasNote(a, "headroom is 0") {
			t.Errorf("headroom %v: zero-headroom warning wrong", h)
		}
	}
}

func TestAnalyzeUncertainIsNotAKnee(t *testing.T) {
	// 9 of 10 compliant against 0.95: share 0.9 is below, but the Wilson
	// upper bound 0.982 is above: uncertain.
	p := curve.Params{TargetShare: 0.95}
	light := tier(1, 1, 100, 1, 100, false)
	short := tier(2, 2, 10, 0.9, 200, false)
	a := curve.Analyze([]curve.Point{light, short}, p)
	if v := a.Points[1]; v.Verdict != curve.VerdictUncertain || v.MeetsTarget || v.ShareHi < 0.95 {
		t.Errorf("9/10: %+v, want uncertain", v)
	}
	if a.Knee != nil {
		t.Errorf("knee %+v at an uncertain tier", a.Knee)
	}
	if !hasNote(a, "tier 2 (2 req/s) is uncertain: 9 of 10 compliant") {
		t.Errorf("notes:\n%s", strings.Join(a.Notes, "\n"))
	}
	// A clear failure above it is the knee; capacity is interpolated below
	// the uncertain tier: 1 + (1 − 0.95)/(1 − 0.9)·(2 − 1) = 1.5.
	a = curve.Analyze([]curve.Point{light, short, tier(3, 4, 100, 0.5, 300, false)}, p)
	if a.Knee == nil || a.Knee.Tier != 3 || a.Knee.AfterTier != 1 {
		t.Errorf("knee %+v, want tier 3 after tier 1", a.Knee)
	}
	if a.Capacity == nil || !near(a.Capacity.Rate, 1.5) {
		t.Errorf("capacity %+v, want 1.5", a.Capacity)
	}
}

func TestAnalyzeUnstableKnee(t *testing.T) {
	// Tier 3 keeps 100 % compliant but its queue grows: it is the knee, and
	// capacity stays at tier 2.
	pts := []curve.Point{
		tier(1, 1, 200, 1, 100, false),
		tier(2, 2, 200, 1, 200, false),
		tier(3, 3, 200, 1, 300, true),
	}
	a := curve.Analyze(pts, curve.DefaultParams())
	if a.Knee == nil || a.Knee.Tier != 3 || !a.Knee.Unstable || a.Knee.ClearlyFails {
		t.Errorf("knee %+v", a.Knee)
	}
	if a.Capacity == nil || a.Capacity.Rate != 2 || a.Capacity.Method != curve.CapacityAtTier {
		t.Errorf("capacity %+v, want 2 at tier", a.Capacity)
	}
	if !hasNote(a, "queueing grows") {
		t.Errorf("notes:\n%s", strings.Join(a.Notes, "\n"))
	}
}

func TestAnalyzeInfTier(t *testing.T) {
	// An "inf" tier is judged but stays off the rate axis: the analysis of
	// the finite tiers is unchanged, and the JSON carries no Inf.
	pts := saturating(2, 4, 6, 8, 10, 12, 14, 16)
	base := curve.Analyze(pts, curve.DefaultParams())
	inf := tier(9, math.Inf(1), 1000, 0.2, 950, true)
	inf.RealisedRate = math.Inf(1)
	a := curve.Analyze(append(pts, inf), curve.DefaultParams())
	if *a.Plateau != *base.Plateau || *a.Knee != *base.Knee || a.Capacity.Rate != base.Capacity.Rate {
		t.Errorf("the inf tier changed the curve: %+v %+v %+v", a.Plateau, a.Knee, a.Capacity)
	}
	last := a.Points[len(a.Points)-1]
	if last.Point.Tier != 9 || last.Verdict != curve.VerdictFails || last.OnPlateau || last.GainPerDoubling != nil {
		t.Errorf("inf tier verdict %+v", last)
	}
	if !hasNote(a, "tier 9 (inf) sent everything at T0, so it is off the rate axis: raw output 950 tok/s, 95 % of") {
		t.Errorf("notes:\n%s", strings.Join(a.Notes, "\n"))
	}
	b, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(b, []byte(`"offered_rate":null,"offered_rate_inf":true,"realised_rate":null`)) {
		t.Errorf("inf tier JSON: %s", b)
	}
}

func TestAnalyzeBadPoints(t *testing.T) {
	good := saturating(2, 4)
	bad := tier(3, 6, 10, 1, 600, false)
	bad.Compliant = 11
	empty := tier(4, 8, 10, 1, 800, false)
	empty.Issued, empty.Compliant = 0, 0
	nan := tier(5, 10, 10, 1, math.NaN(), false)
	zero := tier(6, 0, 10, 1, 0, false)
	dup := tier(7, 4, 1000, 1, 400, false)
	a := curve.Analyze(append(good, bad, empty, nan, zero, dup), curve.DefaultParams())
	verdicts := map[int]curve.Verdict{}
	for _, v := range a.Points {
		verdicts[v.Point.Tier] = v.Verdict
	}
	wantV := map[int]curve.Verdict{1: curve.VerdictMeets, 2: curve.VerdictMeets, 3: curve.VerdictInvalid, 4: curve.VerdictNoData,
		5: curve.VerdictInvalid, 6: curve.VerdictInvalid, 7: curve.VerdictMeets}
	for tierN, w := range wantV {
		if verdicts[tierN] != w {
			t.Errorf("tier %d: %v, want %v", tierN, verdicts[tierN], w)
		}
	}
	for _, sub := range []string{"tier 3 (6 req/s) left out: 11 compliant of 10 issued", "tier 4 (8 req/s) left out: no request",
		"tier 5 (10 req/s) left out: raw output throughput NaN", "tier 6 (0 req/s) left out: offered rate 0",
		"tier 7 (4 req/s) repeats the offered rate of tier 2"} {
		if !hasNote(a, sub) {
			t.Errorf("no note %q; notes:\n%s", sub, strings.Join(a.Notes, "\n"))
		}
	}
	if a.Capacity == nil || a.Capacity.Rate != 4 || a.Capacity.Method != curve.CapacityLowerBound {
		t.Errorf("capacity %+v, want lower bound 4 from the two good tiers", a.Capacity)
	}
	if _, err := json.Marshal(a); err != nil {
		t.Errorf("marshal with NaN input: %v", err)
	}
	if a := curve.Analyze(nil, curve.DefaultParams()); !hasNote(a, "no curve") || a.Capacity != nil {
		t.Errorf("empty sweep: %+v", a)
	}
}

func TestAnalyzeNotesOtherJudgements(t *testing.T) {
	pts := []curve.Point{
		tier(1, 1, 1000, 1, 100, false),
		tier(2, 2, 1000, 0.5, 200, false),
		tier(3, 4, 1000, 1, 400, false),
	}
	pts[0].ClientBound = true
	pts[1].RealisedRate = 1.5
	pts[2].Trend = curve.Trend{}
	a := curve.Analyze(pts, curve.DefaultParams())
	for _, sub := range []string{"tier 1 (1 req/s) was client-bound", "tier 2 (2 req/s) realised 1.5 req/s against 2 nominal (-25.0 %)",
		"meets the objective again above the knee", "stability not tested for tier 3 (4 req/s)"} {
		if !hasNote(a, sub) {
			t.Errorf("no note %q; notes:\n%s", sub, strings.Join(a.Notes, "\n"))
		}
	}
}

func TestAnalyzeDoesNotMutateAndIgnoresOrder(t *testing.T) {
	pts := saturating(2, 4, 6, 8, 10, 12, 14, 16)
	orig := slices.Clone(pts)
	want, _ := json.Marshal(curve.Analyze(pts, curve.DefaultParams()))
	shuffled := slices.Clone(pts)
	rand.New(rand.NewPCG(1, 1)).Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	before := slices.Clone(shuffled)
	got, _ := json.Marshal(curve.Analyze(shuffled, curve.DefaultParams()))
	if !bytes.Equal(got, want) {
		t.Error("the analysis depends on the order of the points")
	}
	if !slices.EqualFunc(pts, orig, func(a, b curve.Point) bool { return a == b }) ||
		!slices.EqualFunc(shuffled, before, func(a, b curve.Point) bool { return a == b }) {
		t.Error("Analyze modified its input")
	}
}

func TestParams(t *testing.T) {
	tests := []struct {
		name  string
		p     curve.Params
		flags []string // flags named by the errors, in order
	}{
		{"zero takes defaults", curve.Params{}, nil},
		{"defaults", curve.DefaultParams(), nil},
		{"target 1", curve.Params{TargetShare: 1}, nil},
		{"target above 1", curve.Params{TargetShare: 1.5}, []string{"--target-share"}},
		{"target negative", curve.Params{TargetShare: -0.1}, []string{"--target-share"}},
		{"target NaN", curve.Params{TargetShare: math.NaN()}, []string{"--target-share"}},
		{"headroom 1", curve.Params{Headroom: 1}, []string{"--headroom"}},
		{"headroom negative", curve.Params{Headroom: -0.2}, []string{"--headroom"}},
		{"plateau gain 1", curve.Params{PlateauGain: 1}, []string{"--plateau-gain"}},
		{"confidence 1", curve.Params{Confidence: 1}, []string{"--confidence"}},
		{"all at once", curve.Params{TargetShare: 2, Headroom: 1, PlateauGain: -1, Confidence: 7},
			[]string{"--target-share", "--headroom", "--plateau-gain", "--confidence"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			errs := tt.p.Validate()
			if len(errs) != len(tt.flags) {
				t.Fatalf("errors %v, want %d", errs, len(tt.flags))
			}
			for i, f := range tt.flags {
				if !strings.HasPrefix(errs[i].Error(), f+" = ") || !strings.Contains(errs[i].Error(), "must be in") {
					t.Errorf("error %q does not name %s and its range", errs[i], f)
				}
			}
			// Analyze echoes what it used: valid values as given, defaults
			// for zero and for invalid ones (with a note per invalid field).
			a := curve.Analyze(saturating(2, 4), tt.p)
			if len(a.Params.Validate()) != 0 {
				t.Errorf("echoed params invalid: %+v", a.Params)
			}
			n := 0
			for _, note := range a.Notes {
				if strings.HasPrefix(note, "invalid parameter, the default is used instead") {
					n++
				}
			}
			if n != len(tt.flags) {
				t.Errorf("%d notes on invalid parameters, want %d", n, len(tt.flags))
			}
		})
	}
	if got := (curve.Params{Headroom: 0.3}).WithDefaults(); got != (curve.Params{TargetShare: 0.99, Headroom: 0.3, PlateauGain: 0.05, Confidence: 0.95}) {
		t.Errorf("WithDefaults = %+v", got)
	}
}

func TestAnalysisJSONGolden(t *testing.T) {
	pts := saturating(2, 4, 6, 8, 10, 12, 14, 16)
	a := curve.Analyze(pts, curve.DefaultParams())
	got, err := json.MarshalIndent(a, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, '\n')
	path := filepath.Join("testdata", "saturating.golden.json")
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("JSON differs from %s (go test -update rewrites it):\n%s", path, got)
	}
	// Every key is snake_case.
	var generic any
	if err := json.Unmarshal(got, &generic); err != nil {
		t.Fatal(err)
	}
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, e := range v {
				if k != strings.ToLower(k) || strings.ContainsAny(k, " -") {
					t.Errorf("key %q is not snake_case", k)
				}
				walk(e)
			}
		case []any:
			for _, e := range v {
				walk(e)
			}
		}
	}
	walk(generic)
}

func TestPointJSONRoundTrip(t *testing.T) {
	pts := []curve.Point{
		tier(3, 2.5, 100, 0.97, 250, true),
		func() curve.Point {
			p := tier(4, math.Inf(1), 100, 0.5, 400, false)
			p.RealisedRate, p.RequestThroughput = math.NaN(), 40
			return p
		}(),
	}
	for _, p := range pts {
		b, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		var back curve.Point
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatal(err)
		}
		// NaN ≠ NaN: compare a NaN realised rate by kind, then the rest.
		if math.IsNaN(p.RealisedRate) && math.IsNaN(back.RealisedRate) {
			back.RealisedRate, p.RealisedRate = 0, 0
		}
		if back != p {
			t.Errorf("round trip of %s: %+v, want %+v", b, back, p)
		}
	}
}
