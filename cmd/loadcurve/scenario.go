package main

import (
	"os"

	"github.com/urfave/cli/v2"

	"github.com/loadcurve/loadcurve/cmd/internal/flagfile"
	"github.com/loadcurve/loadcurve/curve/result"
	"github.com/loadcurve/loadcurve/internal/redact"
)

// scenarioFlag is --config: a scenario file holding flag values for the command.
func scenarioFlag() cli.Flag {
	return &cli.StringFlag{Name: "config", Category: catOutput,
		Usage: "a scenario file (YAML): a line 'flag: value' for any flag of this command (a list for repeatable ones); flags on the command line override it; the resolved scenario is written to --out as " + result.ScenarioName}
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

// writeScenario writes the scenario the command ran with into a result directory
// (flagfile.Resolution.Write): every flag set, by the command line or the scenario file, with
// its value, secrets left out, as YAML that --config reads back.
func writeScenario(dir string, c *cli.Context) error {
	r := flagfile.Resolution{Skip: unresolvedFlags, Secret: secretFlags, URL: urlFlags, Secrets: scenarioSecrets(c)}
	return r.Write(c, dir, result.ScenarioName)
}
