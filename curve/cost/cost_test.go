package cost_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"maps"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/loadcurve/loadcurve/curve/cost"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// The constructed example of the seed article, section 3 (METRICS.md "Cost").
var (
	seedA = cost.Option{Name: "A", CostPerHour: 100, RawThroughput: 10_000, CompliantShare: 0.95}
	seedB = cost.Option{Name: "B", CostPerHour: 80, RawThroughput: 12_000, CompliantShare: 0.60}
)

func round(x float64, decimals int) float64 {
	p := math.Pow(10, float64(decimals))
	return math.Round(x*p) / p
}

func TestSeedExample(t *testing.T) {
	l, err := cost.NewLedger(seedA, seedB, cost.Params{Currency: "yuan", OneTime: 50_000})
	if err != nil {
		t.Fatal(err)
	}
	// Each figure to the digits the article shows.
	checks := []struct {
		name     string
		got      float64
		decimals int
		want     float64
	}{
		{"effective throughput A (9,500 tok/s)", l.A.EffectiveThroughput, 6, 9500},
		{"effective throughput B (7,200 tok/s)", l.B.EffectiveThroughput, 6, 7200},
		{"C_A = 100/(9,500·3,600)·10⁶ ≈ 2.92", l.A.CostPerMillionEffective, 2, 2.92},
		{"C_B = 80/(7,200·3,600)·10⁶ ≈ 3.09", l.B.CostPerMillionEffective, 2, 3.09},
		{"B about 5.6 % dearer", l.BvsAUnitCostChange * 100, 1, 5.6},
		{"break-even effective 80·9,500/100 = 7,600 tok/s", l.BreakEvenEffectiveThroughput, 6, 7600},
		{"break-even share 7,600/12,000 ≈ 63.3 %", l.BreakEvenCompliantShare * 100, 1, 63.3},
		{"default period 730 h", l.HoursPerPeriod, 6, 730},
		// Equal task volume: B needs 9,500/7,200 of an hour per hour of A's
		// output, so per hour it costs 80·9,500/7,200 = 105.56 against A's 100:
		// net savings (100 − 105.555…)·730 = −4,055.56 per period.
		{"A running cost per period 100·730", l.A.CostPerPeriod, 6, 73_000},
		{"B running cost per period 80·730·9,500/7,200", l.B.CostPerPeriod, 2, 77_055.56},
		{"net savings per period", l.NetSavingsPerPeriod, 2, -4_055.56},
	}
	for _, c := range checks {
		if got := round(c.got, c.decimals); got != c.want {
			t.Errorf("%s: got %v (rounded %v), want %v", c.name, c.got, got, c.want)
		}
	}
	if l.PaybackPeriods != nil {
		t.Errorf("payback = %v, want nil: B costs more per effective token", *l.PaybackPeriods)
	}

	text := l.Text()
	for _, want := range []string{
		"B costs 5.6 % more per effective token than A despite 20 % lower hourly cost and 20 % higher raw throughput",
		"B breaks even with A at a compliant share of 63.3 % (7,600 tok/s effective)",
		"never recovered",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("Text() lacks %q:\n%s", want, text)
		}
	}
	js, err := json.MarshalIndent(l, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "seed_example.json", append(js, '\n'))
	golden(t, "seed_example.txt", []byte(text))
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading golden file (run with -update to create it): %v", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from golden file (run with -update after checking):\ngot:\n%s\nwant:\n%s", name, got, want)
	}
}

func TestJSONShape(t *testing.T) {
	l, err := cost.NewLedger(seedA, seedB, cost.Params{})
	if err != nil {
		t.Fatal(err)
	}
	js, err := json.Marshal(l)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(js, &m); err != nil {
		t.Fatal(err)
	}
	wantTop := []string{"a", "b", "b_vs_a_unit_cost_change", "break_even_compliant_share",
		"break_even_effective_throughput", "currency", "hours_per_period", "net_savings_per_period",
		"notes", "one_time", "payback_note", "payback_periods"}
	if got := slices.Sorted(maps.Keys(m)); !slices.Equal(got, wantTop) {
		t.Errorf("top-level keys = %v, want %v", got, wantTop)
	}
	wantOpt := []string{"compliant_share", "cost_per_hour", "cost_per_million_effective", "cost_per_period",
		"effective_throughput", "maintenance", "name", "raw_throughput"}
	for _, k := range []string{"a", "b"} {
		var o map[string]json.RawMessage
		if err := json.Unmarshal(m[k], &o); err != nil {
			t.Fatal(err)
		}
		if got := slices.Sorted(maps.Keys(o)); !slices.Equal(got, wantOpt) {
			t.Errorf("%q keys = %v, want %v", k, got, wantOpt)
		}
	}
	if string(m["payback_periods"]) != "null" {
		t.Errorf("payback_periods = %s, want null", m["payback_periods"])
	}
	if !strings.HasPrefix(string(m["notes"]), "[") {
		t.Errorf("notes = %s, want an array", m["notes"])
	}
	// Notes are an array, never null, even on a zero Ledger.
	js, err = json.Marshal(cost.Ledger{})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(js, []byte(`"notes":[]`)) {
		t.Errorf("zero ledger: %s, want \"notes\":[]", js)
	}
}

