package result_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loadcurve/loadcurve/curve/result"
)

// TestWriteFileIsWholeOrNothing: a result file is written whole, replacing an old one only once
// complete; when the write fails, neither a cut file nor the temporary one is left, and the error
// names the file, not the temporary one. (The full-disk case, a write failing part-way, is
// cmd/loadcurve's TestRecordsFileFullMidRun, on a real process at a file-size limit.)
func TestWriteFileIsWholeOrNothing(t *testing.T) {
	tests := []struct {
		name    string
		prepare func(t *testing.T, path string)
		wantErr bool
		want    string // the file's content after
	}{
		{"a new file", func(*testing.T, string) {}, false, "new"},
		{"an old file replaced", func(t *testing.T, path string) {
			if err := os.WriteFile(path, []byte("old, longer than new"), 0o644); err != nil {
				t.Fatal(err)
			}
		}, false, "new"},
		{"the place taken by a directory: the write fails", func(t *testing.T, path string) {
			if err := os.MkdirAll(filepath.Join(path, "inside"), 0o755); err != nil {
				t.Fatal(err)
			}
		}, true, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "summary.json")
			tc.prepare(t, path)
			err := result.WriteFile(path, []byte("new"))
			if (err != nil) != tc.wantErr {
				t.Fatalf("error %v, want one: %v", err, tc.wantErr)
			}
			if err != nil && (!strings.Contains(err.Error(), "write "+path+": ") || strings.Contains(err.Error(), ".tmp")) {
				t.Errorf("error %q: want it to name %s, not the temporary file", err, path)
			}
			if tc.want != "" {
				if b, err := os.ReadFile(path); err != nil || string(b) != tc.want {
					t.Errorf("the file holds %q (%v), want %q", b, err, tc.want)
				}
			}
			entries, _ := os.ReadDir(dir)
			for _, e := range entries {
				if strings.HasSuffix(e.Name(), ".tmp") {
					t.Errorf("the temporary file %s is left", e.Name())
				}
			}
		})
	}
}
