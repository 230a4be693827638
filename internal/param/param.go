// Package param is how a library declares its settings once, next to the config they set: each
// Param binds one input, named in the library's domain words (the Field* name its field.Errors
// use), to a field of the library's config, with a usage text and, when the bound value alone
// would not say what "not given" means, a DefaultText. The bound value, read before anything is
// applied, is the default.
//
// A command builds its own inputs (flags, a file's keys) from the declarations, naming each
// field as its user gives it, and applies what the user gave with Apply, which records which
// params were given: "given as zero" and "not given" are never confused. Usage and default
// texts may refer to other inputs with field.Ref; Render writes them as the command names them.
package param

import (
	"fmt"
	"strconv"
	"time"

	"github.com/loadcurve/loadcurve/internal/field"
)

// Kind is the type of value a Param takes.
type Kind int

// The kinds of Param.
const (
	KindText     Kind = iota // a string, or a Value parsed from one (Var)
	KindInt                  // an int
	KindInt64                // an int64
	KindFloat                // a float64
	KindDuration             // a time.Duration
	KindBool                 // a bool, given without a value
	KindList                 // repeatable: every value given is kept, in order
)

// Value is a setting parsed from text by its library, such as a rate that may be "inf".
type Value interface {
	// String writes the value as Set reads it back.
	String() string
	// Set parses the text into the value; a bad text is a field.Error.
	Set(text string) error
}

// Param is one declared setting.
type Param struct {
	// Field names the input in the library's domain words (a Field* constant).
	Field string
	// Kind is the type of its value.
	Kind Kind
	// Usage says what the setting does; it may hold field.Ref markers (Render).
	Usage string
	// DefaultText, when not empty, says what the default is in words instead of the bound
	// value ("none", "0: no waiting"); it may hold field.Ref markers (Render).
	DefaultText string
	// Given records that Apply set the value from what the user gave.
	Given bool

	ptr any // *string, *int, *int64, *float64, *time.Duration, *bool, *[]string or Value
}

// String declares a text setting bound to p.
func String(name string, p *string, usage string) Param {
	return Param{Field: name, Kind: KindText, Usage: usage, ptr: p}
}

// Var declares a text setting that v parses (Value.Set).
func Var(name string, v Value, usage string) Param {
	return Param{Field: name, Kind: KindText, Usage: usage, ptr: v}
}

// Int declares an int setting bound to p.
func Int(name string, p *int, usage string) Param {
	return Param{Field: name, Kind: KindInt, Usage: usage, ptr: p}
}

// Int64 declares an int64 setting bound to p.
func Int64(name string, p *int64, usage string) Param {
	return Param{Field: name, Kind: KindInt64, Usage: usage, ptr: p}
}

// Float declares a float64 setting bound to p.
func Float(name string, p *float64, usage string) Param {
	return Param{Field: name, Kind: KindFloat, Usage: usage, ptr: p}
}

// Duration declares a duration setting bound to p.
func Duration(name string, p *time.Duration, usage string) Param {
	return Param{Field: name, Kind: KindDuration, Usage: usage, ptr: p}
}

// Bool declares a switch bound to p.
func Bool(name string, p *bool, usage string) Param {
	return Param{Field: name, Kind: KindBool, Usage: usage, ptr: p}
}

// Strings declares a repeatable setting whose values are appended to p, each kept whole.
func Strings(name string, p *[]string, usage string) Param {
	return Param{Field: name, Kind: KindList, Usage: usage, ptr: p}
}

// Default returns the param with its default said in words.
func (p Param) Default(text string) Param {
	p.DefaultText = text
	return p
}

// Current returns the bound value: a string (KindText, also for a Var: its String), an int, an
// int64, a float64, a time.Duration, a bool or a []string, after the Kind.
func (p Param) Current() any {
	switch v := p.ptr.(type) {
	case *string:
		return *v
	case Value:
		return v.String()
	case *int:
		return *v
	case *int64:
		return *v
	case *float64:
		return *v
	case *time.Duration:
		return *v
	case *bool:
		return *v
	case *[]string:
		return append([]string(nil), *v...)
	}
	return nil
}

// Set sets the value from the texts given (the last one, or all of them for a KindList) and marks
// the param given. A text that does not parse is a field.Error naming the param.
func (p *Param) Set(texts ...string) error {
	if len(texts) == 0 {
		return nil
	}
	last := texts[len(texts)-1]
	bad := func(err error) error {
		if field.Of(err) != nil {
			return err
		}
		return field.Errorf(p.Field, "invalid value %q: %w", last, err)
	}
	p.Given = true
	switch v := p.ptr.(type) {
	case *string:
		*v = last
	case Value:
		if err := v.Set(last); err != nil {
			return bad(err)
		}
	case *int:
		n, err := strconv.Atoi(last)
		if err != nil {
			return bad(err)
		}
		*v = n
	case *int64:
		n, err := strconv.ParseInt(last, 10, 64)
		if err != nil {
			return bad(err)
		}
		*v = n
	case *float64:
		f, err := strconv.ParseFloat(last, 64)
		if err != nil {
			return bad(err)
		}
		*v = f
	case *time.Duration:
		d, err := time.ParseDuration(last)
		if err != nil {
			return bad(err)
		}
		*v = d
	case *bool:
		b, err := strconv.ParseBool(last)
		if err != nil {
			return bad(err)
		}
		*v = b
	case *[]string:
		*v = append(*v, texts...)
	default:
		return fmt.Errorf("param: %s is bound to nothing", p.Field)
	}
	return nil
}

// Apply sets every param from the texts lookup holds for it, and returns every value that did
// not parse. lookup says whether the user gave the value: a command may hold a value the user
// did not give, its own default, which Apply sets without marking the param given. A param
// lookup holds no text for (nil) keeps its bound value.
func Apply(ps []Param, lookup func(field string) (texts []string, given bool)) []error {
	var errs []error
	for i := range ps {
		texts, given := lookup(ps[i].Field)
		if texts == nil {
			continue
		}
		if err := ps[i].Set(texts...); err != nil {
			errs = append(errs, err)
		}
		ps[i].Given = given
	}
	return errs
}

// IsGiven reports whether Apply set the named param.
func IsGiven(ps []Param, name string) bool {
	for _, p := range ps {
		if p.Field == name && p.Given {
			return true
		}
	}
	return false
}

// Render writes a usage or default text with every input it refers to (field.Ref) written as
// name(input).
func Render(text string, name func(string) string) string {
	if text == "" {
		return ""
	}
	return field.Of(field.Errorf("", "%s", text)).Text(name)
}
