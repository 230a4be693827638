package runner

import (
	"context"
	"time"

	"github.com/loadcurve/loadcurve/loadgen"
)

// WaitReady waits up to within for the deployment at t to answer (loadgen.Client.WaitReady),
// before Open sends its preflight: vLLM's ready check. The embedded deployment is ready once
// started, so nothing is waited for without a BaseURL, nor when within ≤ 0. log (nil: none)
// hears when the wait begins, naming the timeout by name (as field errors are named; nil: in
// loadgen's words), each reason the target is not ready yet, and when it answered; nothing when
// it answers at once. The error is the wait's (loadgen.FieldReadyTimeout when it ran out).
func WaitReady(ctx context.Context, t loadgen.Target, within time.Duration, log func(format string, a ...any), name func(string) string) error {
	if within <= 0 || t.BaseURL == "" {
		return nil
	}
	if log == nil {
		log = func(string, ...any) {}
	}
	if name == nil {
		name = func(s string) string { return s }
	}
	cl, err := loadgen.NewClient(t, 0)
	if err != nil {
		return err
	}
	defer cl.Close()
	start := time.Now()
	waited := false
	err = cl.WaitReady(ctx, within, func(d time.Duration, why string) {
		if !waited {
			log("waiting up to %v for %s to be ready (%s)", within, loadgen.SanitizeURL(t.BaseURL), name(loadgen.FieldReadyTimeout))
			waited = true
		}
		log("not ready after %v of %v: %s", d.Round(time.Second), within, why)
	})
	if err != nil {
		return err
	}
	if waited {
		log("%s answered after %v", loadgen.SanitizeURL(t.BaseURL), time.Since(start).Round(100*time.Millisecond))
	}
	return nil
}
