package flagfile

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"
)

// ValueProblem says why value is not one of flag f's values and what is: "--duration 10: give
// a unit, e.g. 10s or 2m". name is the flag as it was given; reason is what the parser said
// ("parse error", "value out of range").
func ValueProblem(f cli.Flag, name, value, reason string) string {
	head := fmt.Sprintf("--%s %s", name, value)
	if value == "" || strings.ContainsAny(value, " \t") {
		head = fmt.Sprintf("--%s %q", name, value)
	}
	_, isNumber := parseNumber(value)
	switch f.(type) {
	case *cli.DurationFlag:
		if isNumber {
			return fmt.Sprintf("%s: give a unit, e.g. %ss or %sm", head, value, value)
		}
		return fmt.Sprintf("%s: not a duration; %s", head, ExpectedForm(f))
	case *cli.IntFlag, *cli.Int64Flag, *cli.UintFlag, *cli.Uint64Flag:
		if strings.Contains(reason, "range") {
			return fmt.Sprintf("%s: out of range; %s", head, ExpectedForm(f))
		}
		if isNumber {
			return fmt.Sprintf("%s: not a whole number; %s", head, ExpectedForm(f))
		}
		return fmt.Sprintf("%s: not a number; %s", head, ExpectedForm(f))
	case *cli.Float64Flag:
		if strings.Contains(reason, "range") {
			return fmt.Sprintf("%s: out of range; %s", head, ExpectedForm(f))
		}
		return fmt.Sprintf("%s: not a number; %s", head, ExpectedForm(f))
	case *cli.BoolFlag:
		return fmt.Sprintf("--%s=%s: %s", name, value, ExpectedForm(f))
	}
	return fmt.Sprintf("%s: %s", head, reason)
}

// ExpectedForm says what a flag takes, with an example.
func ExpectedForm(f cli.Flag) string {
	switch f := f.(type) {
	case *cli.DurationFlag:
		return "give a number with a unit, e.g. 500ms, 30s, 2m or 1h30m"
	case *cli.IntFlag:
		return "give a whole number, e.g. " + exampleInt(int64(f.Value))
	case *cli.Int64Flag:
		return "give a whole number, e.g. " + exampleInt(f.Value)
	case *cli.UintFlag, *cli.Uint64Flag:
		return "give a whole number ≥ 0, e.g. 10"
	case *cli.Float64Flag:
		if f.Value != 0 {
			return "give a number, e.g. " + strconv.FormatFloat(f.Value, 'g', -1, 64)
		}
		return "give a number, e.g. 2.5"
	case *cli.BoolFlag:
		return fmt.Sprintf("want true or false (--%s alone means true)", f.Name)
	}
	return "give a value"
}

// exampleInt is a flag's default as an example, 10 when it is 0 or negative (a "none" marker).
func exampleInt(v int64) string {
	if v <= 0 {
		v = 10
	}
	return strconv.FormatInt(v, 10)
}

// parseNumber reads a plain decimal number ("10", "2.5").
func parseNumber(s string) (float64, bool) {
	v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	return v, err == nil
}
