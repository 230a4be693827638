package sweep

import (
	"context"

	"github.com/loadcurve/loadcurve/measure/records"
)

// BeforeFirstTier returns r, doing do once, before r's first tier starts: a sweep writes what a
// resume of it reads (its scenario) only once it has begun. When do fails the tier is not run
// and its error is the tier's.
func BeforeFirstTier(r Runner, do func() error) Runner {
	return &beforeFirstTier{Runner: r, do: do}
}

type beforeFirstTier struct {
	Runner
	do   func() error
	done bool
}

func (b *beforeFirstTier) RunTier(ctx context.Context, p Plan, sink Sink, stop <-chan struct{}) (records.Tier, error) {
	if !b.done {
		b.done = true
		if err := b.do(); err != nil {
			return p.Tier, err
		}
	}
	return b.Runner.RunTier(ctx, p, sink, stop)
}
