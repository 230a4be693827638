package loadgen_test

import (
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/loadcurve/loadcurve/internal/field"
	"github.com/loadcurve/loadcurve/loadgen"
)

// TestParseHeaders: every value in order, both forms, each name once whatever its case; a problem
// names its value by position and never quotes a value.
func TestParseHeaders(t *testing.T) {
	h, errs := loadgen.ParseHeaders([]string{"X-A: 1", "x-b=two", "nocolon-SECRET", "X-a: 3"})
	if want := (http.Header{"X-A": {"1"}, "X-B": {"two"}}); !reflect.DeepEqual(h, want) {
		t.Errorf("headers %v, want %v", h, want)
	}
	if len(errs) != 2 || !strings.HasPrefix(field.Of(errs[0]).Render(nil), loadgen.FieldHeader+" #3: no ':' or '='") ||
		field.Of(errs[1]).Render(nil) != loadgen.FieldHeader+" #4: X-A is given twice (#1 and #4): give each header once" {
		t.Fatalf("errors %q", errs)
	}
	if strings.Contains(errs[0].Error(), "SECRET") {
		t.Errorf("an error quotes the value: %q", errs[0])
	}
	if h, errs := loadgen.ParseHeaders(nil); h != nil || errs != nil {
		t.Errorf("no headers: %v %v", h, errs)
	}
}
