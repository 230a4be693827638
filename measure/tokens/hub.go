package tokens

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Resolve finds the tokenizer a name gives, as vLLM users give one (--tokenizer, or --model
// when there is none), without the network: a tokenizer.json file or a directory holding one
// (a model directory) as it is; otherwise a Hugging Face model id, ORG/NAME, looked up in the
// local Hugging Face cache as huggingface_hub lays it out: HUB/models--ORG--NAME/snapshots/
// COMMIT/tokenizer.json, the snapshot refs/main names first, where HUB is $HF_HUB_CACHE,
// $HF_HOME/hub, $XDG_CACHE_HOME/huggingface/hub or ~/.cache/huggingface/hub. It returns the
// file or directory to Load. A name found nowhere is a *NotFoundError, which says where it
// looked.
func Resolve(name string) (string, error) {
	if name == "" {
		return "", errors.New("no tokenizer named")
	}
	if _, err := os.Stat(name); err == nil {
		return name, nil
	}
	nf := &NotFoundError{Name: name}
	id := strings.Trim(name, "/")
	if !hubID(id) {
		nf.NotAnID = true
		return "", nf
	}
	repo := "models--" + strings.ReplaceAll(id, "/", "--")
	for _, hub := range HubCaches() {
		dir := filepath.Join(hub, repo)
		nf.Tried = append(nf.Tried, dir)
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			continue
		}
		if file, others := snapshot(dir); file != "" {
			return file, nil
		} else if len(others) > 0 {
			nf.Others = others
		}
	}
	return "", nf
}

// hubID reports whether s has the shape of a Hugging Face model id: NAME or ORG/NAME of
// letters, digits, '-', '_' and '.'.
func hubID(s string) bool {
	parts := strings.Split(s, "/")
	if len(parts) > 2 {
		return false
	}
	for _, p := range parts {
		if p == "" || p == "." || p == ".." {
			return false
		}
		for _, r := range p {
			if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.') {
				return false
			}
		}
	}
	return true
}

// HubCaches are the directories a Hugging Face hub cache may be in, in the order
// huggingface_hub chooses them.
func HubCaches() []string {
	var dirs []string
	add := func(d string) {
		if d != "" && !slices.Contains(dirs, d) {
			dirs = append(dirs, d)
		}
	}
	add(os.Getenv("HF_HUB_CACHE"))
	add(os.Getenv("HUGGINGFACE_HUB_CACHE")) // its older name
	if h := os.Getenv("HF_HOME"); h != "" {
		add(filepath.Join(h, "hub"))
	}
	if x := os.Getenv("XDG_CACHE_HOME"); x != "" {
		add(filepath.Join(x, "huggingface", "hub"))
	}
	if home, err := os.UserHomeDir(); err == nil {
		add(filepath.Join(home, ".cache", "huggingface", "hub"))
	}
	return dirs
}

// snapshot returns the tokenizer.json of a cached model: refs/main's snapshot's, else the most
// recently written snapshot's that has one. Without one, others lists the tokenizer files of
// other kinds it has (tokenizer.model, tekken.json).
func snapshot(dir string) (file string, others []string) {
	snaps := filepath.Join(dir, "snapshots")
	if ref, err := os.ReadFile(filepath.Join(dir, "refs", "main")); err == nil {
		f := filepath.Join(snaps, strings.TrimSpace(string(ref)), FileName)
		if _, err := os.Stat(f); err == nil {
			return f, nil
		}
	}
	entries, err := os.ReadDir(snaps)
	if err != nil {
		return "", nil
	}
	var newest os.FileInfo
	for _, e := range entries {
		f := filepath.Join(snaps, e.Name(), FileName)
		st, err := os.Stat(f)
		if err != nil {
			for _, other := range []string{"tokenizer.model", "tekken.json"} {
				if _, err := os.Stat(filepath.Join(snaps, e.Name(), other)); err == nil && !slices.Contains(others, other) {
					others = append(others, other)
				}
			}
			continue
		}
		if newest == nil || st.ModTime().After(newest.ModTime()) {
			file, newest = f, st
		}
	}
	if file != "" {
		return file, nil
	}
	return "", others
}

// NotFoundError is Resolve's answer for a name that is neither a file nor a cached model.
type NotFoundError struct {
	Name    string
	NotAnID bool     // the name is not a model id either
	Tried   []string // the cache directories looked in
	Others  []string // tokenizer files of other kinds the cached model has
}

func (e *NotFoundError) Error() string {
	if e.NotAnID {
		return fmt.Sprintf("%s: no such file or directory", e.Name)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s: not a local file, and not in the Hugging Face cache", e.Name)
	if len(e.Others) > 0 {
		fmt.Fprintf(&b, " with a %s (it has %s, which loadcurve does not read)", FileName, strings.Join(e.Others, " and "))
	}
	fmt.Fprintf(&b, " (looked in %s); loadcurve downloads nothing: fetch it with `hf download %s %s`, or give the path of a %s",
		strings.Join(e.Tried, ", "), e.Name, FileName, FileName)
	return b.String()
}
