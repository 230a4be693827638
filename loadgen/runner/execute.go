package runner

import (
	"context"

	"github.com/loadcurve/loadcurve/curve/result"
	"github.com/loadcurve/loadcurve/curve/sweep"
	"github.com/loadcurve/loadcurve/measure/records"
)

// Executor is the sweep executor of cfg whose tiers run in s: s runs them, says what the
// target's metrics endpoint said over each, and gives the records header it wrote; log and
// detail (nil: none) take the executor's lines and its verbose ones. A caller may complete it
// (a resume, a hook before the first tier) before Execute.
func (s *Session) Executor(cfg sweep.Config, log, detail func(format string, a ...any)) *sweep.Executor {
	return &sweep.Executor{Config: cfg, Runner: s, Server: s.ServerMetrics, Header: func() records.Header { return s.Header },
		Log: log, Detail: detail}
}

// Execute runs x to its result, then frees the connections the streams held (the result files
// are written next) and gives a run's result the peak figures s tallied as its records passed
// (nil in bounded memory). Interrupted (ctx done), it returns what ran, incomplete, and no
// error: the caller says so. The error is the executor's otherwise, with the result when there
// is one (the tiers that ran, when the records file lost one: sweep.RecordsLost).
func (s *Session) Execute(ctx context.Context, x *sweep.Executor) (*result.Result, error) {
	res, err := x.Run(ctx)
	s.ReleaseConnections()
	if res == nil {
		return nil, err
	}
	res.Peaks = s.Peaks()
	if err != nil && ctx.Err() == nil {
		return res, err
	}
	return res, nil
}
