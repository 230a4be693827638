package loadgen_test

import (
	"strings"
	"testing"
	"time"

	"github.com/loadcurve/loadcurve/internal/param"
	"github.com/loadcurve/loadcurve/loadgen"
)

func applied(t *testing.T, ps []param.Param, given map[string][]string) {
	t.Helper()
	if errs := param.Apply(ps, func(f string) ([]string, bool) { v, ok := given[f]; return v, ok }); len(errs) > 0 {
		t.Fatal(errs)
	}
}

func TestClientSettingsValidate(t *testing.T) {
	tests := []struct {
		name  string
		given map[string][]string
		want  []string
	}{
		{"nothing given: no cap, no ceiling", nil, nil},
		{"a cap and a ceiling", map[string][]string{loadgen.FieldMaxConcurrency: {"8"}, loadgen.FieldRateLimit: {"2.5"}, loadgen.FieldRetries: {"3"}}, nil},
		{"a cap given as zero is no cap to omit", map[string][]string{loadgen.FieldMaxConcurrency: {"0"}},
			[]string{"concurrency cap: must be >= 1 (omit it for no cap), got 0"}},
		{"ceilings that are none", map[string][]string{loadgen.FieldRateLimit: {"+Inf"}},
			[]string{"rate limit: must be a finite number of requests/s > 0, got inf"}},
		{"a negative ceiling", map[string][]string{loadgen.FieldRateLimit: {"-1.5"}},
			[]string{"rate limit: must be a finite number of requests/s > 0, got -1.5"}},
		{"negative retries", map[string][]string{loadgen.FieldRetries: {"-1"}}, []string{"retries: must be >= 0, got -1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var s loadgen.ClientSettings
			ps := s.Params()
			applied(t, ps, tt.given)
			var got []string
			for _, e := range s.Validate(ps) {
				got = append(got, e.Error())
			}
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("Validate = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestTargetSettings(t *testing.T) {
	s := loadgen.DefaultTargetSettings(time.Minute)
	if s.Endpoint != string(loadgen.Chat) || s.Timeout != time.Minute {
		t.Errorf("defaults %+v", s)
	}
	if b, err := s.MaxResponseBytes(); err != nil || b != loadgen.DefaultMaxResponseBytes {
		t.Errorf("default cap %d, %v; want %d", b, err, loadgen.DefaultMaxResponseBytes)
	}
	ps := s.Params()
	if !strings.Contains(ps[3].Usage, "chat (/chat/completions)") {
		t.Errorf("the endpoint's usage %q does not list chat with its route", ps[3].Usage)
	}
	applied(t, ps, map[string][]string{loadgen.FieldHeader: {"A: 1", "B=2"}, loadgen.FieldMaxResponse: {"0"}, loadgen.FieldReadyTimeout: {"86401"}})
	if len(s.Headers) != 2 {
		t.Errorf("headers %q", s.Headers)
	}
	if _, err := s.MaxResponseBytes(); err == nil || err.Error() != "response size cap: must be in [1, 1048576], got 0" {
		t.Errorf("cap of 0 MiB: %v", err)
	}
	if _, err := s.ReadyCheck(); err == nil || err.Error() != "ready-check timeout: must be in [0, 86400] seconds (0: no waiting), got 86401" {
		t.Errorf("a ready check over a day: %v", err)
	}
	s.ReadyCheckSec = 30
	if d, err := s.ReadyCheck(); err != nil || d != 30*time.Second {
		t.Errorf("ReadyCheck = %v, %v", d, err)
	}
}

func TestTargetSettingsTarget(t *testing.T) {
	tests := []struct {
		name string
		set  func(s *loadgen.TargetSettings)
		body string
		errs []string
	}{
		{"the defaults", func(*loadgen.TargetSettings) {}, "", nil},
		{"ignore_eos merged into the body", func(s *loadgen.TargetSettings) { s.ExtraBody, s.IgnoreEOS = `{"top_k":1}`, true }, `{"ignore_eos":true,"top_k":1}`, nil},
		{"a contradiction", func(s *loadgen.TargetSettings) { s.ExtraBody, s.IgnoreEOS = `{"ignore_eos":false}`, true }, `{"ignore_eos":false}`,
			[]string{`ignore EOS: contradicts the extra body's "ignore_eos":false`}},
		{"vLLM's path form is the caller's", func(s *loadgen.TargetSettings) { s.Endpoint = "/v1/completions" }, "", nil},
		{"an unknown kind and a cap of nothing", func(s *loadgen.TargetSettings) { s.Endpoint, s.MaxResponseMiB = "nope", 0 }, "",
			[]string{`endpoint kind: want chat, completions, embeddings or responses, got "nope"`, "response size cap: must be in [1, 1048576], got 0"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := loadgen.DefaultTargetSettings(time.Second)
			tt.set(&s)
			got, errs := s.Target()
			var texts []string
			for _, e := range errs {
				texts = append(texts, e.Error())
			}
			if strings.Join(texts, "\n") != strings.Join(tt.errs, "\n") {
				t.Errorf("errors %q, want %q", texts, tt.errs)
			}
			if len(tt.errs) == 0 && string(got.ExtraBody) != tt.body {
				t.Errorf("body %s, want %s", got.ExtraBody, tt.body)
			}
		})
	}
}

func TestTargetValidateLocal(t *testing.T) {
	ok := loadgen.Target{Timeout: time.Second, RequestIDPrefix: "run-"}
	if errs := ok.ValidateLocal(); len(errs) > 0 {
		t.Errorf("a target without a base URL: %v", errs)
	}
	bad := loadgen.Target{Timeout: -time.Second, RequestIDPrefix: "a b"}
	errs := bad.ValidateLocal()
	if len(errs) != 2 || errs[0].Error() != "request timeout: must be >= 0, got -1s" {
		t.Errorf("ValidateLocal = %v", errs)
	}
}
