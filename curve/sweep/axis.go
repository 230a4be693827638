package sweep

import (
	"context"

	"github.com/loadcurve/loadcurve/curve"
	"github.com/loadcurve/loadcurve/internal/field"
	"github.com/loadcurve/loadcurve/measure/records"
)

// The sweep's axis (curve.Axis) decides what its tiers vary and how they are placed: closed
// loops of users (Config.Concurrency: the listed levels, or doubling then halving the bracket,
// nextUsers), or open tiers at rates of requests or of sessions (Config.Rates: the listed
// rates, or the probes and the Planner's search around the capacity estimate).

// Axis is the axis the configuration asks for: users when Concurrency is set, sessions when
// the workload's requests are sessions, else the request rate.
func (c Config) Axis() curve.Axis {
	switch {
	case c.Concurrency.Set():
		return curve.AxisUsers
	case c.Sessions:
		return curve.AxisSessions
	}
	return curve.AxisRate
}

// validateAxis refuses an axis the workload cannot be swept on, before anything starts: a
// closed loop's users send independent requests, and a session's later turns are not theirs
// to send.
func (c Config) validateAxis() []error {
	if c.Concurrency.Set() && c.Sessions {
		return []error{field.Errorf(FieldUsers, "a closed loop of users sends independent requests, not sessions: sweep a workload of sessions at rates of sessions instead")}
	}
	return nil
}

// axis is the sweep's axis: the configuration's, or sessions once a tier has shown that the
// schedule's arrivals start sessions (a runner's workload may say so before its Config does).
func (e *exec) axis() curve.Axis {
	if ax := e.cfg.Axis(); ax != curve.AxisRate {
		return ax
	}
	for _, t := range e.tiers {
		if curve.AxisOf(t.Summary) == curve.AxisSessions {
			return curve.AxisSessions
		}
	}
	return curve.AxisRate
}

// axisTiers runs the tiers of one repetition on the sweep's axis: the listed levels or rates,
// or the axis's search.
func (e *exec) axisTiers(ctx context.Context) error {
	switch {
	case e.axis() == curve.AxisUsers:
		return e.levels(ctx)
	case e.cfg.Rates.Auto:
		return e.search(ctx)
	}
	for _, r := range e.cfg.Rates.List {
		if ctx.Err() != nil || e.exhausted {
			return nil
		}
		if _, err := e.tier(ctx, records.RoleTier, r); err != nil {
			return err
		}
	}
	return nil
}

// confirmUsers confirms the operating point of a sweep of users: a closed loop of its users.
func (e *exec) confirmUsers(ctx context.Context, a curve.Analysis) error {
	n := int(a.OperatingPoint.Rate)
	e.logf("confirming the operating point, %d users", n)
	e.detailf("capacity %s; the confirmation is sized for %s", a.Capacity.String(), confirmWhy(e.confirmNeed, e.cfg))
	_, err := e.closed(ctx, records.RoleConfirm, n)
	return err
}
