package flagfile

import (
	"errors"
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/loadcurve/loadcurve/internal/scenario"
)

// ApplyFile is Apply for the scenario file that c's flag self names (nothing to do when it
// names none): it reads the file and parses it, and says a problem of the file as a whole naming
// the flag, the file and, when there is one, the line ("--config FILE:3: …").
func ApplyFile(c *cli.Context, self string) error {
	path := c.String(self)
	if path == "" {
		return nil
	}
	b, err := scenario.ReadFile(path)
	if err != nil {
		return fmt.Errorf("--%s: %w", self, err)
	}
	entries, err := scenario.Parse(b)
	if err != nil {
		var se *scenario.Error
		if errors.As(err, &se) && se.Line > 0 {
			return fmt.Errorf("--%s %s:%d: %w", self, path, se.Line, se.Err)
		}
		return fmt.Errorf("--%s %s: %w", self, path, err)
	}
	return Apply(c, path, self, entries)
}

// Strings are the values (Values) of c's flag called name, nil when c's command has no such
// flag: for what several commands read, whichever of the flags each has.
func Strings(c *cli.Context, name string) []string {
	if f, ok := ByName(c.Command)[name]; ok {
		return Values(c, f)
	}
	return nil
}

// String is the value of c's flag called name as text (its first, for a list), "" when c's
// command has no such flag.
func String(c *cli.Context, name string) string {
	if v := Strings(c, name); len(v) > 0 {
		return v[0]
	}
	return ""
}
