package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestHostileInputsRefusedBeforeAnythingStarts: a tokenizer, scenario, dataset or records file
// made to cost loadcurve is refused (exit 2) before the embedded deployment starts or anything
// is sent, in a message that names the file and the problem and carries no more than a few
// dozen characters of the file. (Issue 37: a tokenizer of an unknown model type was refused
// after the embedded deployment had started, with a 118 MB message.)
func TestHostileInputsRefusedBeforeAnythingStarts(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name, content string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	big := strings.Repeat("z", 100_000)
	var vocab strings.Builder
	for i := range 100_000 {
		if i > 0 {
			vocab.WriteByte(',')
		}
		vocab.WriteString(`"t` + strings.Repeat("x", i%9) + `":1`)
	}
	tokenizer := write("tokenizer.json", `{"model":{"vocab":{`+vocab.String()+`},"type":"Hostile`+big+`"}}`)
	manyLines := write("many.yaml", strings.Repeat("# a comment\n", 20_000)+"seed: 1\n")
	badKey := write("key.yaml", "? "+big+"\n: 1\n") // an explicit key: an implicit one is at most 1,024 characters
	dataset := write("requests.jsonl", `{"prompt":"hi","`+big+`":1}`+"\n")
	resumeDir := filepath.Join(dir, "resume")
	if err := os.MkdirAll(resumeDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(resumeDir, "records.jsonl"),
		[]byte(`{"kind":"header","tool":"loadcurve","command":"sweep"}`+"\n"+`{"kind":"`+big+`"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		says []string // in stderr
	}{
		{"a tokenizer of an unknown model type", []string{"run", "--tokenizer", tokenizer}, []string{tokenizer, `unknown model type "Hostilezzz`}},
		{"a scenario of 20,000 lines", []string{"sweep", "--config", manyLines}, []string{manyLines, "20002 lines and list items, more than a scenario holds"}},
		{"a scenario key of 100 kB", []string{"run", "--config", badKey}, []string{badKey + ":1", "has no flag --zzz", "…(100000 bytes)"}},
		{"a dataset key of 100 kB", []string{"run", "--workload", dataset}, []string{dataset + ":1", `unknown field "zzz`, "…(100000 bytes)"}},
		{"a records file with a kind of 100 kB, resumed", []string{"sweep", "--resume", resumeDir}, []string{"line 2: unknown kind \"zzz", "…(100000 bytes)"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			code, stdout, stderr := runCLI(t, append(tc.args, "--num-requests", "4", "--quiet")...)
			if code != exitUsage {
				t.Fatalf("exit %d, want %d\n%s\n%.2000s", code, exitUsage, stdout, stderr)
			}
			for _, s := range tc.says {
				if !strings.Contains(stderr, s) {
					t.Errorf("stderr lacks %q:\n%.2000s", s, stderr)
				}
			}
			for _, started := range []string{"started the embedded", "preflight", "tier 0"} {
				if strings.Contains(stderr, started) {
					t.Errorf("refused only after something started (%q):\n%.2000s", started, stderr)
				}
			}
			if len(stderr) > 1500 {
				t.Errorf("%d bytes of stderr: the file's content is in it\n%.2000s", len(stderr), stderr)
			}
		})
	}
}