// TestJSONRoundTrip: a ledger read back from its JSON is the ledger written, with and without a
// payback period.
func TestJSONRoundTrip(t *testing.T) {
	b := seedB
	b.Maintenance = 300
	for _, p := range []cost.Params{{}, {Currency: "EUR", HoursPerPeriod: 720, OneTime: 5000}} {
		l, err := cost.NewLedger(seedA, b, p)
		if err != nil {
			t.Fatal(err)
		}
		js, err := json.Marshal(l)
		if err != nil {
			t.Fatal(err)
		}
		var back cost.Ledger
		if err := json.Unmarshal(js, &back); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(back, l) {
			t.Errorf("round trip of %+v:\n got %+v\nwant %+v", p, back, l)
		}
	}
}

func TestPayback(t *testing.T) {
	// Hand computation for the positive case (period 720 h):
	//   A: 100/h, 10,000 tok/s · 95 % = 9,500 tok/s effective, maintenance 1,000.
	//   B:  80/h, 12,000 tok/s · 95 % = 11,400 tok/s effective, maintenance 3,000.
	//   A's running cost per period: 100 · 720 = 72,000.
	//   B producing A's volume: 80 · 720 · 9,500/11,400 = 57,600 · 5/6 = 48,000.
	//   Running saving 24,000; extra maintenance 3,000 − 1,000 = 2,000;
	//   net savings 22,000 per period; payback 55,000 / 22,000 = 2.5 periods.
	a := cost.Option{Name: "A", CostPerHour: 100, RawThroughput: 10_000, CompliantShare: 0.95, Maintenance: 1_000}
	b := cost.Option{Name: "B", CostPerHour: 80, RawThroughput: 12_000, CompliantShare: 0.95, Maintenance: 3_000}
	withMaint := func(o cost.Option, m float64) cost.Option { o.Maintenance = m; return o }

	tests := []struct {
		name        string
		a, b        cost.Option
		oneTime     float64
		wantNet     float64 // rounded to cents
		wantPayback *float64
		noteHas     string
	}{
		{"positive: recovered in 2.5 periods", a, b, 55_000, 22_000, ptr(2.5), "recovered in 2.5 periods"},
		{"positive without one-time investment: nothing to recover", a, b, 0, 22_000, ptr(0), "no one-time investment given"},
		// Maintenance difference 25,000 − 1,000 = 24,000 = the running saving.
		{"zero: maintenance eats exactly the saving", a, withMaint(b, 25_000), 55_000, 0, nil, "eats its running-cost saving"},
		// 30,000 − 1,000 = 29,000 > 24,000: net −5,000.
		{"negative: maintenance eats more than the saving", a, withMaint(b, 30_000), 55_000, -5_000, nil, "eats its running-cost saving"},
		{"zero: identical options", a, a, 55_000, 0, nil, "same per effective token"},
		// Seed example: (100 − 80·9,500/7,200)·720 = −4,000.
		{"negative: B dearer per effective token", seedA, seedB, 55_000, -4_000, nil, "B costs more per effective token"},
		{"negative, no one-time investment", seedA, seedB, 0, -4_000, nil, "no one-time investment given; moving from A to B would not save"},
		// B's lower maintenance (2,000 less) does not cover the 4,000 running loss.
		{"negative despite lower maintenance", withMaint(seedA, 2_000), seedB, 55_000, -2_000, nil, "does not make up for it"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, err := cost.NewLedger(tt.a, tt.b, cost.Params{HoursPerPeriod: 720, OneTime: tt.oneTime})
			if err != nil {
				t.Fatal(err)
			}
			if got := round(l.NetSavingsPerPeriod, 2); got != tt.wantNet {
				t.Errorf("net savings = %v, want %v", l.NetSavingsPerPeriod, tt.wantNet)
			}
			switch {
			case tt.wantPayback == nil && l.PaybackPeriods != nil:
				t.Errorf("payback = %v, want nil", *l.PaybackPeriods)
			case tt.wantPayback != nil && l.PaybackPeriods == nil:
				t.Errorf("payback = nil, want %v", *tt.wantPayback)
			case tt.wantPayback != nil && math.Abs(*l.PaybackPeriods-*tt.wantPayback) > 1e-9:
				t.Errorf("payback = %v, want %v", *l.PaybackPeriods, *tt.wantPayback)
			}
			if l.PaybackPeriods != nil && *l.PaybackPeriods < 0 {
				t.Errorf("negative payback period %v", *l.PaybackPeriods)
			}
			if !strings.Contains(l.PaybackNote, tt.noteHas) {
				t.Errorf("payback note %q lacks %q", l.PaybackNote, tt.noteHas)
			}
			if strings.Contains(l.PaybackNote, "recovered in -") {
				t.Errorf("a negative period is printed: %q", l.PaybackNote)
			}
		})
	}
}

