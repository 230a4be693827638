package workloads

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
)

// Save writes the set as JSONL, one request per line, in order.
func Save(path string, set *Set) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("save request set: %w", err)
	}
	w := bufio.NewWriter(f)
	enc := json.NewEncoder(w)
	var text []byte
	for i := range set.Requests {
		if err := enc.Encode(plainJSON(&set.Requests[i], &text)); err != nil {
			f.Close()
			return fmt.Errorf("save request set %s: %w", path, err)
		}
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return fmt.Errorf("save request set %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("save request set %s: %w", path, err)
	}
	return nil
}
