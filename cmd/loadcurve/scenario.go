package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/loadcurve/loadcurve/cmd/internal/clihelp"
	"github.com/loadcurve/loadcurve/redact"
	"github.com/loadcurve/loadcurve/result"
	"github.com/loadcurve/loadcurve/scenario"
)

// ScenarioName is the file a result directory holds its resolved scenario in.
const ScenarioName = result.ScenarioName

// scenarioFlag is --config: a scenario file holding flag values for the command.
func scenarioFlag() cli.Flag {
	return &cli.StringFlag{Name: "config", Category: catOutput,
		Usage: "a scenario file (YAML): a line 'flag: value' for any flag of this command (a list for repeatable ones); flags on the command line override it; the resolved scenario is written to --out as " + ScenarioName}
}

// applyScenario is the Before of the commands that take --config: it sets every flag the
// scenario file names and the command line did not set. Every problem of the file is returned
// at once, each with the file's line; nothing is sent before the file is known good.
func applyScenario(c *cli.Context) error {
	path := c.String("config")
	if path == "" {
		return nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return usagef("--config: %v", err)
	}
	entries, err := scenario.Parse(b)
	if err != nil {
		var se *scenario.Error
		if errors.As(err, &se) && se.Line > 0 {
			return usagef("--config %s:%d: %v", path, se.Line, se.Err)
		}
		return usagef("--config %s: %v", path, err)
	}
	names := flagNames(c.Command.Flags)
	onCommandLine := map[string]bool{}
	for _, n := range names {
		onCommandLine[n] = c.IsSet(n)
	}
	var errs []error
	more := 0 // problems beyond the first maxScenarioErrors, counted
	bad := func(line int, format string, a ...any) {
		if len(errs) == maxScenarioErrors {
			more++
			return
		}
		errs = append(errs, fmt.Errorf("%s:%d: %s", path, line, fmt.Sprintf(format, a...)))
	}
	seen := map[string]int{}
	for _, e := range entries {
		name := e.Name
		canonical, ok := names[name]
		switch {
		case !e.NameOK:
			bad(e.Line, "a key must be a flag name")
			continue
		case name == "config":
			bad(e.Line, "a scenario cannot name another scenario")
			continue
		case !ok && len(errs) == maxScenarioErrors:
			more++ // not worth the suggestions' search
			continue
		case !ok:
			if sg := clihelp.NearestFlags(name, c.Command.Flags); sg != "" {
				bad(e.Line, "loadcurve %s has no flag --%s; did you mean %s?", c.Command.Name, name, sg)
			} else {
				bad(e.Line, "loadcurve %s has no flag --%s", c.Command.Name, name)
			}
			continue
		case seen[canonical] > 0:
			bad(e.Line, "--%s is given twice (first on line %d)", canonical, seen[canonical])
			continue
		}
		seen[canonical] = e.Line
		if e.Null {
			continue // "label: null" (or ~, or nothing) leaves the flag unset, as YAML means it
		}
		if e.ValueErr != nil {
			bad(e.ValueLine, "--%s: %v", name, e.ValueErr)
			continue
		}
		values := e.Values
		if onCommandLine[canonical] {
			// The command line wins, but a wrong value in the file is still wrong: the next
			// run without the override would send it.
			f := clihelp.FindFlag(c.Command.Flags, canonical)
			for _, v := range values {
				if err := checkFlagValue(f, v); err != nil {
					bad(e.ValueLine, "%s (the command line overrides it, but the file is wrong)", clihelp.ValueProblem(f, name, v, err.Error()))
				}
			}
			continue
		}
		for _, v := range values {
			if err := c.Set(canonical, v); err != nil {
				bad(e.ValueLine, "%s", clihelp.ValueProblem(clihelp.FindFlag(c.Command.Flags, canonical), name, v, err.Error()))
			}
		}
	}
	if more > 0 {
		errs = append(errs, fmt.Errorf("%s: and %d more problems", path, more))
	}
	if len(errs) > 0 {
		return usageError{errors.Join(errs...)}
	}
	return nil
}

// maxScenarioErrors bounds the problems of a scenario file shown (300,000 bad keys once printed
// 17 MB); the rest are counted.
const maxScenarioErrors = 20

// checkFlagValue parses v as flag f would, without setting anything (the flag package's
// parsers, which c.Set uses); string flags take any text.
func checkFlagValue(f cli.Flag, v string) error {
	var err error
	switch f.(type) {
	case *cli.IntFlag:
		_, err = strconv.ParseInt(v, 0, strconv.IntSize)
	case *cli.Int64Flag:
		_, err = strconv.ParseInt(v, 0, 64)
	case *cli.UintFlag:
		_, err = strconv.ParseUint(v, 0, strconv.IntSize)
	case *cli.Uint64Flag:
		_, err = strconv.ParseUint(v, 0, 64)
	case *cli.Float64Flag:
		_, err = strconv.ParseFloat(v, 64)
	case *cli.DurationFlag:
		_, err = time.ParseDuration(v)
	case *cli.BoolFlag:
		_, err = strconv.ParseBool(v)
	}
	return err
}

