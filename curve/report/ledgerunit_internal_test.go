package report

import (
	"strings"
	"testing"

	"github.com/loadcurve/loadcurve/curve/cost"
)

// TestLedgerTableSaysItsTokens: compare's ledger table names the tokens the ledger counts
// (input tokens for an embeddings endpoint).
func TestLedgerTableSaysItsTokens(t *testing.T) {
	a := cost.Option{Name: "A", CostPerHour: 10, RawThroughput: 20000, CompliantShare: 0.9}
	b := cost.Option{Name: "B", CostPerHour: 12, RawThroughput: 30000, CompliantShare: 0.8}
	l, err := cost.NewLedger(a, b, cost.Params{Tokens: "input"})
	if err != nil {
		t.Fatal(err)
	}
	var text strings.Builder
	if err := ledgerTable(l).Text(&text); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"raw input throughput (tok/s)", "cost per million effective input tokens"} {
		if !strings.Contains(text.String(), s) {
			t.Errorf("the table lacks %q:\n%s", s, text.String())
		}
	}
}
