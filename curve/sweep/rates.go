package sweep

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/loadcurve/loadcurve/internal/field"
)

// MaxRateTiers bounds the number of tiers a list of rates may describe, so a
// typing slip ("1:2:lin:10000000") is an error rather than a sweep that never
// ends.
const MaxRateTiers = 1000

// ratesForms says what a list of rates accepts; it ends most parse errors.
const ratesForms = `want a comma-separated list of positive rates such as "1,2,4,8" ("inf" allowed as the last element), ` +
	`a range LO:HI:geom:N or LO:HI:lin:N such as "1:64:geom:7", or "auto"`

// Rates are the tiers of a sweep, as ParseRates reads them.
type Rates struct {
	// Auto asks the sweep to probe the saturation rate and plan the tiers
	// with a [Planner]; List is empty then.
	Auto bool
	// List holds the offered rates in requests per second, strictly
	// ascending. The last may be +Inf ("inf": every request at T0).
	List []float64
}

// String gives the rates back in the form ParseRates reads: "auto" or the
// expanded list, "inf" for an unbounded rate.
func (r Rates) String() string {
	if r.Auto {
		return "auto"
	}
	parts := make([]string, len(r.List))
	for i, v := range r.List {
		parts[i] = formatRate(v)
	}
	return strings.Join(parts, ",")
}

// formatRate prints a rate as ParseRates reads it.
func formatRate(v float64) string {
	if math.IsInf(v, 1) {
		return "inf"
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// ParseRates reads --request-rates. Accepted forms:
//
//	1,2,4,8        a list; "inf" may appear only as the last element
//	1:64:geom:7    7 tiers from 1 to 64 inclusive, equal ratios between them
//	2:20:lin:10    10 tiers from 2 to 20 inclusive, equal steps
//	auto           probe, then plan the tiers (see Planner)
//
// Ranges and numbers may be mixed in one list ("0.5,1:8:geom:4,inf"). The
// expanded rates must be positive and strictly ascending: descending,
// duplicate or overlapping elements are errors. In a range N ≥ 2 and
// LO < HI, both finite. Errors are field.Errors naming FieldRates; they quote
// the offending part and say what is allowed.
func ParseRates(s string) (Rates, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return Rates{}, field.Errorf(FieldRates, "empty: %s", ratesForms)
	}
	if strings.EqualFold(s, "auto") {
		return Rates{Auto: true}, nil
	}
	elems := strings.Split(s, ",")
	var list []float64
	for i, raw := range elems {
		e := strings.TrimSpace(raw)
		var vals []float64
		var err error
		switch {
		case e == "":
			err = fmt.Errorf("element %d is empty (zero tiers there)", i+1)
		case strings.EqualFold(e, "auto"):
			err = errors.New(`"auto" cannot be combined with other rates`)
		case strings.EqualFold(e, "inf"):
			if i != len(elems)-1 {
				err = errors.New(`"inf" may only be the last element`)
			}
			vals = []float64{math.Inf(1)}
		case strings.Contains(e, ":"):
			vals, err = parseRange(e)
		default:
			var v float64
			v, err = parseRateNumber(e, "rate")
			vals = []float64{v}
		}
		if err != nil {
			return Rates{}, field.Errorf(FieldRates, "%q: %q: %v; %s", s, e, err, ratesForms)
		}
		if len(list) > 0 && vals[0] <= list[len(list)-1] {
			what := "is"
			if len(vals) > 1 {
				what = "starts at " + formatRate(vals[0]) + ","
			}
			return Rates{}, field.Errorf(FieldRates, "%q: %q %s not above the previous rate %s: "+
				"rates must be strictly ascending, with no duplicate or overlapping elements",
				s, e, what, formatRate(list[len(list)-1]))
		}
		if len(list)+len(vals) > MaxRateTiers {
			return Rates{}, field.Errorf(FieldRates, "%q: more than %d tiers", s, MaxRateTiers)
		}
		list = append(list, vals...)
	}
	return Rates{List: list}, nil
}

// parseRateNumber reads one positive, finite rate; what names it in errors.
func parseRateNumber(e, what string) (float64, error) {
	v, err := strconv.ParseFloat(strings.TrimSpace(e), 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("%s %q is not a finite number", what, strings.TrimSpace(e))
	}
	if v <= 0 {
		return 0, fmt.Errorf("%s %s is not positive", what, strconv.FormatFloat(v, 'g', -1, 64))
	}
	return v, nil
}

// parseRange expands "LO:HI:geom|lin:N".
func parseRange(e string) ([]float64, error) {
	f := strings.Split(e, ":")
	if len(f) != 4 {
		return nil, fmt.Errorf("a range has 4 fields LO:HI:geom|lin:N, this one has %d", len(f))
	}
	lo, err := parseRateNumber(f[0], "LO")
	if err != nil {
		return nil, err
	}
	hi, err := parseRateNumber(f[1], "HI")
	if err != nil {
		return nil, err
	}
	kind := strings.ToLower(strings.TrimSpace(f[2]))
	if kind != "geom" && kind != "lin" {
		return nil, fmt.Errorf("spacing %q is neither geom nor lin", strings.TrimSpace(f[2]))
	}
	n, err := strconv.Atoi(strings.TrimSpace(f[3]))
	if err != nil {
		return nil, fmt.Errorf("tier count %q is not an integer", strings.TrimSpace(f[3]))
	}
	if n < 2 {
		return nil, fmt.Errorf("tier count %d is below 2", n)
	}
	if n > MaxRateTiers {
		return nil, fmt.Errorf("tier count %d is above %d", n, MaxRateTiers)
	}
	if lo >= hi {
		return nil, fmt.Errorf("LO %s is not below HI %s", formatRate(lo), formatRate(hi))
	}
	out := make([]float64, n)
	for i := range out {
		t := float64(i) / float64(n-1)
		if kind == "geom" {
			out[i] = lo * math.Pow(hi/lo, t)
		} else {
			out[i] = lo + (hi-lo)*t
		}
	}
	// The ends are exactly the numbers written, whatever the rounding inside.
	out[0], out[n-1] = lo, hi
	for i := 1; i < n; i++ {
		if out[i] <= out[i-1] {
			return nil, fmt.Errorf("LO %s and HI %s are too close for %d distinct tiers", formatRate(lo), formatRate(hi), n)
		}
	}
	return out, nil
}
