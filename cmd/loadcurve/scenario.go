package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v2"
	"go.yaml.in/yaml/v3"

	"github.com/loadcurve/loadcurve/redact"
	"github.com/loadcurve/loadcurve/sweep"
)

// ScenarioName is the file a result directory holds its resolved scenario in.
const ScenarioName = sweep.ScenarioName

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
	dec := yaml.NewDecoder(bytes.NewReader(b))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil && !errors.Is(err, io.EOF) {
		return usagef("--config %s: %v", path, err)
	}
	// A second document would be dropped without a word by a plain Unmarshal: the flags it
	// names would silently not apply.
	var next yaml.Node
	if err := dec.Decode(&next); err != nil && !errors.Is(err, io.EOF) {
		return usagef("--config %s: one document expected, and what follows the first '---' is not YAML either: %v", path, err)
	} else if err == nil && len(next.Content) > 0 && !isNull(next.Content[0]) {
		return usagef("--config %s:%d: one document expected: a second one starts here (after a '---'); put every flag in one mapping", path, next.Content[0].Line)
	}
	if len(doc.Content) == 0 || isNull(doc.Content[0]) {
		return nil // an empty file sets nothing
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return usagef("--config %s:%d: want a mapping of flag names to values (request-rates: auto), got a %s", path, root.Line, kindName(root.Kind))
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
	for i := 0; i+1 < len(root.Content); i += 2 {
		key, val := root.Content[i], root.Content[i+1]
		name := key.Value
		canonical, ok := names[name]
		switch {
		case key.Kind != yaml.ScalarNode:
			bad(key.Line, "a key must be a flag name")
			continue
		case name == "config":
			bad(key.Line, "a scenario cannot name another scenario")
			continue
		case !ok && len(errs) == maxScenarioErrors:
			more++ // not worth the suggestions' search
			continue
		case !ok:
			if sg := suggest(name, flagNameList(c.Command.Flags)); len(sg) > 0 {
				bad(key.Line, "loadcurve %s has no flag --%s; did you mean %s?", c.Command.Name, name, orList(dashed(sg)))
			} else {
				bad(key.Line, "loadcurve %s has no flag --%s", c.Command.Name, name)
			}
			continue
		case seen[canonical] > 0:
			bad(key.Line, "--%s is given twice (first on line %d)", canonical, seen[canonical])
			continue
		}
		seen[canonical] = key.Line
		if isNull(val) {
			continue // "label: null" (or ~, or nothing) leaves the flag unset, as YAML means it
		}
		values, err := scalars(val)
		if err != nil {
			bad(val.Line, "--%s: %v", name, err)
			continue
		}
		if onCommandLine[canonical] {
			// The command line wins, but a wrong value in the file is still wrong: the next
			// run without the override would send it.
			f := findFlag(c.Command.Flags, canonical)
			for _, v := range values {
				if err := checkFlagValue(f, v); err != nil {
					bad(val.Line, "%s (the command line overrides it, but the file is wrong)", valueProblem(f, name, v, err.Error()))
				}
			}
			continue
		}
		for _, v := range values {
			if err := c.Set(canonical, v); err != nil {
				bad(val.Line, "%s", valueProblem(findFlag(c.Command.Flags, canonical), name, v, err.Error()))
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

// isNull reports whether n is YAML's null: null, ~ or nothing at all.
func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null"
}

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

// scalars are a value's text: one scalar, or a list of scalars (a repeatable flag).
func scalars(n *yaml.Node) ([]string, error) {
	switch n.Kind {
	case yaml.ScalarNode:
		return []string{n.Value}, nil
	case yaml.SequenceNode:
		var out []string
		for _, e := range n.Content {
			if isNull(e) {
				return nil, fmt.Errorf("a list may not hold null (line %d): give a value, or leave the item out", e.Line)
			}
			if e.Kind != yaml.ScalarNode {
				return nil, fmt.Errorf("a list may hold values only, got a %s on line %d", kindName(e.Kind), e.Line)
			}
			out = append(out, e.Value)
		}
		return out, nil
	}
	return nil, fmt.Errorf("want a value or a list of values, got a %s", kindName(n.Kind))
}

func kindName(k yaml.Kind) string {
	switch k {
	case yaml.MappingNode:
		return "mapping"
	case yaml.SequenceNode:
		return "list"
	case yaml.AliasNode:
		return "alias"
	}
	return "value"
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
	_, ok := flagNames(c.Command.Flags)[name]
	return ok
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
	root := &yaml.Node{Kind: yaml.MappingNode}
	var omitted []string
	secrets := scenarioSecrets(c)
	clean := secrets.Redact // the values whole, as typed: only their secrets hidden
	for _, f := range c.Command.Flags {
		name := f.Names()[0]
		if name == "config" || name == "help" || name == "resume" || !c.IsSet(name) {
			continue
		}
		if secretFlags[name] {
			omitted = append(omitted, "--"+name)
			continue
		}
		val := &yaml.Node{Kind: yaml.ScalarNode}
		list := func(vs []string) {
			val = &yaml.Node{Kind: yaml.SequenceNode}
			for _, v := range vs {
				val.Content = append(val.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: clean(v), Style: yaml.DoubleQuotedStyle})
			}
		}
		switch f.(type) {
		case *cli.StringSliceFlag:
			vals := c.StringSlice(name)
			if name == "goodput" {
				// vLLM's form, --goodput ttft:500 tpot:50, leaves the pairs after the first
				// as positional arguments (objectives reads them): they are the flag's too.
				for _, a := range c.Args().Slice() {
					if strings.Contains(a, ":") {
						vals = append(vals, a)
					}
				}
			}
			list(vals)
		case *cli.GenericFlag:
			if l, ok := c.Generic(name).(*listValue); ok {
				list(l.vals)
			} else {
				val.Value = fmt.Sprint(c.Generic(name))
			}
		case *cli.BoolFlag:
			val.Value = strconv.FormatBool(c.Bool(name))
		case *cli.DurationFlag:
			val.Value = c.Duration(name).String()
		case *cli.IntFlag:
			val.Value = strconv.Itoa(c.Int(name))
		case *cli.Int64Flag:
			val.Value = strconv.FormatInt(c.Int64(name), 10)
		case *cli.Float64Flag:
			val.Value = strconv.FormatFloat(c.Float64(name), 'g', -1, 64)
		case *cli.StringFlag:
			val.Value = c.String(name)
			if urlFlags[name] {
				if u := redact.URL(val.Value); u != val.Value {
					val.Value = u
					omitted = append(omitted, "the credentials and query of --"+name)
				}
			}
		default:
			continue // a kind of flag this writer does not know: left out rather than misquoted
		}
		if val.Kind == yaml.ScalarNode {
			val.Value = clean(val.Value)
			// A value that YAML would read as another type (a number, true, null) is quoted, so
			// that reading it back gives the same text.
			val.Style = yaml.DoubleQuotedStyle
			if _, err := strconv.ParseFloat(val.Value, 64); err == nil || val.Value == "true" || val.Value == "false" {
				val.Style = 0
			}
		}
		root.Content = append(root.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: name}, val)
	}
	head := fmt.Sprintf("# loadcurve %s, resolved at %s: every flag set by the command line or --config.\n", c.Command.Name, time.Now().UTC().Format(time.RFC3339))
	if len(omitted) > 0 {
		head += "# Left out (secrets): " + strings.Join(omitted, ", ") + ".\n"
	}
	head += "# Run it again with: loadcurve " + c.Command.Name + " --config " + ScenarioName + "\n"
	body, err := yaml.Marshal(root)
	if err != nil {
		return nil, fmt.Errorf("encode the resolved scenario: %w", err)
	}
	if len(root.Content) == 0 {
		body = []byte("{}\n")
	}
	return append([]byte(head), body...), nil
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
