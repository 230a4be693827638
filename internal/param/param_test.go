package param_test

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/loadcurve/loadcurve/internal/field"
	"github.com/loadcurve/loadcurve/internal/param"
)

type config struct {
	name  string
	n     int
	seed  int64
	ratio float64
	wait  time.Duration
	on    bool
	tags  []string
	rate  rate
}

// rate is a Value: a number > 0, or inf.
type rate struct{ v float64 }

func (r *rate) String() string { return strconv.FormatFloat(r.v, 'g', -1, 64) }
func (r *rate) Set(s string) error {
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || !(v > 0) {
		return field.Errorf("rate", "must be a number > 0 or inf, got %q", s)
	}
	r.v = v
	return nil
}

func (c *config) params() []param.Param {
	return []param.Param{
		param.String("name", &c.name, "the name"),
		param.Int("count", &c.n, "how many"),
		param.Int64("seed", &c.seed, "the seed"),
		param.Float("ratio", &c.ratio, "the ratio"),
		param.Duration("wait", &c.wait, "how long"),
		param.Bool("on", &c.on, "switch").Default("off"),
		param.Strings("tag", &c.tags, "repeatable"),
		param.Var("rate", &c.rate, "the rate"),
	}
}

func TestCurrentIsTheBoundValue(t *testing.T) {
	c := config{name: "x", n: 3, seed: 7, ratio: 0.5, wait: time.Second, tags: []string{"a"}, rate: rate{2}}
	want := []any{"x", 3, int64(7), 0.5, time.Second, false, []string{"a"}, "2"}
	for i, p := range c.params() {
		if got := p.Current(); !reflect.DeepEqual(got, want[i]) {
			t.Errorf("%s: Current() = %#v, want %#v", p.Field, got, want[i])
		}
	}
}

func TestApplySetsOnlyWhatWasGiven(t *testing.T) {
	tests := []struct {
		name  string
		given map[string][]string
		want  config
		set   []string // the params marked given
		errs  []string
	}{
		{"nothing given keeps the defaults", nil, config{n: 9, rate: rate{1}}, nil, nil},
		{"zero given is kept and marked", map[string][]string{"count": {"0"}}, config{rate: rate{1}}, []string{"count"}, nil},
		{"every kind", map[string][]string{"name": {"a", "b"}, "seed": {"-3"}, "ratio": {"0.25"}, "wait": {"1m30s"}, "on": {"true"}, "tag": {"x,y", "z"}, "rate": {"+Inf"}},
			config{name: "b", n: 9, seed: -3, ratio: 0.25, wait: 90 * time.Second, on: true, tags: []string{"x,y", "z"}, rate: rate{inf()}},
			[]string{"name", "seed", "ratio", "wait", "on", "tag", "rate"}, nil},
		{"bad texts are field errors, the rest still applied", map[string][]string{"count": {"many"}, "rate": {"0"}, "ratio": {"0.5"}},
			config{n: 9, ratio: 0.5, rate: rate{1}}, []string{"count", "rate", "ratio"},
			[]string{`count: invalid value "many": strconv.Atoi: parsing "many": invalid syntax`, `rate: must be a number > 0 or inf, got "0"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := config{n: 9, rate: rate{1}}
			ps := c.params()
			errs := param.Apply(ps, func(f string) ([]string, bool) { v, ok := tt.given[f]; return v, ok })
			var got []string
			for _, e := range errs {
				if field.Of(e) == nil {
					t.Errorf("%v is not a field error", e)
				}
				got = append(got, e.Error())
			}
			if !reflect.DeepEqual(got, tt.errs) {
				t.Errorf("errors %q, want %q", got, tt.errs)
			}
			if !reflect.DeepEqual(c, tt.want) {
				t.Errorf("config %+v, want %+v", c, tt.want)
			}
			for _, p := range ps {
				want := false
				for _, s := range tt.set {
					want = want || s == p.Field
				}
				if p.Given != want || param.IsGiven(ps, p.Field) != want {
					t.Errorf("%s: given %v, want %v", p.Field, p.Given, want)
				}
			}
		})
	}
}

func TestApplySetsACommandsDefaultsNotGiven(t *testing.T) {
	c := config{n: 9}
	ps := c.params()
	held := map[string][]string{"count": {"4"}, "name": {"x"}}
	errs := param.Apply(ps, func(f string) ([]string, bool) { return held[f], f == "name" })
	if len(errs) > 0 || c.n != 4 || c.name != "x" {
		t.Fatalf("errs %v, count %d, name %q; want none, 4, x", errs, c.n, c.name)
	}
	if param.IsGiven(ps, "count") || !param.IsGiven(ps, "name") {
		t.Errorf("given: count %v, name %v; want false, true", param.IsGiven(ps, "count"), param.IsGiven(ps, "name"))
	}
}

func inf() float64 { v, _ := strconv.ParseFloat("inf", 64); return v }

func TestSetOfNothingIsNotGiven(t *testing.T) {
	var n int
	p := param.Int("count", &n, "")
	if err := p.Set(); err != nil || p.Given {
		t.Errorf("Set() = %v, given %v; want nil, false", err, p.Given)
	}
	var unbound param.Param
	if err := unbound.Set("1"); err == nil || !strings.Contains(err.Error(), "bound to nothing") {
		t.Errorf("Set on an unbound param = %v, want an error", err)
	}
}

func TestRenderWritesReferences(t *testing.T) {
	flag := func(name string) string { return "--" + strings.ReplaceAll(name, " ", "-") }
	tests := []struct{ text, want string }{
		{"", ""},
		{"plain words", "plain words"},
		{fmt.Sprintf("mean = %v", field.Ref("think time")), "mean = --think-time"},
		{fmt.Sprintf("from %v to %v", field.Ref("ramp start"), field.Ref("ramp end")), "from --ramp-start to --ramp-end"},
	}
	for _, tt := range tests {
		if got := param.Render(tt.text, flag); got != tt.want {
			t.Errorf("Render(%q) = %q, want %q", tt.text, got, tt.want)
		}
	}
}