func ptr(x float64) *float64 { return &x }

func TestBreakEvenAboveOne(t *testing.T) {
	// B at 130/h needs 130·9,500/100 = 12,350 tok/s effective, 102.9 % of its
	// 12,000 tok/s raw: it can never break even.
	b := seedB
	b.CostPerHour = 130
	l, err := cost.NewLedger(seedA, b, cost.Params{})
	if err != nil {
		t.Fatal(err)
	}
	if got := round(l.BreakEvenCompliantShare*100, 1); got != 102.9 {
		t.Errorf("break-even share = %v %%, want 102.9 %%", got)
	}
	joined := strings.Join(l.Notes, "\n")
	if !strings.Contains(joined, "B can never break even") {
		t.Errorf("notes lack the never-break-even warning: %q", l.Notes)
	}
	if !strings.Contains(l.Text(), "B cannot break even with A") {
		t.Errorf("Text() lacks the never-break-even sentence:\n%s", l.Text())
	}
}

func TestUnitCostSentence(t *testing.T) {
	tests := []struct {
		name string
		b    cost.Option
		want string
	}{
		{"B cheaper per token despite dearer hours", cost.Option{Name: "B", CostPerHour: 110, RawThroughput: 20_000, CompliantShare: 0.95},
			// (110/19,000)/(100/9,500) − 1 = 0.55 − 1 = −45 %.
			"B costs 45 % less per effective token than A despite 10 % higher hourly cost, with 100 % higher raw throughput"},
		{"same", seedA, "B costs the same per effective token as A with about the same hourly cost and about the same raw throughput"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, err := cost.NewLedger(seedA, tt.b, cost.Params{})
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(l.Text(), tt.want) {
				t.Errorf("Text() lacks %q:\n%s", tt.want, l.Text())
			}
		})
	}
}

