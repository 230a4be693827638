package flagfile

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/loadcurve/loadcurve/cmd/internal/clihelp"
	"github.com/loadcurve/loadcurve/curve/result"
	"github.com/loadcurve/loadcurve/internal/redact"
	"github.com/loadcurve/loadcurve/internal/scenario"
)

// Resolution says which of a command's flags Resolve writes, and how.
type Resolution struct {
	// Skip are never written (the flag naming the file itself, --help, ...).
	Skip map[string]bool
	// Secret are left out: Resolve names them in its omissions, without their values.
	Secret map[string]bool
	// URL hold URLs, written without user info, query or fragment (redact.URL).
	URL map[string]bool
	// Secrets, when set, are hidden from every value written.
	Secrets *redact.Secrets
}

// Resolve returns every flag set on c, by the command line or a file, with its values (as typed,
// only their secrets hidden), as the settings of a scenario file that Apply reads back; and
// what it left out, in words ("--api-key", "the credentials and query of --base-url"). A flag
// of a kind this package does not know is left out rather than misquoted.
func Resolve(c *cli.Context, r Resolution) (settings []scenario.Setting, omitted []string) {
	for _, f := range c.Command.Flags {
		name := f.Names()[0]
		if r.Skip[name] || !c.IsSet(name) {
			continue
		}
		if r.Secret[name] {
			omitted = append(omitted, "--"+name)
			continue
		}
		list := false
		switch clihelp.Unwrap(f).(type) {
		case *cli.StringSliceFlag:
			list = true
		case *cli.GenericFlag:
			_, list = c.Generic(name).(Lister)
		case *cli.BoolFlag, *cli.DurationFlag, *cli.IntFlag, *cli.Int64Flag, *cli.Float64Flag, *cli.StringFlag:
		default:
			continue
		}
		vals := slices.Clone(Values(c, f))
		if _, ok := clihelp.Unwrap(f).(*cli.StringFlag); ok && r.URL[name] {
			if u := redact.URL(vals[0]); u != vals[0] {
				vals[0] = u
				omitted = append(omitted, "the credentials and query of --"+name)
			}
		}
		if r.Secrets != nil {
			for i, v := range vals {
				vals[i] = r.Secrets.Redact(v)
			}
		}
		settings = append(settings, scenario.Setting{Name: name, Values: vals, List: list})
	}
	return settings, omitted
}

// Write writes into dir/name the scenario c's command ran with (Resolve: every flag set, by the
// command line or a file, secrets left out) as YAML that ApplyFile reads back, headed by when
// it was resolved, what was left out and the command that runs it again.
func (r Resolution) Write(c *cli.Context, dir, name string) error {
	settings, omitted := Resolve(c, r)
	command := c.App.Name + " " + c.Command.Name
	comments := []string{fmt.Sprintf("%s, resolved at %s: every flag set by the command line or --config.", command, time.Now().UTC().Format(time.RFC3339))}
	if len(omitted) > 0 {
		comments = append(comments, "Left out (secrets): "+strings.Join(omitted, ", ")+".")
	}
	comments = append(comments, "Run it again with: "+command+" --config "+name)
	b, err := scenario.Encode(scenario.Resolved{Comments: comments, Settings: settings})
	if err != nil {
		return err
	}
	return result.WriteFile(filepath.Join(dir, name), b)
}
