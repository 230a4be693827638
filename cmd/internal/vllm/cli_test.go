package vllm_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"

	"github.com/loadcurve/loadcurve/cmd/internal/cliparam"
	"github.com/loadcurve/loadcurve/cmd/internal/vllm"
)

// list is a list flag's value, as the command's.
// TestWithFlagsCompletesACommand: the vLLM flags a command lacks become its flags, of their type,
// under Category, with what they do here; the flags it has are left to it.
func TestWithFlagsCompletesACommand(t *testing.T) {
	own := []cli.Flag{&cli.IntFlag{Name: "max-concurrency"}, &cli.StringFlag{Name: "rates", Aliases: []string{"request-rate"}}}
	flags := vllm.WithFlags("sweep", own)[len(own):]
	byName := map[string]cli.Flag{}
	for _, f := range flags {
		byName[f.Names()[0]] = f
	}
	if len(flags) != len(vllm.Flags)-2 {
		t.Errorf("%d flags, want every vLLM flag but the command's own 2 (%d)", len(flags), len(vllm.Flags)-2)
	}
	for _, have := range []string{"max-concurrency", "request-rate"} {
		if _, ok := byName[have]; ok {
			t.Errorf("--%s is the command's own (a name or an alias), yet made again", have)
		}
	}
	for _, tc := range []struct {
		name  string
		usage string // its usage's start
		check func(cli.Flag) bool
	}{
		{"num-warmups", "vLLM's flag: sends that many", func(f cli.Flag) bool { _, ok := f.(*cli.IntFlag); return ok }},
		{"trust-remote-code", "vLLM's flag, no effect here: ", func(f cli.Flag) bool { _, ok := f.(*cli.BoolFlag); return ok }},
		{"lora-modules", "vLLM's flag, refused: ", func(f cli.Flag) bool {
			g, ok := f.(*cli.GenericFlag)
			_, isList := g.Value.(*cliparam.List)
			return ok && isList
		}},
		{"ramp-up-start-rps", "vLLM's flag, refused here: a sweep's tiers", func(f cli.Flag) bool { _, ok := f.(*cli.Float64Flag); return ok }},
	} {
		f, ok := byName[tc.name]
		if !ok {
			t.Errorf("--%s missing", tc.name)
			continue
		}
		d := f.(cli.DocGenerationFlag)
		if !tc.check(f) || !strings.HasPrefix(d.GetUsage(), tc.usage) || f.(cli.CategorizableFlag).GetCategory() != vllm.Category {
			t.Errorf("--%s: %T, usage %q, category %q; want usage %q… under %q", tc.name, f, d.GetUsage(), f.(cli.CategorizableFlag).GetCategory(), tc.usage, vllm.Category)
		}
	}
}

// TestGivenAndReadRun: Given (and ArgsOf's) is true for a flag the command has and was given, from the
// command line or the environment, false for one it lacks; ReadRun reads --num-warmups (in
// range) and --disable-tqdm, and says what is refused.
func TestGivenAndReadRun(t *testing.T) {
	t.Setenv("VLLM_TEST_SEED", "3")
	for _, tc := range []struct {
		args    []string
		given   map[string]bool
		run     vllm.Run
		refused string
	}{
		{args: nil, given: map[string]bool{"num-warmups": false, "seed": true, "nosuch": false}},
		{args: []string{"--num-warmups", "5", "--disable-tqdm"}, given: map[string]bool{"num-warmups": true, "disable-tqdm": true},
			run: vllm.Run{Warmups: 5, WarmupsGiven: true, Quiet: true}},
		{args: []string{"--disable-tqdm=false"}, given: map[string]bool{"disable-tqdm": true}},
		{args: []string{"--num-warmups", "-1"}, run: vllm.Run{Warmups: -1, WarmupsGiven: true}, refused: "--num-warmups must be in [0, 100000], got -1"},
		{args: []string{"--lora-modules", "a"}, refused: "--lora-modules"},
	} {
		var got vllm.Run
		var errs []error
		app := &cli.App{Name: "t", Writer: &bytes.Buffer{}, ErrWriter: &bytes.Buffer{}, Commands: []*cli.Command{{
			Name:  "run",
			Flags: vllm.WithFlags("run", []cli.Flag{&cli.IntFlag{Name: "seed", EnvVars: []string{"VLLM_TEST_SEED"}}}),
			Action: func(c *cli.Context) error {
				for name, want := range tc.given {
					if vllm.Given(c, name) != want || vllm.ArgsOf(c).Given(name) != want {
						t.Errorf("%q: Given(%s) = %v, want %v", tc.args, name, !want, want)
					}
				}
				got, errs = vllm.ReadRun(vllm.ArgsOf(c), "run", c.App.ErrWriter)
				return nil
			},
		}}}
		if err := app.RunContext(context.Background(), append([]string{"t", "run"}, tc.args...)); err != nil {
			t.Fatalf("%q: %v", tc.args, err)
		}
		if got != tc.run {
			t.Errorf("%q: ReadRun = %+v, want %+v", tc.args, got, tc.run)
		}
		if (tc.refused == "") != (len(errs) == 0) || len(errs) > 0 && !strings.Contains(errs[0].Error(), tc.refused) {
			t.Errorf("%q: refusals %v, want %q", tc.args, errs, tc.refused)
		}
	}
}
