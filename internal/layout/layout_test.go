package layout_test

import (
	"go/build"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/loadcurve/loadcurve"

// root is the module's directory (this file is in internal/layout).
func root(t *testing.T) string {
	t.Helper()
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("no caller")
	}
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// links returns the project's packages pkg links (its non-test imports, followed), by path
// relative to the module.
func links(t *testing.T, pkg string) []string {
	t.Helper()
	dir := root(t)
	seen := map[string]bool{}
	var walk func(rel string)
	walk = func(rel string) {
		p, err := build.ImportDir(filepath.Join(dir, rel), 0)
		if err != nil {
			t.Fatalf("read package %s: %v", rel, err)
		}
		for _, imp := range p.Imports {
			sub, ok := strings.CutPrefix(imp, module+"/")
			if !ok || seen[sub] {
				continue
			}
			seen[sub] = true
			walk(sub)
		}
	}
	walk(pkg)
	var out []string
	for p := range seen {
		out = append(out, p)
	}
	slices.Sort(out)
	return out
}

// TestBoundaries: the packages of pure functions over records link nothing that serves HTTP
// or drives load, and the queueing mathematics imports nothing of the project, so that the
// shadow queue, the measurement and the curve are what they say; plan describes a rehearsal,
// and the command line executes it; report, compare and plan read a result through package
// result, not through the executor (issue 38).
func TestBoundaries(t *testing.T) {
	for _, tc := range []struct {
		pkg       string
		forbidden []string // nil: no project package at all
	}{
		{"internal/queueing", nil},
		{"curve/shadow", []string{"loadgen/sim", "loadgen/runner", "loadgen"}},
		{"measure", []string{"loadgen/sim", "loadgen/runner", "loadgen"}},
		{"curve", []string{"loadgen/sim", "loadgen/runner", "loadgen"}},
		{"curve/plan", []string{"loadgen/sim", "loadgen/runner", "loadgen"}},                   // plan describes; the command executes
		{"curve/compare", []string{"curve/sweep", "loadgen/sim", "loadgen/runner", "loadgen"}}, // it reads results through package result
		{"curve/result", []string{"curve/sweep", "loadgen/sim", "loadgen/runner", "loadgen"}},  // it owns a result, not its making
	} {
		got := links(t, tc.pkg)
		if tc.forbidden == nil {
			if len(got) > 0 {
				t.Errorf("%s links the project's %v: it must import nothing of it", tc.pkg, got)
			}
			continue
		}
		for _, f := range tc.forbidden {
			if slices.Contains(got, f) {
				t.Errorf("%s links %s (all it links: %v)", tc.pkg, f, got)
			}
		}
	}
}
