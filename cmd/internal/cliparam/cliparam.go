// Package cliparam is the seam between the libraries' settings (package param) and urfave/cli:
// it writes a library's params as flags, sets them from a command line, and writes the
// libraries' field errors (package field) with the flags that give them. The libraries speak in
// their own words; a Binding names, once, the flag of each field.
package cliparam

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/loadcurve/loadcurve/cmd/internal/flagfile"
	"github.com/loadcurve/loadcurve/internal/field"
	"github.com/loadcurve/loadcurve/internal/param"
)

// Binding names the flag of every library field: Fields maps a field to its flag's name
// (without dashes); a field it lacks is given by the flag of its own name. Aliases and Env are
// the other names of a flag: its aliases and the environment variables that give it.
type Binding struct {
	Fields  map[string]string
	Aliases map[string][]string
	Env     map[string][]string
}

// Flag returns the flag, with its dashes, that gives the field.
func (b Binding) Flag(fieldName string) string {
	if f, ok := b.Fields[fieldName]; ok {
		return "--" + f
	}
	return "--" + fieldName
}

// Flags writes params as flags of one help category, each named as b names its field, of the
// urfave/cli type of its value, the bound value its default; a []string param is a repeatable
// List.
func (b Binding) Flags(category string, ps []param.Param) []cli.Flag {
	out := make([]cli.Flag, 0, len(ps))
	for _, p := range ps {
		name := strings.TrimPrefix(b.Flag(p.Field), "--")
		usage, def, aliases, env := param.Render(p.Usage, b.Flag), param.Render(p.DefaultText, b.Flag), b.Aliases[name], b.Env[name]
		switch v := p.Current().(type) {
		case string:
			out = append(out, &cli.StringFlag{Name: name, Aliases: aliases, EnvVars: env, Category: category, Value: v, DefaultText: def, Usage: usage})
		case int:
			out = append(out, &cli.IntFlag{Name: name, Aliases: aliases, EnvVars: env, Category: category, Value: v, DefaultText: def, Usage: usage})
		case int64:
			out = append(out, &cli.Int64Flag{Name: name, Aliases: aliases, EnvVars: env, Category: category, Value: v, DefaultText: def, Usage: usage})
		case float64:
			out = append(out, &cli.Float64Flag{Name: name, Aliases: aliases, EnvVars: env, Category: category, Value: v, DefaultText: def, Usage: usage})
		case time.Duration:
			out = append(out, &cli.DurationFlag{Name: name, Aliases: aliases, EnvVars: env, Category: category, Value: v, DefaultText: def, Usage: usage})
		case bool:
			out = append(out, &cli.BoolFlag{Name: name, Aliases: aliases, EnvVars: env, Category: category, Value: v, DefaultText: def, Usage: usage})
		case []string:
			out = append(out, &cli.GenericFlag{Name: name, Aliases: aliases, EnvVars: env, Category: category, Value: &List{}, DefaultText: def, Usage: usage})
		default:
			panic(fmt.Sprintf("cliparam: param %q holds a %T, which no flag type gives", p.Field, v))
		}
	}
	return out
}

// Apply sets every param from its flag, given or at the command's default, and marks those the
// user gave (param.Apply); with onlyGiven, a param whose flag was not given keeps its value.
func (b Binding) Apply(c *cli.Context, ps []param.Param, onlyGiven bool) []error {
	byName := flagfile.ByName(c.Command)
	return param.Apply(ps, func(name string) ([]string, bool) {
		flag := strings.TrimPrefix(b.Flag(name), "--")
		f, ok := byName[flag]
		if !ok || onlyGiven && !c.IsSet(flag) {
			return nil, false
		}
		return flagfile.Values(c, f), c.IsSet(flag)
	})
}

// Error writes a library's field error with its flag, named once ("--burstiness must be > 0 or
// inf"), and every other input its message refers to by its flag; other errors, and errors
// written already, stay as they are.
func (b Binding) Error(err error) error { return Render(err, b.Flag) }

// Errors maps every error with Error.
func (b Binding) Errors(errs []error) []error {
	out := make([]error, len(errs))
	for i, e := range errs {
		out[i] = b.Error(e)
	}
	return out
}

// Render writes err's field error with the flags flag names: see Binding.Error.
func Render(err error, flag func(string) string) error {
	fe := field.Of(err)
	var done written
	if fe == nil || errors.As(err, &done) {
		return err
	}
	// Wrapped, only the field error's part of the message is rewritten.
	return written{text: strings.Replace(err.Error(), fe.Error(), fe.Render(flag), 1), err: err}
}

// written is an error written with its flags; it wraps the error it rewrites.
type written struct {
	text string
	err  error
}

func (w written) Error() string { return w.text }
func (w written) Unwrap() error { return w.err }

// Prefixed returns the params named as the flags of a command that gives them with a prefix
// ("sim-"): their fields, and every field their texts refer to.
func Prefixed(prefix string, ps []param.Param) []param.Param {
	out := slices.Clone(ps)
	for i := range out {
		p := &out[i]
		for _, text := range []*string{&p.Usage, &p.DefaultText} {
			for _, r := range field.Of(field.Errorf("", "%s", *text)).Refs() {
				*text = strings.ReplaceAll(*text, fmt.Sprint(field.Ref(r)), fmt.Sprint(field.Ref(prefix+r)))
			}
		}
		p.Field = prefix + p.Field
	}
	return out
}

// Concat joins groups of flags.
func Concat(groups ...[]cli.Flag) []cli.Flag {
	var out []cli.Flag
	for _, g := range groups {
		out = append(out, g...)
	}
	return out
}

// List is a repeatable flag's value whose values are kept whole: a StringSliceFlag would split
// them at commas, and a header's or a metadata value may hold one.
type List struct{ vals []string }

func (l *List) Set(s string) error { l.vals = append(l.vals, s); return nil }
func (l *List) String() string     { return "" } // no default to show in --help

// List is the values given (flagfile.Lister).
func (l *List) List() []string { return l.vals }

// ListOf returns the values given to a List flag.
func ListOf(c *cli.Context, name string) []string {
	if l, ok := c.Generic(name).(*List); ok {
		return l.vals
	}
	return nil
}
