package redact_test

import (
	"strings"
	"testing"

	"github.com/loadcurve/loadcurve/internal/redact"
)

func TestFromSettings(t *testing.T) {
	s := redact.FromSettings("sk-key-0123456789",
		[]string{"X-Token: header-secret-42", "Authorization=Bearer other-secret-77"},
		"https://user:pass-word-99@host.example/v1?sig=query-secret-13",
		[]byte(`{"temperature": 0.5, "api_key": "body-secret-55"}`))
	for _, secret := range []string{"sk-key-0123456789", "header-secret-42", "other-secret-77", "pass-word-99", "query-secret-13", "body-secret-55"} {
		if got := s.Redact("echo " + secret + " done"); strings.Contains(got, secret) || !strings.Contains(got, redact.Mask) {
			t.Errorf("Redact kept %q: %q", secret, got)
		}
	}
	for _, plain := range []string{"X-Token", "host.example", "temperature", "0.5"} {
		if got := s.Redact(plain); got != plain {
			t.Errorf("Redact(%q) = %q: not a secret", plain, got)
		}
	}
	if !redact.FromSettings("", nil, "", nil).Empty() {
		t.Error("empty settings hold a secret")
	}
}
