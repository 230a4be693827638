package field_test

import (
	"fmt"
	"testing"

	"github.com/loadcurve/loadcurve/field"
)

func TestErrorNamesItsFieldOnce(t *testing.T) {
	err := fmt.Errorf("sweep: %w", field.Errorf("target-share", "must be in (0, 1], got %v", 0))
	fe := field.Of(err)
	if fe == nil || fe.Name != "target-share" || fe.Msg != "must be in (0, 1], got 0" {
		t.Fatalf("Of(%v) = %+v", err, fe)
	}
	if got := fe.Error(); got != "target-share: must be in (0, 1], got 0" {
		t.Errorf("Error() = %q", got)
	}
	if field.Of(fmt.Errorf("plain")) != nil {
		t.Error("a plain error is not a field error")
	}
}
