package report_test

import (
	"bytes"
	"encoding/csv"
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/loadcurve/loadcurve/curve/report"
	"github.com/loadcurve/loadcurve/measure"
	"github.com/loadcurve/loadcurve/measure/records"
)

// TestCurveCSVGolden: curve.csv is for scripts: snake_case headers, one row per tier, numbers
// only in the numeric columns (an empty cell for an unknown value, "inf" for a burst's rate),
// the interval as two columns, and verdicts, roles and endings as their enumerated words. It
// had the table's human headers ("compl. req. share"), "—" for unknowns and the interval as one
// bracketed string. The rate and users sweeps of the page fixtures (virtual queues, so exact)
// are held to golden files.
func TestCurveCSVGolden(t *testing.T) {
	pageResults(t)
	words := map[string]*regexp.Regexp{
		"role":    regexp.MustCompile(`^(probe|tier|confirm)$`),
		"unit":    regexp.MustCompile(`^(req/s|sessions/s|users)$`),
		"verdict": regexp.MustCompile(`^(|meets|fails|uncertain|insufficient|excluded)$`),
		"stable":  regexp.MustCompile(`^(|true|false)$`),
		"ended":   regexp.MustCompile(`^(|decided|cap|schedule|interrupted)$`),
	}
	snake := regexp.MustCompile(`^[a-z][a-z0-9_]*$`)
	for _, tc := range []struct {
		name string
		page pageResult
	}{{"curve_rate.csv", ratePage}, {"curve_users.csv", usersPage}} {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := report.CurveCSV(&b, tc.page.res); err != nil {
				t.Fatal(err)
			}
			golden(t, tc.name, b.Bytes())
			rows, err := csv.NewReader(bytes.NewReader(b.Bytes())).ReadAll()
			if err != nil {
				t.Fatal(err)
			}
			if len(rows) != len(tc.page.res.Tiers)+1 {
				t.Fatalf("%d rows for %d tiers", len(rows)-1, len(tc.page.res.Tiers))
			}
			for _, h := range rows[0] {
				if !snake.MatchString(h) {
					t.Errorf("header %q is not snake_case", h)
				}
			}
			for i, r := range rows[1:] {
				for j, c := range r {
					col := rows[0][j]
					if re, ok := words[col]; ok {
						if !re.MatchString(c) {
							t.Errorf("row %d, %s = %q", i, col, c)
						}
						continue
					}
					if _, err := strconv.ParseFloat(c, 64); c != "" && err != nil {
						t.Errorf("row %d, %s = %q: not a number", i, col, c)
					}
				}
			}
		})
	}
}

// TestTheAnswerEndsWithTheTiers: under its answer a sweep prints a compact table of its tiers:
// each one's level, requests, compliant share with its verdict's interval, and the verdict in
// words, so that no tier is left unexplained without --verbose.
func TestTheAnswerEndsWithTheTiers(t *testing.T) {
	pageResults(t)
	for _, pr := range []pageResult{ratePage, usersPage} {
		var b bytes.Buffer
		if err := report.Print(&b, report.FormatTable, pr.res, false); err != nil {
			t.Fatal(err)
		}
		out := b.String()
		if !strings.Contains(out, "tier  role ") || !strings.Contains(out, "compliant share [interval]  verdict") {
			t.Fatalf("no tier table under the answer:\n%s", out)
		}
		tab := report.TierSummaryTable(pr.res)
		if len(tab.Rows) != len(pr.res.Tiers) {
			t.Errorf("%d rows for %d tiers", len(tab.Rows), len(pr.res.Tiers))
		}
		for _, row := range tab.Rows {
			if v := row[len(row)-1]; v == "" || v == "—" || !strings.Contains(row[4], "%") {
				t.Errorf("row %q: no verdict in words, or no share", row)
			}
			if row[1] != "probe" && !strings.Contains(row[4], "[") {
				t.Errorf("row %q: a judged tier without its interval", row)
			}
		}
	}
}

// TestTablesShowTheVerdictsShare: where the shadow queue controlled a tier, its verdict rests on
// the controlled share, and both tables (the answer's and report.html's) print that share beside
// that interval; the window's own share, outside the interval, printed beside it, read as a
// contradiction (a llama.cpp sweep: 0.9747 beside [0.7190, 0.8554]).
func TestTablesShowTheVerdictsShare(t *testing.T) {
	pageResults(t)
	res := *ratePage.res
	res.Tiers = append(res.Tiers[:0:0], res.Tiers...)
	tier := -1
	for i, tr := range res.Tiers {
		if st := tr.Summary.Steady; st != nil && tr.Tier.Role != records.RoleProbe && st.CompliantShare > 0.5 {
			tier = i
			break
		}
	}
	if tier < 0 {
		t.Fatal("the fixture has no judged tier")
	}
	st := *res.Tiers[tier].Summary.Steady
	controlled := st.CompliantShare - 0.123
	st.Controlled = &measure.Controlled{Share: controlled, EffectiveRequests: 100}
	res.Tiers[tier].Summary.Steady = &st
	want := strconv.FormatFloat(controlled, 'f', 4, 64)
	curve := report.CurveTable(&res)
	col := -1
	for i, c := range curve.Columns {
		if c == "compl. req. share" {
			col = i
		}
	}
	if col < 0 {
		t.Fatalf("no share column in %q", curve.Columns)
	}
	if got := curve.Rows[tier][col]; got != want {
		t.Errorf("report.html's table: tier %d's share %s, want the controlled %s its verdict uses", tier, got, want)
	}
	summary := report.TierSummaryTable(&res)
	if got, w := summary.Rows[tier][4], strconv.FormatFloat(math.Round(10000*controlled)/100, 'f', -1, 64)+" %"; !strings.HasPrefix(got, w+" [") {
		t.Errorf("the answer's table: tier %d's share %q, want the controlled %s %%", tier, got, w)
	}
}
