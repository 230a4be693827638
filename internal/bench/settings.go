package bench

import (
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/loadcurve/loadcurve/internal/field"
	"github.com/loadcurve/loadcurve/internal/param"
)

// The settings of a benchmark that are not options of the run itself, as their errors name them.
const (
	FieldQuick   = "quick benchmark"
	FieldSeed    = "benchmark seed"
	FieldProfile = "profile directory"
	FieldJSON    = "benchmark JSON report"
	FieldFormat  = "benchmark report format"
)

// The formats a report is printed in (Report.WriteTable, Report.WriteJSON).
const (
	FormatTable = "table"
	FormatJSON  = "json"
)

// Settings are a benchmark as its user gives it: the full run or the quick one (BaseOptions),
// every option given on top of it, and what to write. The lists of rates and of concurrency
// caps are held as written; Options reads them.
type Settings struct {
	Quick         bool
	Rates         string // comma-separated request rates, as ParseRates reads them
	Concurrencies string // comma-separated concurrency caps, as ParseConcurrencies reads them
	Run           Options
	JSON          string // also write the report as JSON to this file
	Format        string // FormatTable or FormatJSON
}

// NewSettings returns the settings of the full run, or of the quick one, before the user's.
func NewSettings(quick bool) Settings {
	o := BaseOptions(quick)
	return Settings{Quick: quick, Rates: ratesText(o.Rates), Concurrencies: capsText(o.Concurrencies), Run: o, Format: FormatTable}
}

// Params declares the settings, bound to s; the defaults they show are those of NewSettings(false).
func (s *Settings) Params() []param.Param {
	o := &s.Run
	return []param.Param{
		param.Bool(FieldQuick, &s.Quick, "a run of a few seconds for CI (rates 100,200, 1 s, 1 repeat, 200 stalled streams); other flags override it"),
		param.String(FieldRates, &s.Rates, "comma-separated request rates (req/s, Poisson)"),
		param.String(FieldConcurrency, &s.Concurrencies, "comma-separated concurrency caps to run each rate at (0 = no cap)"),
		param.Duration(FieldDuration, &o.Duration, "length of each schedule"),
		param.Int(FieldRepeats, &o.Repeats, "runs of each rate and role; the tables show medians"),
		param.Int(FieldStreams, &o.Streams, "stalled streams to hold open for the memory figure (0 = skip)"),
		param.Float(FieldStreamOpenRate, &o.StreamOpenRate, "rate at which the stalled streams are opened (req/s)"),
		param.Float(FieldLightRate, &o.LightRate, "rate of the TTFT-overhead phase (0 = skip)"),
		param.Duration(FieldLightDuration, &o.LightDuration, "length of the TTFT-overhead phase"),
		param.Int(FieldChunks, &o.Chunks, "one-token content chunks per stream"),
		param.Duration(FieldChunkGap, &o.ChunkGap, "pause between chunks of a stream (0 = as fast as possible)"),
		param.Duration(FieldSpin, &o.Spin, "also run, at every rate, loadcurve with its sleep-then-spin pacer and the probe busy-waiting, this long before each arrival (e.g. 1ms)"),
		param.Int64(FieldSeed, &o.Seed, "schedule seed"),
		param.String(FieldProfile, &o.ProfileDir, "directory for a CPU profile (pprof) of every probe and client run, and a heap profile of each stalled-stream run"),
		param.String(FieldJSON, &s.JSON, "also write the full report as JSON to this file"),
		param.String(FieldFormat, &s.Format, "stdout format: table or json"),
	}
}

// Options returns the run's options with the lists read from their texts, and every element of
// a list that does not parse (ParseRates, ParseConcurrencies), in the settings' order, each
// naming its list with the list's text, as a value that cannot be read is named ("<rates>
// 1,x: "x" is not a number; …"). Options.Validate judges the numbers.
func (s Settings) Options() (Options, []error) {
	o := s.Run
	var errs []error
	listError := func(name, text string, err error) error {
		return field.Sentencef(name, "%v %s: %s", field.Ref(name), text, field.Of(err).Msg)
	}
	rates, err := ParseRates(s.Rates)
	if err != nil {
		errs = append(errs, listError(FieldRates, s.Rates, err))
	}
	caps, bad := ParseConcurrencies(s.Concurrencies)
	for _, err := range bad {
		errs = append(errs, listError(FieldConcurrency, s.Concurrencies, err))
	}
	o.Rates, o.Concurrencies = rates, caps
	return o, errs
}

// CheckFormat returns a field.Error naming FieldFormat when the format is neither FormatTable
// nor FormatJSON.
func (s Settings) CheckFormat() error {
	if s.Format != FormatTable && s.Format != FormatJSON {
		return field.Errorf(FieldFormat, "want table or json, got %q", s.Format)
	}
	return nil
}

// Write runs the benchmark o (Run) as the settings say it is shown: its profiles' directory
// made first, the report written to the JSON file when one is named, and to w in the format.
func (s Settings) Write(ctx context.Context, o Options, w io.Writer) error {
	if dir := o.ProfileDir; dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return field.Errorf(FieldProfile, "%w", err)
		}
	}
	rep, err := Run(ctx, o)
	if err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	if s.JSON != "" {
		if err := rep.WriteJSONFile(s.JSON); err != nil {
			return err
		}
	}
	if s.Format == FormatJSON {
		return rep.WriteJSON(w)
	}
	return rep.WriteTable(w)
}

// WriteJSONFile writes the report as JSON to a new file at path; a file that cannot be written
// is a field.Error naming FieldJSON.
func (r *Report) WriteJSONFile(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return field.Errorf(FieldJSON, "%w", err)
	}
	werr := r.WriteJSON(f)
	if cerr := f.Close(); werr == nil && cerr != nil {
		werr = field.Errorf(FieldJSON, "%w", cerr)
	}
	return werr
}

// ratesText writes rates as ParseRates reads them: "250,500,1000".
func ratesText(rates []float64) string {
	parts := make([]string, len(rates))
	for i, r := range rates {
		parts[i] = strconv.FormatFloat(r, 'f', -1, 64)
	}
	return strings.Join(parts, ",")
}

// capsText writes concurrency caps as ParseConcurrencies reads them: "0,64".
func capsText(caps []int) string {
	parts := make([]string, len(caps))
	for i, c := range caps {
		parts[i] = fmt.Sprint(c)
	}
	return strings.Join(parts, ",")
}
