package sweep_test

import (
	"strings"
	"testing"
	"time"

	"github.com/loadcurve/loadcurve/curve/sweep"
	"github.com/loadcurve/loadcurve/internal/field"
	"github.com/loadcurve/loadcurve/internal/param"
	"github.com/loadcurve/loadcurve/workloads"
)

// applied applies the texts given to a default configuration's params and checks it.
func applied(t *testing.T, given map[string]string) (sweep.Config, []error) {
	t.Helper()
	cfg := sweep.DefaultConfig()
	ps := cfg.Params()
	errs := param.Apply(ps, func(f string) ([]string, bool) {
		if v, ok := given[f]; ok {
			return []string{v}, true
		}
		return nil, false
	})
	cfg, e := cfg.Check(ps)
	return cfg, append(errs, e...)
}

func fieldsOf(errs []error) []string {
	var out []string
	for _, e := range errs {
		if fe := field.Of(e); fe != nil {
			out = append(out, fe.Name)
		} else {
			out = append(out, "?"+e.Error())
		}
	}
	return out
}

func TestConfigParamsDefaultsAndGiven(t *testing.T) {
	t.Parallel()
	cfg, errs := applied(t, nil)
	if len(errs) > 0 {
		t.Fatalf("defaults refused: %v", errs)
	}
	if !cfg.Rates.Auto || !cfg.Confirm || cfg.Repeat != 1 || cfg.Budget != sweep.DefaultBudget || cfg.Given != (sweep.Given{}) {
		t.Errorf("defaults read as %+v", cfg)
	}
	cfg, errs = applied(t, map[string]string{sweep.FieldRates: "1,2", sweep.FieldNoConfirm: "true", sweep.FieldBudget: "0s",
		sweep.FieldRequests: "50", sweep.FieldRepeat: "3"})
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	if cfg.Rates.String() != "1,2" || cfg.Confirm || cfg.Requests != 50 || cfg.Repeat != 3 {
		t.Errorf("given read as %+v", cfg)
	}
	if !cfg.Given.Budget || !cfg.Given.Requests || !cfg.Given.Repeat || cfg.Given.Duration || !cfg.NoBudget() {
		t.Errorf("given marked %+v (no budget %v)", cfg.Given, cfg.NoBudget())
	}
}

func TestConfigCheck(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		given map[string]string
		want  []string // the fields of the errors, in order
	}{
		{"a stated zero is a value", map[string]string{sweep.FieldRequests: "0", sweep.FieldRates: "1"}, []string{sweep.FieldRequests}},
		{"a zero not stated takes the default", map[string]string{sweep.FieldRates: "1"}, nil},
		{"bad rates are said once", map[string]string{sweep.FieldRates: "x"}, []string{sweep.FieldRates}},
		{"bad levels are said once", map[string]string{sweep.FieldUsers: "x"}, []string{sweep.FieldUsers}},
		{"levels replace the rates", map[string]string{sweep.FieldUsers: "1,2"}, nil},
		{"levels must rise", map[string]string{sweep.FieldUsers: "2,1"}, []string{sweep.FieldUsers}},
		{"a fixed duration", map[string]string{sweep.FieldRates: "1", sweep.FieldDuration: "5s"}, nil},
		{"both lengths", map[string]string{sweep.FieldRates: "1", sweep.FieldDuration: "5s", sweep.FieldRequests: "9"}, []string{sweep.FieldDuration}},
	}
	for _, tt := range tests {
		_, errs := applied(t, tt.given)
		if got := fieldsOf(errs); strings.Join(got, "|") != strings.Join(tt.want, "|") {
			t.Errorf("%s: errors %v (%v), want fields %v", tt.name, got, errs, tt.want)
		}
	}
	cfg, _ := applied(t, map[string]string{sweep.FieldUsers: "auto", sweep.FieldDuration: "5s"})
	if !cfg.Concurrency.Auto || cfg.Rates.Auto || len(cfg.Rates.List) > 0 || cfg.Duration != 5*time.Second {
		t.Errorf("levels read as %+v", cfg)
	}
}

func TestConfigParamsNameTheirInputs(t *testing.T) {
	t.Parallel()
	cfg := sweep.DefaultConfig()
	for _, p := range cfg.Params() {
		if strings.Contains(p.Usage, "--") && !strings.Contains(p.Usage, "vLLM's --") {
			t.Errorf("%s: usage names a flag: %q", p.Field, p.Usage)
		}
	}
}

func TestCheckSourceRefusesATrace(t *testing.T) {
	t.Parallel()
	if err := sweep.CheckSource(nil); err != nil {
		t.Errorf("no source: %v", err)
	}
	opts := workloads.DefaultSettings().Options
	src, errs := workloads.NewSource("../../workloads/testdata/azure.csv", opts, "")
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	err := sweep.CheckSource(src)
	fe := field.Of(err)
	if fe == nil || fe.Name != workloads.FieldWorkload {
		t.Fatalf("a trace: %v", err)
	}
	got := fe.Render(func(s string) string { return "<" + s + ">" })
	if !strings.HasPrefix(got, "<"+workloads.FieldWorkload+"> ../../workloads/testdata/azure.csv is a trace") || !strings.Contains(got, "<"+workloads.FieldTimeScale+">") {
		t.Errorf("rendered %q", got)
	}
	gen, errs := workloads.NewSource("synthetic", opts, "")
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	if err := sweep.CheckSource(gen); err != nil {
		t.Errorf("a generated source: %v", err)
	}
}
