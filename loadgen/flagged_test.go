package loadgen_test

import (
	"strings"

	"github.com/loadcurve/loadcurve/internal/field"
	"github.com/loadcurve/loadcurve/loadgen"
)

// testFlags are the command line's flags for the inputs the client's errors refer to (the
// command's own table maps every field; these tests read the errors as its user does).
var testFlags = map[string]string{loadgen.FieldAPIKey: "--api-key", loadgen.FieldBaseURL: "--base-url",
	loadgen.FieldInsecure: "--insecure", loadgen.FieldEndpoint: "--endpoint", loadgen.FieldModel: "--model"}

// flagged is err's text as the command writes it: the field error it is or wraps rendered with
// testFlags, and an input with no flag there left in its own words.
func flagged(err error) string {
	fe := field.Of(err)
	if fe == nil {
		return err.Error()
	}
	name := func(f string) string {
		if fl, ok := testFlags[f]; ok {
			return fl
		}
		return f
	}
	return strings.Replace(err.Error(), fe.Error(), fe.Render(name), 1)
}
