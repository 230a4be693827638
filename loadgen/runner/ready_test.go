package runner_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/loadcurve/loadcurve/internal/field"
	"github.com/loadcurve/loadcurve/loadgen"
	"github.com/loadcurve/loadcurve/loadgen/runner"
)

// modelsServer lists one model, after answering 503 to the first unready requests.
func modelsServer(t *testing.T, unready int32) *httptest.Server {
	var n atomic.Int32
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) <= unready {
			http.Error(w, "loading", http.StatusServiceUnavailable)
			return
		}
		fmt.Fprint(w, `{"object":"list","data":[{"id":"m","object":"model"}]}`)
	}))
	t.Cleanup(hs.Close)
	return hs
}

func TestWaitReady(t *testing.T) {
	names := func(n string) string {
		return map[string]string{loadgen.FieldReadyTimeout: "--ready-check-timeout-sec"}[n]
	}
	ready := modelsServer(t, 0)
	loading := modelsServer(t, 1)
	for _, tc := range []struct {
		name   string
		target loadgen.Target
		within time.Duration
		says   []string // in order, one a line logged; nil: nothing logged
	}{
		{"the embedded deployment is ready when started", loadgen.Target{Endpoint: loadgen.Chat}, time.Minute, nil},
		{"no wait asked", loadgen.Target{BaseURL: loading.URL, Endpoint: loadgen.Chat}, 0, nil},
		{"ready at once: not a word", loadgen.Target{BaseURL: ready.URL, Endpoint: loadgen.Chat}, time.Minute, nil},
		{"ready after a wait", loadgen.Target{BaseURL: loading.URL, Endpoint: loadgen.Chat}, time.Minute,
			[]string{"waiting up to 1m0s for " + loading.URL + " to be ready (--ready-check-timeout-sec)", "not ready after 0s of 1m0s: ", " answered after "}},
	} {
		var lines []string
		log := func(format string, a ...any) { lines = append(lines, fmt.Sprintf(format, a...)) }
		if err := runner.WaitReady(context.Background(), tc.target, tc.within, log, names); err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if len(lines) != len(tc.says) {
			t.Errorf("%s: logged %q, want lines saying %q", tc.name, lines, tc.says)
			continue
		}
		for i, want := range tc.says {
			if !strings.Contains(lines[i], want) {
				t.Errorf("%s: line %d %q does not say %q", tc.name, i, lines[i], want)
			}
		}
	}
}

// TestWaitReadyRunsOut: a target that never answers within the wait is refused by the
// timeout's field.
func TestWaitReadyRunsOut(t *testing.T) {
	never := modelsServer(t, 1<<30)
	err := runner.WaitReady(context.Background(), loadgen.Target{BaseURL: never.URL, Endpoint: loadgen.Chat}, 300*time.Millisecond, nil, nil)
	if fe := field.Of(err); fe == nil || fe.Name != loadgen.FieldReadyTimeout {
		t.Fatalf("WaitReady = %v, want the ready-check timeout's error", err)
	}
}
