package cliparam_test

import (
	"errors"
	"fmt"
	"io"
	"reflect"
	"testing"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/loadcurve/loadcurve/cmd/internal/cliparam"
	"github.com/loadcurve/loadcurve/internal/field"
	"github.com/loadcurve/loadcurve/internal/param"
)

var binding = cliparam.Binding{
	Fields:  map[string]string{"request rate": "request-rate", "burst": "burstiness", "key": "api-key"},
	Aliases: map[string][]string{"request-rate": {"rate"}},
	Env:     map[string][]string{"api-key": {"CLIPARAM_TEST_KEY"}},
}

// settings are one param of every kind a flag can give.
type settings struct {
	rate    float64
	burst   string
	n       int
	seed    int64
	timeout time.Duration
	quiet   bool
	headers []string
	key     string
}

func (s *settings) params() []param.Param {
	return []param.Param{
		param.Float("request rate", &s.rate, fmt.Sprintf("requests per second, with %v", field.Ref("burst"))),
		param.String("burst", &s.burst, "burstiness"),
		param.Int("n", &s.n, "count"),
		param.Int64("seed", &s.seed, "seed"),
		param.Duration("timeout", &s.timeout, "timeout"),
		param.Bool("quiet", &s.quiet, "quiet"),
		param.Strings("header", &s.headers, "headers"),
		param.String("key", &s.key, "key"),
	}
}

// TestFlagsAreTheParamsNamedByTheBinding: every param becomes a flag of its value's type, named
// as the binding names its field (or by the field itself), with its aliases and environment
// variables, its bound value its default, and its usage naming other inputs by their flags.
func TestFlagsAreTheParamsNamedByTheBinding(t *testing.T) {
	s := settings{rate: 4, burst: "1", n: 7}
	flags := binding.Flags("Load", s.params())
	want := []struct {
		name string
		typ  any
	}{
		{"request-rate", &cli.Float64Flag{}}, {"burstiness", &cli.StringFlag{}}, {"n", &cli.IntFlag{}}, {"seed", &cli.Int64Flag{}},
		{"timeout", &cli.DurationFlag{}}, {"quiet", &cli.BoolFlag{}}, {"header", &cli.GenericFlag{}}, {"api-key", &cli.StringFlag{}},
	}
	if len(flags) != len(want) {
		t.Fatalf("%d flags, want %d", len(flags), len(want))
	}
	for i, w := range want {
		if got := flags[i].Names()[0]; got != w.name || reflect.TypeOf(flags[i]) != reflect.TypeOf(w.typ) {
			t.Errorf("flag %d: %s %T, want %s %T", i, got, flags[i], w.name, w.typ)
		}
		if c := flags[i].(cli.CategorizableFlag).GetCategory(); c != "Load" {
			t.Errorf("%s: category %q", w.name, c)
		}
	}
	rate := flags[0].(*cli.Float64Flag)
	if rate.Value != 4 || !reflect.DeepEqual(rate.Aliases, []string{"rate"}) || rate.Usage != "requests per second, with --burstiness" {
		t.Errorf("--request-rate: value %v, aliases %q, usage %q", rate.Value, rate.Aliases, rate.Usage)
	}
	if key := flags[7].(*cli.StringFlag); !reflect.DeepEqual(key.EnvVars, []string{"CLIPARAM_TEST_KEY"}) {
		t.Errorf("--api-key: environment %q", key.EnvVars)
	}
}

// TestApplySetsGivenAndDefaults: Apply sets every param from its flag, given or at its default,
// marks the given ones, and keeps the list's values whole; with onlyGiven the others keep their
// values.
func TestApplySetsGivenAndDefaults(t *testing.T) {
	for _, onlyGiven := range []bool{false, true} {
		defaults := settings{rate: 4, burst: "1", n: 7}
		s := settings{rate: 9, burst: "9", n: 9, seed: 9}
		var ps []param.Param
		app := &cli.App{Name: "t", Writer: io.Discard, ErrWriter: io.Discard, Commands: []*cli.Command{{
			Name: "run", Flags: binding.Flags("", defaults.params()),
			Action: func(c *cli.Context) error {
				ps = s.params()
				if errs := binding.Apply(c, ps, onlyGiven); len(errs) > 0 {
					return errors.Join(errs...)
				}
				return nil
			},
		}}}
		if err := app.Run([]string{"t", "run", "--rate", "2.5", "--header", "A: 1,2", "--header", "B: 3", "--quiet"}); err != nil {
			t.Fatal(err)
		}
		want := settings{rate: 2.5, burst: "1", n: 7, quiet: true, headers: []string{"A: 1,2", "B: 3"}}
		if onlyGiven {
			want.burst, want.n, want.seed = "9", 9, 9
		}
		if !reflect.DeepEqual(s, want) {
			t.Errorf("onlyGiven %v: %+v, want %+v", onlyGiven, s, want)
		}
		if !param.IsGiven(ps, "request rate") || param.IsGiven(ps, "burst") {
			t.Errorf("onlyGiven %v: the rate given %v, the burstiness given %v", onlyGiven, param.IsGiven(ps, "request rate"), param.IsGiven(ps, "burst"))
		}
	}
}

type wrapped struct{ err error }

func (w wrapped) Error() string { return "tier 2: " + w.err.Error() }
func (w wrapped) Unwrap() error { return w.err }

// TestErrorNamesEveryInputByItsFlagOnce: a field error, wrapped or not, is written with its
// flag and the flags of the inputs it refers to; written again it is unchanged; an error that
// is not a field error stays as it is.
func TestErrorNamesEveryInputByItsFlagOnce(t *testing.T) {
	err := wrapped{field.Errorf("request rate", "must be > 0 with %v, got 0", field.Ref("burst"))}
	got := binding.Error(err)
	if want := "tier 2: --request-rate must be > 0 with --burstiness, got 0"; got.Error() != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if again := binding.Error(got); again.Error() != got.Error() {
		t.Errorf("written twice: %q", again)
	}
	if !errors.Is(got, err.err) {
		t.Error("the written error does not wrap the field error")
	}
	plain := errors.New("connection refused")
	if got := binding.Errors([]error{plain})[0]; got != plain {
		t.Errorf("a plain error became %q", got)
	}
}

// TestPrefixedNamesTheFlagsOfAPrefixedGroup: a group given with a prefix ("sim-") has its fields
// and the fields its texts refer to prefixed, so its flags and their usages name each other.
func TestPrefixedNamesTheFlagsOfAPrefixedGroup(t *testing.T) {
	var s settings
	ps := cliparam.Prefixed("sim-", s.params()[:2])
	flags := cliparam.Binding{}.Flags("", ps)
	rate := flags[0].(*cli.Float64Flag)
	if rate.Name != "sim-request rate" || rate.Usage != "requests per second, with --sim-burst" || flags[1].Names()[0] != "sim-burst" {
		t.Errorf("prefixed: %q (%q), %q", rate.Name, rate.Usage, flags[1].Names()[0])
	}
	if orig := s.params()[0]; orig.Field != "request rate" {
		t.Errorf("the original params changed: %q", orig.Field)
	}
}
