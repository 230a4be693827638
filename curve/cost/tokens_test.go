package cost_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/loadcurve/loadcurve/curve/cost"
)

// TestLedgerSaysItsTokens: a ledger of an embeddings endpoint (Params.Tokens "input") says
// that its throughputs and its cost per million effective tokens count input tokens, in its text
// and its JSON; the default ledger says output as before; another word is refused.
func TestLedgerSaysItsTokens(t *testing.T) {
	a := cost.Option{Name: "A", CostPerHour: 10, RawThroughput: 20000, CompliantShare: 0.9}
	b := cost.Option{Name: "B", CostPerHour: 12, RawThroughput: 30000, CompliantShare: 0.8}
	for _, tc := range []struct {
		tokens    string
		has, hasn []string
		json      string
	}{
		{"input", []string{"raw input throughput (tok/s)", "cost per million effective input tokens", "per million effective input tokens).", "Effective input is"},
			[]string{"output"}, `"tokens":"input"`},
		{"", []string{"raw output throughput (tok/s)", "cost per million effective tokens", "Effective output is"}, []string{"input tokens"}, ""},
	} {
		l, err := cost.NewLedger(a, b, cost.Params{Tokens: tc.tokens})
		if err != nil {
			t.Fatal(err)
		}
		text := l.Text()
		for _, s := range tc.has {
			if !strings.Contains(text, s) {
				t.Errorf("tokens %q: the text lacks %q:\n%s", tc.tokens, s, text)
			}
		}
		for _, s := range tc.hasn {
			if strings.Contains(text, s) {
				t.Errorf("tokens %q: the text says %q:\n%s", tc.tokens, s, text)
			}
		}
		js, err := json.Marshal(l)
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(string(js), `"tokens"`); got != (tc.json != "") || tc.json != "" && !strings.Contains(string(js), tc.json) {
			t.Errorf("tokens %q: JSON %s", tc.tokens, js)
		}
		var back cost.Ledger
		if err := json.Unmarshal(js, &back); err != nil || back.Tokens != tc.tokens {
			t.Errorf("tokens %q: read back %q, %v", tc.tokens, back.Tokens, err)
		}
	}
	if _, err := cost.NewLedger(a, b, cost.Params{Tokens: "words"}); err == nil || !strings.Contains(err.Error(), `tokens = "words": must be output or input`) {
		t.Errorf("tokens words: %v", err)
	}
}
