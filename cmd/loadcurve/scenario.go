package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/loadcurve/loadcurve/cmd/internal/clihelp"
	"github.com/loadcurve/loadcurve/cmd/internal/flagfile"
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
	if err := flagfile.ApplyFile(c, "config"); err != nil {
		return usageError{err}
	}
	return nil
}

// secretFlags hold values no output may show: the resolved scenario names them, without them.
var secretFlags = map[string]bool{"api-key": true, "header": true}

// urlFlags hold URLs, which the resolved scenario shows without user info, query or fragment.
var urlFlags = map[string]bool{"base-url": true, "server-metrics": true}

// unresolvedFlags are never written into the resolved scenario.
var unresolvedFlags = map[string]bool{"config": true, "help": true, "resume": true}

// scenarioSecrets are the secrets of the command's flags and environment (the API key, header
// values, the base URL's credentials and query values, credentials in --extra-body), hidden
// from every value written.
func scenarioSecrets(c *cli.Context) *redact.Secrets {
	key := os.Getenv("OPENAI_API_KEY")
	if k := flagfile.String(c, "api-key"); k != "" {
		key = k
	}
	return redact.FromSettings(key, flagfile.Strings(c, "header"), flagfile.String(c, "base-url"), []byte(flagfile.String(c, "extra-body")))
}

// resolvedScenario is the scenario the command ran with: every flag that was set, by the
// command line or the scenario file, with its value (secrets left out), as YAML that --config
// reads back.
func resolvedScenario(c *cli.Context) ([]byte, error) {
	settings, omitted := flagfile.Resolve(c, flagfile.Resolution{Skip: unresolvedFlags, Secret: secretFlags, URL: urlFlags,
		Secrets: scenarioSecrets(c), More: func(f cli.Flag) []string {
			if _, ok := clihelp.Unwrap(f).(*cli.StringSliceFlag); ok && f.Names()[0] == "goodput" {
				// vLLM's form, --goodput ttft:500 tpot:50, leaves the pairs after the first as
				// positional arguments (objectives reads them): they are the flag's too.
				return objectiveArgs(c)
			}
			return nil
		}})
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
