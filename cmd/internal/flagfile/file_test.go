package flagfile_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"

	"github.com/loadcurve/loadcurve/cmd/internal/flagfile"
)

// TestApplyFile: the file the flag names is read and applied; a file that cannot be read or
// parsed is refused naming the flag, the file and its line; no file given is nothing to do.
func TestApplyFile(t *testing.T) {
	good := writeFile(t, "label: from-file\nseed: 9\n")
	notMapping := writeFile(t, "- a\n- b\n")
	twoDocs := writeFile(t, "seed: 1\n---\nseed: 2\n")
	badValue := writeFile(t, "seed: many\n")
	missing := filepath.Join(t.TempDir(), "none.yaml")
	for _, tc := range []struct {
		args []string
		want string // the error's start ("" for none)
		seed int
	}{
		{args: nil, seed: 1},
		{args: []string{"--config", good}, seed: 9},
		{args: []string{"--config", good, "--seed", "4"}, seed: 4},
		{args: []string{"--config", missing}, want: "--config: open " + missing},
		{args: []string{"--config", notMapping}, want: "--config " + notMapping + ":1: "},
		{args: []string{"--config", twoDocs}, want: "--config " + twoDocs + ":3: "},
		{args: []string{"--config", badValue}, want: badValue + ":1: --seed many"},
	} {
		var seed int
		err := run(t, tc.args, func(c *cli.Context) error { return flagfile.ApplyFile(c, "config") },
			func(c *cli.Context) error { seed = c.Int("seed"); return nil })
		switch {
		case tc.want == "" && (err != nil || seed != tc.seed):
			t.Errorf("%q: %v, seed %d; want seed %d", tc.args, err, seed, tc.seed)
		case tc.want != "" && (err == nil || !strings.HasPrefix(err.Error(), tc.want)):
			t.Errorf("%q: %v; want an error starting %q", tc.args, err, tc.want)
		}
	}
}

// TestStrings: a flag's values by name, whatever its kind; nothing for a flag the command has
// not.
func TestStrings(t *testing.T) {
	err := run(t, []string{"--header", "A: 1", "--header", "B: 2", "--label", "x", "--quiet"}, nil, func(c *cli.Context) error {
		for _, tc := range []struct {
			name string
			want []string
		}{
			{"header", []string{"A: 1", "B: 2"}},
			{"label", []string{"x"}},
			{"l", []string{"x"}},
			{"quiet", []string{"true"}},
			{"seed", []string{"1"}},
			{"nosuch", nil},
		} {
			if got := flagfile.Strings(c, tc.name); strings.Join(got, "|") != strings.Join(tc.want, "|") || (got == nil) != (tc.want == nil) {
				t.Errorf("Strings(%s) = %q, want %q", tc.name, got, tc.want)
			}
		}
		if got := flagfile.String(c, "header"); got != "A: 1" {
			t.Errorf("String(header) = %q, want the first", got)
		}
		if got := flagfile.String(c, "nosuch"); got != "" {
			t.Errorf("String(nosuch) = %q", got)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
