package layout_test

import (
	"fmt"
	"go/ast"
	"go/build"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
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

// TopLevel are the only folders at the module's root that may hold Go packages: the pipeline
// (schedule → request set → client → records → curve), the command line, support code, and the
// scripts and deployment files beside them (issue 38). docs/ holds no package.
var TopLevel = []string{"arrival", "workloads", "loadgen", "measure", "curve", "cmd", "internal", "scripts", "deploy"}

// TestTopLevel: every package of the module lives under one of TopLevel, so the root shows the
// pipeline and nothing else.
func TestTopLevel(t *testing.T) {
	dir := root(t)
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !e.IsDir() || strings.HasPrefix(e.Name(), ".") || slices.Contains(TopLevel, e.Name()) {
			continue
		}
		err := filepath.WalkDir(filepath.Join(dir, e.Name()), func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if !d.IsDir() && strings.HasSuffix(path, ".go") {
				rel, _ := filepath.Rel(dir, path)
				return fmt.Errorf("%s is a Go file outside the top level's folders %v", rel, TopLevel)
			}
			return nil
		})
		if err != nil {
			t.Error(err)
		}
	}
}

// MaxFunctionLines is the longest a non-test function may be, from its func keyword to its
// closing brace (issue 38): a longer one is several jobs in one.
const MaxFunctionLines = 100

// TestFunctionLength: no non-test function of the module is longer than MaxFunctionLines.
func TestFunctionLength(t *testing.T) {
	dir := root(t)
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != dir && (strings.HasPrefix(name, ".") || name == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			if n := fset.Position(fn.End()).Line - fset.Position(fn.Pos()).Line + 1; n > MaxFunctionLines {
				rel, _ := filepath.Rel(dir, path)
				t.Errorf("%s: %s is %d lines, more than %d", rel, fn.Name.Name, n, MaxFunctionLines)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
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
		{"curve/shadow", []string{"loadgen"}},
		{"measure", []string{"loadgen"}},
		{"curve", []string{"loadgen"}},
		{"curve/plan", []string{"loadgen"}},                   // plan describes; the command executes
		{"curve/compare", []string{"curve/sweep", "loadgen"}}, // it reads results through package result
		{"curve/report", []string{"curve/sweep", "loadgen"}},  // so does the report
		{"curve/result", []string{"curve/sweep", "loadgen"}},  // it owns a result, not its making
	} {
		got := links(t, tc.pkg)
		if tc.forbidden == nil {
			if len(got) > 0 {
				t.Errorf("%s links the project's %v: it must import nothing of it", tc.pkg, got)
			}
			continue
		}
		for _, f := range tc.forbidden {
			for _, p := range got {
				if p == f || strings.HasPrefix(p, f+"/") {
					t.Errorf("%s links %s, which is %s (all it links: %v)", tc.pkg, p, f, got)
				}
			}
		}
	}
}
