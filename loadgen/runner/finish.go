package runner

import (
	"fmt"
	"path/filepath"

	"github.com/loadcurve/loadcurve/curve/result"
	"github.com/loadcurve/loadcurve/measure/timeseries"
)

// Finish closes s, so that its records file is whole, and gathers what the result's files need
// beyond res: the per-second time series of its tiers, and, for a run in bounded memory, its
// peak figures (res.Peaks, read back from the records file: result.PeaksOfFile). The series are
// those s tallied as the records passed (Options.Tally); for a resumed sweep, whose kept tiers
// did not run here, those of its records file, read by readSeries (the reader of the report's
// time series); none in bounded memory (without Tally: they would hold a tier's records) or
// without a records file to trust (lost: a tier's records were lost; or the file did not
// close). Warnings say what is left out and why; the error is the records file's.
func (s *Session) Finish(res *result.Result, lost bool, readSeries func(path string) (map[int]timeseries.Series, error)) (series map[int]timeseries.Series, warnings []string, err error) {
	if err = s.Close(); err != nil {
		err = fmt.Errorf("close %s: %w", result.RecordsName, err)
	}
	dir := s.opts.OutDir
	if dir == "" || err != nil || lost {
		return nil, nil, err
	}
	path := filepath.Join(dir, result.RecordsName)
	if res.Peaks == nil && res.Shape().OneTier() {
		var perr error
		if res.Peaks, perr = result.PeaksOfFile(path); perr != nil {
			warnings = append(warnings, fmt.Sprintf("max_output_tokens_per_s and max_concurrent_requests left null: %v", perr))
		}
	}
	switch {
	case !s.opts.Tally:
	case s.opts.AppendRecords:
		var serr error
		if series, serr = readSeries(path); serr != nil {
			warnings = append(warnings, fmt.Sprintf("no per-second time series: %v", serr))
		}
	default:
		series = s.TimeSeries()
	}
	return series, warnings, nil
}
