package timeseries

import (
	"encoding/csv"
	"encoding/json"
	"io"
	"math"
	"strconv"

	"github.com/loadcurve/loadcurve/measure"
)

// Columns are the CSV header of WriteCSV and the keys of a slice in JSON, in order.
var Columns = []string{"t_s", "offered", "sent", "completed", "errors", "canceled", "running", "max_running",
	"waiting_client", "output_tokens_per_s", "ttft_n", "ttft_p50_ms", "ttft_p99_ms", "itl_n", "itl_p50_ms", "itl_p99_ms"}

// WriteCSV writes the series as CSV: the header Columns, then one row per slice, t_s being the
// slice's start in seconds from T0. Numbers have the shortest digits that read back the same
// value; an undefined percentile (no value in the slice) is an empty cell.
func (s Series) WriteCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(Columns); err != nil {
		return err
	}
	row := make([]string, len(Columns))
	for _, x := range s.Slices {
		row = row[:0]
		row = append(row, num(x.Start.Seconds()), strconv.Itoa(x.Offered), strconv.Itoa(x.Sent), strconv.Itoa(x.Completed),
			strconv.Itoa(x.Errors), strconv.Itoa(x.Canceled), num(x.Running), strconv.Itoa(x.MaxRunning), num(x.WaitingClient),
			num(x.OutputTokensPerS), strconv.Itoa(x.TTFTCount), num(x.TTFTP50), num(x.TTFTP99), strconv.Itoa(x.ITLCount),
			num(x.ITLP50), num(x.ITLP99))
		if err := cw.Write(row); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// num formats a CSV number: shortest round-trip digits without an exponent, "" for NaN.
func num(v float64) string {
	if math.IsNaN(v) {
		return ""
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}

// jsonSlice is a Slice as JSON writes it, with the keys of Columns.
type jsonSlice struct {
	T                measure.Number `json:"t_s"`
	Offered          int            `json:"offered"`
	Sent             int            `json:"sent"`
	Completed        int            `json:"completed"`
	Errors           int            `json:"errors"`
	Canceled         int            `json:"canceled"`
	Running          measure.Number `json:"running"`
	MaxRunning       int            `json:"max_running"`
	WaitingClient    measure.Number `json:"waiting_client"`
	OutputTokensPerS measure.Number `json:"output_tokens_per_s"`
	TTFTCount        int            `json:"ttft_n"`
	TTFTP50          measure.Number `json:"ttft_p50_ms"`
	TTFTP99          measure.Number `json:"ttft_p99_ms"`
	ITLCount         int            `json:"itl_n"`
	ITLP50           measure.Number `json:"itl_p50_ms"`
	ITLP99           measure.Number `json:"itl_p99_ms"`
}

// MarshalJSON writes {"slice_s":1,"slices":[{"t_s":0,"offered":…},…]} with the keys of
// Columns; an undefined percentile is null.
func (s Series) MarshalJSON() ([]byte, error) {
	out := struct {
		Slice  measure.Number `json:"slice_s"`
		Slices []jsonSlice    `json:"slices"`
	}{Slice: measure.Number(s.Slice.Seconds()), Slices: make([]jsonSlice, len(s.Slices))}
	for i, x := range s.Slices {
		out.Slices[i] = jsonSlice{T: measure.Number(x.Start.Seconds()), Offered: x.Offered, Sent: x.Sent, Completed: x.Completed,
			Errors: x.Errors, Canceled: x.Canceled, Running: measure.Number(x.Running), MaxRunning: x.MaxRunning,
			WaitingClient: measure.Number(x.WaitingClient), OutputTokensPerS: measure.Number(x.OutputTokensPerS),
			TTFTCount: x.TTFTCount, TTFTP50: measure.Number(x.TTFTP50), TTFTP99: measure.Number(x.TTFTP99),
			ITLCount: x.ITLCount, ITLP50: measure.Number(x.ITLP50), ITLP99: measure.Number(x.ITLP99)}
	}
	return json.Marshal(out)
}
