package bench

import (
	"strconv"
	"strings"

	"github.com/loadcurve/loadcurve/internal/field"
)

// BaseOptions is what a benchmark starts from before the caller's settings: QuickOptions when
// quick, DefaultOptions otherwise.
func BaseOptions(quick bool) Options {
	if quick {
		return QuickOptions()
	}
	return DefaultOptions()
}

// ParseRates reads a list of request rates as a user writes it, "250,500,1000" (spaces around
// an element allowed). An element that is not a number is a field.Error naming FieldRates whose
// message quotes it and says what the list wants; Validate judges the numbers.
func ParseRates(s string) ([]float64, error) {
	var out []float64
	for _, f := range strings.Split(s, ",") {
		v, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil {
			return nil, field.Errorf(FieldRates, "%q is not a number; want comma-separated request rates, e.g. 250,500,1000", f)
		}
		out = append(out, v)
	}
	return out, nil
}

// ParseConcurrencies reads a list of concurrency caps as a user writes it, "0,64" (0: no cap).
// Every element that is not a whole number is one field.Error naming FieldConcurrency, in the
// list's order; the caps read are returned all the same. Validate judges the numbers.
func ParseConcurrencies(s string) ([]int, []error) {
	var out []int
	var errs []error
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			errs = append(errs, field.Errorf(FieldConcurrency, "%q is not a whole number; want comma-separated caps, e.g. 0,64 (0: no cap)", f))
			continue
		}
		out = append(out, n)
	}
	return out, errs
}
