package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestReportRefusesHandEditedRecords: `report` accepted records edited to negative token counts
// or an end before the send, and derived its figures from them. It refuses them as it refuses
// every other bad line: exit 2, naming the file, the line and what is wrong.
func TestReportRefusesHandEditedRecords(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "run")
	if code, _, stderr := runCLI(t, append([]string{"run", "--num-requests", "3", "--out", dir}, small...)...); code != exitOK {
		t.Fatalf("run: exit %d: %s", code, stderr)
	}
	path := filepath.Join(dir, "records.jsonl")
	orig, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, from, to, says string
	}{
		{"negative output tokens", `"output_tokens":`, `"output_tokens":-`, "output_tokens -"},
		{"end before sent", `"end_s":`, `"end_s":0.0000000001,"x":`, "end_s 1e-10 is before sent_s"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lines := strings.Split(string(orig), "\n")
			edited := 0
			for i, l := range lines {
				if strings.Contains(l, `"outcome":"ok"`) && strings.Contains(l, tc.from) {
					lines[i], edited = strings.Replace(l, tc.from, tc.to, 1), i+1
					break
				}
			}
			if edited == 0 {
				t.Fatalf("no ok request line with %s:\n%s", tc.from, orig)
			}
			if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")), 0o644); err != nil {
				t.Fatal(err)
			}
			code, _, stderr := runCLI(t, "report", dir)
			if code != exitUsage {
				t.Fatalf("exit %d, want %d: %s", code, exitUsage, stderr)
			}
			for _, s := range []string{path + ": line " + strconv.Itoa(edited) + ":", tc.says} {
				if !strings.Contains(stderr, s) {
					t.Errorf("stderr lacks %q:\n%s", s, stderr)
				}
			}
		})
	}
}
