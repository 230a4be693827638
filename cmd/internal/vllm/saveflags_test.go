package vllm_test

import (
	"strings"
	"testing"

	"github.com/urfave/cli/v2"

	"github.com/loadcurve/loadcurve/arrival"
	"github.com/loadcurve/loadcurve/cmd/internal/vllm"
	"github.com/loadcurve/loadcurve/curve/result"
)

// TestSaveFlags: run's flags of vLLM's result file are the table's flags native to run, of
// their type, under the category given; with them, run lacks none of them (WithFlags adds none),
// and sweep, which lacks them, gets them refused.
func TestSaveFlags(t *testing.T) {
	own := vllm.SaveFlags("files")
	types := map[string]string{}
	for _, f := range vllm.Flags {
		if f.Kind == vllm.Native && f.Only == "run" {
			types[f.Name] = f.Type
		}
	}
	for _, f := range own {
		name := f.Names()[0]
		typ := map[bool]string{true: "bool", false: "string"}[isBool(f)]
		if types[name] != typ || f.(cli.CategorizableFlag).GetCategory() != "files" {
			t.Errorf("--%s: %T under %q; want a %s flag of the table's, native to run, under files", name, f, f.(cli.CategorizableFlag).GetCategory(), types[name])
		}
	}
	for _, tc := range []struct {
		command string
		has     []cli.Flag
		want    string // the usage CLIFlags gives --save-result, "": not added
	}{
		{"run", own, ""},
		{"sweep", nil, "vLLM's flag, refused here: "},
	} {
		var usage string
		for _, f := range vllm.WithFlags(tc.command, tc.has)[len(tc.has):] {
			if f.Names()[0] == "save-result" {
				usage = f.(cli.DocGenerationFlag).GetUsage()
			}
		}
		if (tc.want == "") != (usage == "") || !strings.HasPrefix(usage, tc.want) {
			t.Errorf("%s: --save-result added with usage %q, want %q…", tc.command, usage, tc.want)
		}
	}
}

func isBool(f cli.Flag) bool { _, ok := f.(*cli.BoolFlag); return ok }

// TestNotWritten: a file that was asked for and not written is said, with why; one not asked
// for is not.
func TestNotWritten(t *testing.T) {
	asked, err := vllm.ReadSave(parse("--save-result"), &strings.Builder{}, arrival.Spec{}, result.DefaultSettings())
	if err != nil || asked == nil {
		t.Fatalf("ReadSave: %v, %v", asked, err)
	}
	for _, tc := range []struct {
		save *vllm.Save
		why  string
		want string
	}{
		{nil, vllm.CutShort, ""},
		{asked, vllm.CutShort, "loadcurve: --save-result: no vLLM result file written: the run did not run to its end (summary.json says so; vLLM's layout cannot)\n"},
		{asked, vllm.Interrupted, "loadcurve: --save-result: no vLLM result file written: the run was interrupted (summary.json says so; vLLM's layout cannot)\n"},
	} {
		var notes strings.Builder
		tc.save.NotWritten(&notes, tc.why)
		if notes.String() != tc.want {
			t.Errorf("asked %v, %s: %q, want %q", tc.save != nil, tc.why, notes.String(), tc.want)
		}
	}
}
