package resume_test

import (
	"io"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"

	"github.com/loadcurve/loadcurve/cmd/internal/cliparam"
	"github.com/loadcurve/loadcurve/cmd/internal/resume"
	"github.com/loadcurve/loadcurve/measure/records"
)

// TestResumeDifferencesNameTheFlags: every setting a resumed sweep must keep is refused naming
// the flags that set it, with both values (a header that differs in every one of them).
func TestResumeDifferencesNameTheFlags(t *testing.T) {
	old := records.Header{Target: "http://a/v1", Endpoint: "chat", Model: "m", Workload: "w", Arrival: "poisson(rate=1)",
		Seed: 1, MaxConcurrency: 1, CachePolicy: "none", TimeoutS: 1, Settings: &records.Settings{Objectives: "ttft:1"}}
	now := records.Header{Target: "http://b/v1", Sim: "default", SimConfig: []byte(`{"x":1}`), SimReplicas: 2, Endpoint: "completions",
		Model: "n", Workload: "v", Arrival: "poisson(rate=2)", Seed: 2, MaxConcurrency: 2, CachePolicy: "warm", ExtraBody: []byte(`{"a":1}`),
		TimeoutS: 2, Retries: 1, Settings: &records.Settings{Objectives: "ttft:2"}}
	errs := resume.HeaderDiffers("/r/sweep", old, now)
	if len(errs) != 15 {
		t.Fatalf("%d differences, want 15: %v", len(errs), errs)
	}
	if got, want := errs[0].Error(), "sweep to resume /r/sweep: the target (--base-url): the interrupted sweep's records say http://a/v1, this sweep's would say http://b/v1"; got != want {
		t.Errorf("the first difference: %q, want %q", got, want)
	}
	for _, err := range errs {
		msg := err.Error()
		if !strings.Contains(msg, "(--") || !strings.Contains(msg, ": the interrupted sweep's records say ") || !strings.Contains(msg, ", this sweep's would say ") {
			t.Errorf("%q does not name its flags and both values", msg)
		}
	}
}

// TestCommandAsksForTheSecretsAgain: the command line that continues a sweep names its
// directory as a shell word, and asks again for what no file holds: the API key (unless the
// environment gives it) and the headers.
func TestCommandAsksForTheSecretsAgain(t *testing.T) {
	for _, tc := range []struct {
		args []string
		env  string
		want string
	}{
		{nil, "", "loadcurve sweep --resume '/r/a b'"},
		{[]string{"--api-key", "k"}, "", "loadcurve sweep --resume '/r/a b' --api-key …"},
		{[]string{"--api-key", "k"}, "from-env", "loadcurve sweep --resume '/r/a b'"},
		{[]string{"--header", "A: 1"}, "", "loadcurve sweep --resume '/r/a b' --header … (the same headers)"},
	} {
		t.Setenv("OPENAI_API_KEY", tc.env)
		var got string
		app := &cli.App{Name: "loadcurve", Writer: io.Discard, ErrWriter: io.Discard, Commands: []*cli.Command{{
			Name:   "sweep",
			Flags:  []cli.Flag{&cli.StringFlag{Name: "api-key"}, &cli.GenericFlag{Name: "header", Value: &cliparam.List{}}},
			Action: func(c *cli.Context) error { got = resume.Command(c, "/r/a b"); return nil },
		}}}
		if err := app.Run(append([]string{"loadcurve", "sweep"}, tc.args...)); err != nil {
			t.Fatal(err)
		}
		if got != tc.want {
			t.Errorf("%q (OPENAI_API_KEY %q): %q, want %q", tc.args, tc.env, got, tc.want)
		}
	}
}
