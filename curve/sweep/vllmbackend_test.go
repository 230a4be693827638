package sweep_test

import (
	"testing"

	"github.com/loadcurve/loadcurve/curve/result"
)

// TestVLLMBackendOfEachKind: the vLLM backend name written for each endpoint kind (vLLM's own
// names; none for the Responses API, which vLLM's benchmark has no backend for).
func TestVLLMBackendOfEachKind(t *testing.T) {
	for kind, want := range map[string]string{"chat": "openai-chat", "completions": "openai", "embeddings": "openai-embeddings", "responses": "", "": ""} {
		if got := result.VLLMBackend(kind); got != want {
			t.Errorf("VLLMBackend(%q) = %q, want %q", kind, got, want)
		}
	}
}
