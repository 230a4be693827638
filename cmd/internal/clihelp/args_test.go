package clihelp_test

import (
	"bytes"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"

	"github.com/loadcurve/loadcurve/cmd/internal/clihelp"
)

func argsApp() *cli.App {
	return &cli.App{Name: "prog", Commands: []*cli.Command{{Name: "report", Flags: []cli.Flag{
		&cli.StringFlag{Name: "goodput", Aliases: []string{"g"}},
		&cli.BoolFlag{Name: "quiet"},
		&cli.StringSliceFlag{Name: "metadata"},
	}}}}
}

func TestFlagsFirst(t *testing.T) {
	multi := map[string]func(string) bool{"metadata": func(a string) bool { return strings.Contains(a, "=") },
		"goodput": func(a string) bool { return strings.Contains(a, ":") }}
	for _, tc := range []struct {
		in, want string
	}{
		{"prog report DIR --goodput ttft:500", "prog report --goodput ttft:500 -- DIR"},
		{"prog report DIR -g ttft:500 OTHER", "prog report -g ttft:500 -- DIR OTHER"},
		{"prog report DIR --goodput ttft:500 tpot:50 OTHER", "prog report --goodput ttft:500 --goodput tpot:50 -- DIR OTHER"},
		{"prog report --goodput ttft:500 DIR tpot:50", "prog report --goodput ttft:500 -- DIR tpot:50"}, // only the tokens right after
		{"prog report DIR --goodput=ttft:500 --quiet OTHER", "prog report --goodput=ttft:500 --quiet -- DIR OTHER"},
		{"prog report --quiet DIR", "prog report --quiet -- DIR"}, // a bool takes no value
		{"prog report --metadata tp=1 pp=2 DIR", "prog report --metadata tp=1 --metadata pp=2 -- DIR"},
		{"prog report --metadata tp=1 pp=2 --quiet", "prog report --metadata tp=1 --metadata pp=2 --quiet"},
		{"prog report DIR -- --goodput x", "prog report -- DIR --goodput x"}, // "--" ends the flags
		{"prog report --goodput", "prog report --goodput"},                   // no value to take
		{"prog report - DIR", "prog report -- - DIR"},                        // "-" is positional
		{"prog nosuch DIR --quiet", "prog nosuch DIR --quiet"},               // no such command: as it is
		{"prog report", "prog report"},
	} {
		got := clihelp.FlagsFirst(argsApp(), strings.Fields(tc.in), multi)
		if want := strings.Fields(tc.want); !slices.Equal(got, want) {
			t.Errorf("FlagsFirst(%q) = %q, want %q", tc.in, got, want)
		}
	}
}

func TestRoot(t *testing.T) {
	errBad := errors.New("bad input")
	for _, tc := range []struct {
		args   string
		out    string // in the help printed
		badErr string // the unknown command's error, marked bad; "" when none
	}{
		{args: "prog", out: "report"},
		{args: "prog help", out: "report"},
		{args: "prog help report", out: "prog report"},
		{args: "prog help reprot", badErr: "reprot"},
		{args: "prog reprot", badErr: "reprot"},
	} {
		app := argsApp()
		var out bytes.Buffer
		app.Writer = &out
		app.HideHelpCommand = true
		app.Action = func(c *cli.Context) error {
			return clihelp.Root(c, func(err error) error { return errors.Join(errBad, err) })
		}
		err := app.Run(strings.Fields(tc.args))
		switch {
		case tc.badErr == "" && (err != nil || !strings.Contains(out.String(), tc.out)):
			t.Errorf("%q: err %v, help %q; want help with %q", tc.args, err, out.String(), tc.out)
		case tc.badErr != "" && (!errors.Is(err, errBad) || !strings.Contains(err.Error(), tc.badErr)):
			t.Errorf("%q: err %v, want bad input naming %q", tc.args, err, tc.badErr)
		}
	}
}