// flagNames maps every name and alias of flags to the flag's first name.
func flagNames(flags []cli.Flag) map[string]string {
	m := map[string]string{}
	for _, f := range flags {
		ns := f.Names()
		for _, n := range ns {
			m[n] = ns[0]
		}
	}
	return m
}

// secretFlags hold values no output may show: the resolved scenario names them, without them.
var secretFlags = map[string]bool{"api-key": true, "header": true}

// urlFlags hold URLs, which the resolved scenario shows without user info, query or fragment.
var urlFlags = map[string]bool{"base-url": true, "server-metrics": true}

// scenarioSecrets are the secrets of the command's flags and environment (the API key, header
// values, the base URL's credentials and query values, credentials in --extra-body), hidden
// from every value written.
func scenarioSecrets(c *cli.Context) *redact.Secrets {
	key := os.Getenv("OPENAI_API_KEY")
	if k := flagString(c, "api-key"); k != "" {
		key = k
	}
	s := redact.New()
	s.AddAPIKey(key)
	if hasFlag(c, "header") {
		for _, h := range listOf(c, "header") {
			s.AddHeader(h) // the value of "Name: value"
		}
	}
	s.AddURL(flagString(c, "base-url"))
	s.AddJSONCredentials([]byte(flagString(c, "extra-body")))
	return s
}

func hasFlag(c *cli.Context, name string) bool {
	_, ok := flagsByName(c.Command)[name]
	return ok
}

// commandFlagIndex holds, per command, its flags by every name: urfave/cli finds a flag by
// running a regular expression over every flag's names, which, asked for each of ~100 vLLM
// flags, cost about a second of CPU a command line under -race.
var commandFlagIndex sync.Map // *cli.Command → map[string]cli.Flag

// flagsByName is cmd's flags by every name and alias (nil for no command).
func flagsByName(cmd *cli.Command) map[string]cli.Flag {
	if cmd == nil {
		return nil
	}
	if m, ok := commandFlagIndex.Load(cmd); ok {
		return m.(map[string]cli.Flag)
	}
	m := map[string]cli.Flag{}
	for _, f := range cmd.Flags {
		for _, n := range f.Names() {
			m[n] = f
		}
	}
	commandFlagIndex.Store(cmd, m)
	return m
}

func flagString(c *cli.Context, name string) string {
	if !hasFlag(c, name) {
		return ""
	}
	return c.String(name)
}

// resolvedScenario is the scenario the command ran with: every flag that was set, by the
// command line or the scenario file, with its value (secrets left out), as YAML that --config
// reads back.
func resolvedScenario(c *cli.Context) ([]byte, error) {
	var settings []scenario.Setting
	var omitted []string
	secrets := scenarioSecrets(c)
	for _, f := range c.Command.Flags {
		name := f.Names()[0]
		if name == "config" || name == "help" || name == "resume" || !c.IsSet(name) {
			continue
		}
		if secretFlags[name] {
			omitted = append(omitted, "--"+name)
			continue
		}
		list := false
		switch f.(type) {
		case *cli.StringSliceFlag:
			list = true
		case *cli.GenericFlag:
			_, list = c.Generic(name).(*listValue)
		case *cli.BoolFlag, *cli.DurationFlag, *cli.IntFlag, *cli.Int64Flag, *cli.Float64Flag, *cli.StringFlag:
		default:
			continue // a kind of flag this writer does not know: left out rather than misquoted
		}
		vals := slices.Clone(flagValues(c, f))
		if _, ok := f.(*cli.StringSliceFlag); ok && name == "goodput" {
			// vLLM's form, --goodput ttft:500 tpot:50, leaves the pairs after the first as
			// positional arguments (objectives reads them): they are the flag's too.
			vals = append(vals, objectiveArgs(c)...)
		}
		if _, ok := f.(*cli.StringFlag); ok && urlFlags[name] {
			if u := redact.URL(vals[0]); u != vals[0] {
				vals[0] = u
				omitted = append(omitted, "the credentials and query of --"+name)
			}
		}
		for i, v := range vals {
			vals[i] = secrets.Redact(v) // the values whole, as typed: only their secrets hidden
		}
		settings = append(settings, scenario.Setting{Name: name, Values: vals, List: list})
	}
	comments := []string{fmt.Sprintf("loadcurve %s, resolved at %s: every flag set by the command line or --config.", c.Command.Name, time.Now().UTC().Format(time.RFC3339))}
	if len(omitted) > 0 {
		comments = append(comments, "Left out (secrets): "+strings.Join(omitted, ", ")+".")
	}
	comments = append(comments, "Run it again with: loadcurve "+c.Command.Name+" --config "+ScenarioName)
	return scenario.Encode(scenario.Resolved{Comments: comments, Settings: settings})
}

// writeScenario writes the resolved scenario into a result directory.
func writeScenario(dir string, c *cli.Context) error {
	b, err := resolvedScenario(c)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, ScenarioName), b, 0o644); err != nil {
		return fmt.Errorf("write %s: %w", ScenarioName, err)
	}
	return nil
}