func TestValidate(t *testing.T) {
	valid := cost.Option{Name: "A", CostPerHour: 1, RawThroughput: 1, CompliantShare: 0.5}
	with := func(f func(*cost.Option)) cost.Option { o := valid; f(&o); return o }
	tests := []struct {
		name       string
		o          cost.Option
		wantFields []string
	}{
		{"valid", valid, nil},
		{"zero cost and share are allowed", with(func(o *cost.Option) { o.CostPerHour = 0; o.CompliantShare = 0 }), nil},
		{"share exactly 1", with(func(o *cost.Option) { o.CompliantShare = 1 }), nil},
		{"negative cost", with(func(o *cost.Option) { o.CostPerHour = -1 }), []string{cost.FieldCostPerHour}},
		{"NaN cost", with(func(o *cost.Option) { o.CostPerHour = math.NaN() }), []string{cost.FieldCostPerHour}},
		{"infinite cost", with(func(o *cost.Option) { o.CostPerHour = math.Inf(1) }), []string{cost.FieldCostPerHour}},
		{"zero raw throughput", with(func(o *cost.Option) { o.RawThroughput = 0 }), []string{cost.FieldRawThroughput}},
		{"negative raw throughput", with(func(o *cost.Option) { o.RawThroughput = -5 }), []string{cost.FieldRawThroughput}},
		{"infinite raw throughput", with(func(o *cost.Option) { o.RawThroughput = math.Inf(1) }), []string{cost.FieldRawThroughput}},
		{"share above 1 (percent given)", with(func(o *cost.Option) { o.CompliantShare = 95 }), []string{cost.FieldCompliantShare}},
		{"negative share", with(func(o *cost.Option) { o.CompliantShare = -0.1 }), []string{cost.FieldCompliantShare}},
		{"NaN share", with(func(o *cost.Option) { o.CompliantShare = math.NaN() }), []string{cost.FieldCompliantShare}},
		{"negative maintenance", with(func(o *cost.Option) { o.Maintenance = -1 }), []string{cost.FieldMaintenance}},
		{"everything wrong at once", cost.Option{CostPerHour: -1, RawThroughput: math.NaN(), CompliantShare: 2, Maintenance: math.Inf(-1)},
			[]string{cost.FieldCostPerHour, cost.FieldRawThroughput, cost.FieldCompliantShare, cost.FieldMaintenance}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			errs := tt.o.Validate()
			if len(errs) != len(tt.wantFields) {
				t.Fatalf("got %d errors %v, want fields %v", len(errs), errs, tt.wantFields)
			}
			for i, err := range errs {
				var fe *cost.FieldError
				if !errors.As(err, &fe) {
					t.Fatalf("error %v is not a *FieldError", err)
				}
				if fe.Field != tt.wantFields[i] {
					t.Errorf("error %d field %q, want %q", i, fe.Field, tt.wantFields[i])
				}
				msg := fe.Render("A's " + fe.Field)
				if !strings.HasPrefix(msg, "A's "+tt.wantFields[i]+" = ") || !strings.Contains(msg, "must be") {
					t.Errorf("message %q should name A's %s and say what is allowed", msg, tt.wantFields[i])
				}
			}
			// Validate names the option instead of the flag.
			for _, err := range tt.o.Validate() {
				if tt.o.Name != "" && !strings.Contains(err.Error(), `option "A"`) {
					t.Errorf("Validate message %q does not name the option", err)
				}
			}
		})
	}
}

func TestCostPerMillionEffective(t *testing.T) {
	zero := seedB
	zero.CompliantShare = 0
	_, err := zero.CostPerMillionEffective()
	if !errors.Is(err, cost.ErrNoEffectiveThroughput) {
		t.Errorf("zero effective throughput: err = %v, want ErrNoEffectiveThroughput", err)
	}
	bad := seedB
	bad.CompliantShare = 60
	if _, err := bad.CostPerMillionEffective(); err == nil || !strings.Contains(err.Error(), cost.FieldCompliantShare) {
		t.Errorf("invalid option: err = %v, want a validation error naming the share", err)
	}
	got, err := seedA.CostPerMillionEffective()
	if err != nil || round(got, 2) != 2.92 {
		t.Errorf("seed A: %v, %v; want 2.92", got, err)
	}
}

func TestCompareErrors(t *testing.T) {
	freeA := seedA
	freeA.CostPerHour = 0
	noEffB := seedB
	noEffB.CompliantShare = 0
	badB := seedB
	badB.RawThroughput = -1
	tests := []struct {
		name    string
		a, b    cost.Option
		p       cost.Params
		wantHas []string
	}{
		{"negative hours", seedA, seedB, cost.Params{HoursPerPeriod: -1}, []string{"hours per period"}},
		{"NaN hours", seedA, seedB, cost.Params{HoursPerPeriod: math.NaN()}, []string{"hours per period"}},
		{"negative one-time", seedA, seedB, cost.Params{OneTime: -5}, []string{"one-time investment"}},
		{"all at once", seedA, badB, cost.Params{HoursPerPeriod: -1, OneTime: -5},
			[]string{"raw-throughput", "hours per period", "one-time investment"}},
		{"free A", freeA, seedB, cost.Params{}, []string{"option A costs 0"}},
		{"B without effective output", seedA, noEffB, cost.Params{}, []string{"option B", "effective throughput is 0"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := cost.NewLedger(tt.a, tt.b, tt.p)
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tt.wantHas {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
	// Unnamed options are named by their role in messages.
	unnamed := badB
	unnamed.Name = ""
	if _, err := cost.NewLedger(seedA, unnamed, cost.Params{}); err == nil || !strings.Contains(err.Error(), `option "B"`) {
		t.Errorf("unnamed B: error %v should say option \"B\"", err)
	}
}
