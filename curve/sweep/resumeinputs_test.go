package sweep_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/loadcurve/loadcurve/curve/sweep"
	"github.com/loadcurve/loadcurve/internal/field"
)

// flagName names the inputs as a command line would.
func flagName(s string) string {
	return map[string]string{sweep.FieldResume: "--resume", sweep.FieldOut: "--out", sweep.FieldReplace: "--replace"}[s]
}

func rendered(errs []error) []string {
	var out []string
	for _, e := range errs {
		if fe := field.Of(e); fe != nil {
			out = append(out, fe.Render(flagName))
		} else {
			out = append(out, "not a field error: "+e.Error())
		}
	}
	return out
}

func TestOpenResumeInSaysWhatTheDirectoryMustBe(t *testing.T) {
	t.Parallel()
	empty := t.TempDir()
	for _, tc := range []struct {
		dir, want string
	}{
		{"", "--resume: give the directory of the interrupted sweep (its --out)"},
		{empty, "--resume " + empty + ": no sweep to resume: " + empty + " holds no records.jsonl (a sweep writes it when its first tier starts): give the --out directory of a sweep that was interrupted"},
	} {
		r, err := sweep.OpenResumeIn(tc.dir)
		if r != nil || err == nil {
			t.Fatalf("%q: opened %v, %v", tc.dir, r, err)
		}
		if got := rendered([]error{err}); got[0] != tc.want {
			t.Errorf("%q:\n got %s\nwant %s", tc.dir, got[0], tc.want)
		}
	}
}

func TestCheckResumeOutput(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(dir, link); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name     string
		out      string
		outGiven bool
		replace  bool
		want     []string
	}{
		{"nothing given", "", false, false, nil},
		{"the same directory", dir + "/", true, false, nil},
		{"the same directory by another name", link, true, false, nil},
		{"another directory and a replace", "/elsewhere", true, true, []string{
			"--out /elsewhere: a resumed sweep writes to the directory it continues, " + dir + ": leave --out out",
			"--replace: it would delete the sweep that --resume " + dir + " continues"}},
	} {
		got := rendered(sweep.CheckResumeOutput(dir, tc.out, tc.outGiven, tc.replace))
		if len(got) != len(tc.want) {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
			continue
		}
		for i := range got {
			if got[i] != tc.want[i] {
				t.Errorf("%s: %q, want %q", tc.name, got[i], tc.want[i])
			}
		}
	}
}
