package tokens_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loadcurve/loadcurve/measure/tokens"
)

// cacheModel lays out a model in a Hugging Face hub cache as huggingface_hub does: the file in
// blobs/, a snapshot per commit linking to it, refs/main naming one commit.
func cacheModel(t *testing.T, hub, id string, snapshots map[string][]string, main string) {
	t.Helper()
	repo := filepath.Join(hub, "models--"+strings.ReplaceAll(id, "/", "--"))
	data, err := os.ReadFile(filepath.Join("testdata", "tokenizer.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(repo, "blobs"), 0o755); err != nil {
		t.Fatal(err)
	}
	blob := filepath.Join(repo, "blobs", "0123abcd")
	if err := os.WriteFile(blob, data, 0o644); err != nil {
		t.Fatal(err)
	}
	age := time.Now().Add(-time.Hour)
	for commit, files := range snapshots {
		dir := filepath.Join(repo, "snapshots", commit)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			if err := os.Symlink(filepath.Join("..", "..", "blobs", "0123abcd"), filepath.Join(dir, f)); err != nil {
				t.Fatal(err)
			}
			age = age.Add(time.Minute)
			_ = os.Chtimes(blob, age, age)
		}
	}
	if main != "" {
		if err := os.MkdirAll(filepath.Join(repo, "refs"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(repo, "refs", "main"), []byte(main+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestResolveFindsModelsWhereHuggingFaceKeepsThem(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("HF_HUB_CACHE", "")
	t.Setenv("HUGGINGFACE_HUB_CACHE", "")
	t.Setenv("HF_HOME", "")
	t.Setenv("XDG_CACHE_HOME", "")
	defaultHub := filepath.Join(home, ".cache", "huggingface", "hub")
	cacheModel(t, defaultHub, "meta-llama/Llama-3.1-8B-Instruct", map[string][]string{"aaaa": {"tokenizer.json"}, "bbbb": {"tokenizer.json"}}, "bbbb")
	cacheModel(t, defaultHub, "gpt2", map[string][]string{"cccc": {"tokenizer.json", "config.json"}}, "")
	cacheModel(t, defaultHub, "mistralai/Mistral-7B-v0.1", map[string][]string{"dddd": {"tokenizer.model"}}, "dddd")
	hfHome := t.TempDir()
	cacheModel(t, filepath.Join(hfHome, "hub"), "Qwen/Qwen3-8B", map[string][]string{"eeee": {"tokenizer.json"}}, "eeee")
	local := t.TempDir()
	if err := os.Symlink(filepath.Join(defaultHub, "models--gpt2", "snapshots", "cccc", "tokenizer.json"), filepath.Join(local, "tokenizer.json")); err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		name, hfHome, want, refused string
	}{
		{name: "meta-llama/Llama-3.1-8B-Instruct", want: filepath.Join("snapshots", "bbbb", "tokenizer.json")}, // refs/main's
		{name: "gpt2", want: filepath.Join("models--gpt2", "snapshots", "cccc", "tokenizer.json")},             // no org, no refs
		{name: "Qwen/Qwen3-8B", hfHome: hfHome, want: filepath.Join(hfHome, "hub", "models--Qwen--Qwen3-8B")},  // $HF_HOME/hub
		{name: local, want: local},
		{name: "Qwen/Qwen3-8B", refused: "looked in " + filepath.Join(defaultHub, "models--Qwen--Qwen3-8B")},
		{name: "mistralai/Mistral-7B-v0.1", refused: "it has tokenizer.model, which loadcurve does not read"},
		{name: "./no/such/dir/tokenizer.json", refused: "no such file or directory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("HF_HOME", tc.hfHome)
			got, err := tokens.Resolve(tc.name)
			if tc.refused != "" {
				var nf *tokens.NotFoundError
				if err == nil || !errors.As(err, &nf) || !strings.Contains(err.Error(), tc.refused) {
					t.Fatalf("Resolve(%q) = %q, %v; want a refusal with %q", tc.name, got, err, tc.refused)
				}
				if strings.Count(err.Error(), "\n") > 0 {
					t.Errorf("the refusal is not one line: %q", err)
				}
				return
			}
			if err != nil || !strings.Contains(got, tc.want) {
				t.Fatalf("Resolve(%q) = %q, %v; want a path with %q", tc.name, got, err, tc.want)
			}
			if _, err := tokens.Load(got); err != nil {
				t.Errorf("Load(%q): %v", got, err)
			}
		})
	}
	t.Setenv("HF_HUB_CACHE", filepath.Join(hfHome, "hub"))
	if got, err := tokens.Resolve("Qwen/Qwen3-8B"); err != nil || !strings.Contains(got, "eeee") {
		t.Errorf("with HF_HUB_CACHE: %q, %v", got, err)
	}
}
