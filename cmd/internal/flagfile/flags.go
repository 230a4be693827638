package flagfile

import (
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/urfave/cli/v2"

	"github.com/loadcurve/loadcurve/cmd/internal/clihelp"
)

// Lister is the value of a GenericFlag that is a list: a repeatable flag whose values are kept
// whole (a StringSliceFlag splits them at commas). Values and Resolve write its values one by
// one, and Compare takes its default to be none.
type Lister interface {
	cli.Generic
	List() []string
}

// Values are a flag's values on c, as Resolve writes them and Apply reads them back: a list's
// values, or the one value in the flag package's own text. Nil for a kind of flag this package
// does not know.
func Values(c *cli.Context, f cli.Flag) []string {
	name := f.Names()[0]
	switch clihelp.Unwrap(f).(type) {
	case *cli.StringSliceFlag:
		return c.StringSlice(name)
	case *cli.GenericFlag:
		if l, ok := c.Generic(name).(Lister); ok {
			return l.List()
		}
		return []string{fmt.Sprint(c.Generic(name))}
	case *cli.BoolFlag:
		return []string{strconv.FormatBool(c.Bool(name))}
	case *cli.DurationFlag:
		return []string{c.Duration(name).String()}
	case *cli.IntFlag:
		return []string{strconv.Itoa(c.Int(name))}
	case *cli.Int64Flag:
		return []string{strconv.FormatInt(c.Int64(name), 10)}
	case *cli.Float64Flag:
		return []string{strconv.FormatFloat(c.Float64(name), 'g', -1, 64)}
	case *cli.StringFlag:
		return []string{c.String(name)}
	}
	return nil
}

// Defaults are a flag's default values, as Values writes them (none for a list).
func Defaults(f cli.Flag) []string {
	switch f := clihelp.Unwrap(f).(type) {
	case *cli.StringSliceFlag:
		if f.Value == nil {
			return nil
		}
		return f.Value.Value()
	case *cli.GenericFlag:
		if _, ok := f.Value.(Lister); ok {
			return nil
		}
		return []string{fmt.Sprint(f.Value)}
	case *cli.BoolFlag:
		return []string{strconv.FormatBool(f.Value)}
	case *cli.DurationFlag:
		return []string{f.Value.String()}
	case *cli.IntFlag:
		return []string{strconv.Itoa(f.Value)}
	case *cli.Int64Flag:
		return []string{strconv.FormatInt(f.Value, 10)}
	case *cli.Float64Flag:
		return []string{strconv.FormatFloat(f.Value, 'g', -1, 64)}
	case *cli.StringFlag:
		return []string{f.Value}
	}
	return nil
}

// commandFlags holds, per command, its flags by every name: urfave/cli finds a flag by running
// a regular expression over every flag's names, which, asked for each of ~100 flags, cost about
// a second of CPU a command line under -race.
var commandFlags sync.Map // *cli.Command → map[string]cli.Flag

// ByName is cmd's flags by every name and alias (nil for no command). It is built once per
// command: the command's flags must not change after the first call.
func ByName(cmd *cli.Command) map[string]cli.Flag {
	if cmd == nil {
		return nil
	}
	if m, ok := commandFlags.Load(cmd); ok {
		return m.(map[string]cli.Flag)
	}
	m := map[string]cli.Flag{}
	for _, f := range cmd.Flags {
		for _, n := range f.Names() {
			m[n] = f
		}
	}
	commandFlags.Store(cmd, m)
	return m
}

// Quoted writes values for a message: one quoted, several as a list (at most ten, then a
// count), none as alt; each cut to a few dozen characters (clihelp.Excerpt).
func Quoted(vals []string, alt string) string {
	const most = 10
	switch len(vals) {
	case 0:
		return alt
	case 1:
		return strconv.Quote(clihelp.Excerpt(vals[0]))
	}
	q := make([]string, 0, min(len(vals), most)+1)
	for _, v := range vals[:min(len(vals), most)] {
		q = append(q, strconv.Quote(clihelp.Excerpt(v)))
	}
	if len(vals) > most {
		q = append(q, fmt.Sprintf("and %d more", len(vals)-most))
	}
	return strings.Join(q, " ")
}

// ShellWord quotes s for a POSIX shell when it needs it, for a command line to be copied.
func ShellWord(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=:@%+,") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
