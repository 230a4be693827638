// Package tokfile reads the tokenizer.json a made model's vocabulary comes from, as the
// repository keeps it: plain, or compressed with xz (a name ending .xz), for makegguf and the
// tools that hold the engine to it (enginespeed, tokcheck).
package tokfile

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/ulikunitz/xz"
)

// Read reads the tokenizer file at path, decompressing it when its name ends .xz.
func Read(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var r io.Reader = bufio.NewReader(f)
	if strings.HasSuffix(path, ".xz") {
		if r, err = xz.NewReader(r); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
	}
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return data, nil
}
