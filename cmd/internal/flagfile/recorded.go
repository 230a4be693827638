package flagfile

import (
	"errors"
	"fmt"
	"slices"

	"github.com/urfave/cli/v2"

	"github.com/loadcurve/loadcurve/cmd/internal/clihelp"
	"github.com/loadcurve/loadcurve/internal/scenario"
)

// Recorded is a scenario file that a command wrote (Resolve), read back for a command with the
// same flags: each flag's values, by its first name, and the line that sets it.
type Recorded struct {
	Path   string
	names  []string // in the file's order, each once
	values map[string][]string
	lines  map[string]int
}

// Read reads the recorded scenario at path for a command whose flags are flags (a name the
// flags lack is kept as it is). A file that cannot be read returns scenario.ReadFile's error (test
// it with errors.Is, e.g. os.ErrNotExist); one that is not a scenario, or holds a value that is
// neither a value nor a list, an error with its line.
func Read(path string, flags []cli.Flag) (*Recorded, error) {
	b, err := scenario.ReadFile(path)
	if err != nil {
		return nil, err
	}
	entries, err := scenario.Parse(b)
	if err != nil {
		var se *scenario.Error
		if errors.As(err, &se) && se.Line > 0 {
			return nil, fmt.Errorf("%s:%d: not a scenario: %v", path, se.Line, se.Err)
		}
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	r := &Recorded{Path: path, values: map[string][]string{}, lines: map[string]int{}}
	names := map[string]string{}
	for _, f := range flags {
		for _, n := range f.Names() {
			names[n] = f.Names()[0]
		}
	}
	for _, e := range entries {
		if e.ValueErr != nil {
			return nil, fmt.Errorf("%s:%d: --%s: %v", path, e.ValueLine, clihelp.Excerpt(e.Name), e.ValueErr)
		}
		name := e.Name
		if canonical, ok := names[name]; ok {
			name = canonical
		}
		if _, ok := r.values[name]; !ok {
			r.names = append(r.names, name)
		}
		r.values[name], r.lines[name] = e.Values, e.Line
	}
	return r, nil
}

// Values are the recorded values of the flag called name (its first name), and whether the
// file sets it.
func (r *Recorded) Values(name string) ([]string, bool) {
	v, ok := r.values[name]
	return v, ok
}

// Line is the line of the file that sets the flag called name, 0 when none does.
func (r *Recorded) Line(name string) int { return r.lines[name] }

// Difference is a flag given to a command with values other than the recorded ones.
type Difference struct {
	Name      string
	Got, Want []string
	// Line is the file's line that sets the flag; 0 when the file does not set it, and Want
	// are then the flag's defaults.
	Line int
}

// Compare returns every flag set on c, other than the free ones, whose values differ from the
// recorded ones (or, for a flag the file does not set, from the flag's defaults), in the order
// of the command's flags. same, when set, is asked first for each: it returns the flag's values
// as they are to be compared and shown, and whether they agree however written; otherwise
// they must be equal.
func (r *Recorded) Compare(c *cli.Context, free map[string]bool, same func(name string, got, want []string) ([]string, []string, bool)) []Difference {
	var out []Difference
	for _, f := range c.Command.Flags {
		name := f.Names()[0]
		if free[name] || !c.IsSet(name) {
			continue
		}
		want, recorded := r.values[name]
		if !recorded {
			want = Defaults(f)
		}
		got := Values(c, f)
		if same != nil {
			var ok bool
			if got, want, ok = same(name, got, want); ok {
				continue
			}
		}
		if !slices.Equal(got, want) {
			out = append(out, Difference{Name: name, Got: got, Want: want, Line: r.lines[name]})
		}
	}
	return out
}

// Take sets on c every recorded flag that c does not set, except those in skip. A name that is
// none of the command's flags is passed over. Each value the flag refuses is an error with the
// file's line.
func (r *Recorded) Take(c *cli.Context, skip map[string]bool) []error {
	flags := ByName(c.Command)
	var errs []error
	for _, name := range r.names {
		f, ok := flags[name]
		if !ok {
			continue
		}
		canonical := f.Names()[0]
		if skip[canonical] || c.IsSet(canonical) {
			continue
		}
		for _, v := range r.values[name] {
			if err := c.Set(canonical, v); err != nil {
				errs = append(errs, fmt.Errorf("%s:%d: --%s %s: %s", r.Path, r.lines[name], canonical, clihelp.Excerpt(v), clihelp.Excerpt(err.Error())))
			}
		}
	}
	return errs
}
