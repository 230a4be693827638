package sweep

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/loadcurve/loadcurve/curve"
	"github.com/loadcurve/loadcurve/curve/result"
	"github.com/loadcurve/loadcurve/internal/field"
	"github.com/loadcurve/loadcurve/measure"
	"github.com/loadcurve/loadcurve/measure/records"
)

// Concurrency makes a sweep's tiers closed loops: each tier runs a number of users (its
// concurrency level), each of whom sends its next request when its previous response ended,
// plus Think. The curve's axis is then the concurrency level, and the capacity is stated in
// concurrent users (streams), with the request rate they produced.
type Concurrency struct {
	// Levels are the tiers' concurrency levels, in the order to run; or Auto searches them:
	// 1, 2, 4, … until a level fails the objectives, then halving the bracket.
	Levels []int
	Auto   bool
	Think  time.Duration
}

// Set reports whether the sweep is a sweep of concurrency levels.
func (c Concurrency) Set() bool { return c.Auto || len(c.Levels) > 0 }

// MaxUsers bounds a concurrency level.
const MaxUsers = 100_000

// maxClosedPool bounds the requests a duration-bound closed-loop tier materialises for its users.
const maxClosedPool = 200_000

// ParseConcurrencies parses --max-concurrencies: "auto", or increasing whole numbers
// separated by commas ("1,2,4,8").
func ParseConcurrencies(s string) (Concurrency, error) {
	if strings.TrimSpace(s) == "auto" {
		return Concurrency{Auto: true}, nil
	}
	var c Concurrency
	for _, part := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(part))
		if err != nil {
			return Concurrency{}, field.Errorf(FieldUsers, "%q is not a whole number: want auto, or levels like 1,2,4,8", part)
		}
		c.Levels = append(c.Levels, n)
	}
	return c, nil
}

// levelsText writes levels as --max-concurrencies takes them: "1,2,4".
func levelsText(levels []int) string {
	parts := make([]string, len(levels))
	for i, n := range levels {
		parts[i] = strconv.Itoa(n)
	}
	return strings.Join(parts, ",")
}

func (c Concurrency) validate(cfg Config) []error {
	if !c.Set() {
		return nil
	}
	var errs []error
	bad := func(name, format string, a ...any) { errs = append(errs, field.Errorf(name, format, a...)) }
	for i, n := range c.Levels {
		if n < 1 || n > MaxUsers || (i > 0 && n <= c.Levels[i-1]) {
			bad(FieldUsers, "levels must be increasing whole numbers in [1, %d], got %s", MaxUsers, levelsText(c.Levels))
			break
		}
	}
	if c.Think < 0 {
		bad(FieldThink, "must be ≥ 0, got %v", c.Think)
	}
	switch {
	case cfg.Schedule != nil || cfg.Rates.Auto || len(cfg.Rates.List) > 0:
		bad(FieldUsers, "concurrency tiers replace rate tiers: give %v or %v, not both", field.Ref(FieldUsers), field.Ref(FieldRates))
	case cfg.MaxConcurrency > 0:
		bad(FieldMaxConcurrency, "a closed loop of users is its own concurrency cap: give %v alone", field.Ref(FieldUsers))
	case !cfg.StartAt.IsZero():
		bad(FieldUsers, "a sharded sweep of concurrency levels is not supported: run it from one process")
	}
	return errs
}

// levels runs the tiers of a sweep of concurrency levels: the listed ones, or the search's.
func (e *exec) levels(ctx context.Context) error {
	if e.cfg.Concurrency.Auto {
		return e.searchUsers(ctx)
	}
	for _, n := range e.cfg.Concurrency.Levels {
		if ctx.Err() != nil || e.exhausted {
			return nil
		}
		if _, err := e.closed(ctx, records.RoleTier, n); err != nil {
			return err
		}
	}
	return nil
}

// searchUsers doubles the concurrency level from 1 until a level does not meet the objectives,
// then bisects between the highest level that meets them and the lowest that does not, until
// they are adjacent, within Precision of each other, or MaxTiers ran.
func (e *exec) searchUsers(ctx context.Context) error {
	for ran := 0; ran < e.cfg.MaxTiers && ctx.Err() == nil && !e.exhausted; ran++ {
		n, why, ok := nextUsers(e.summaries(), e.cfg.Settings.Params, e.cfg.Precision)
		if !ok {
			e.detailf("search done: %s", why)
			return nil
		}
		e.detailf("next tier: %d users: %s", n, why)
		if _, err := e.closed(ctx, records.RoleTier, n); err != nil {
			return err
		}
	}
	e.detailf("search done: it ran its %d tiers (--max-tiers)", e.cfg.MaxTiers)
	return nil
}

// nextUsers chooses the next concurrency level of the search from the tiers run so far: it
// doubles from 1 while every level meets the objectives, then bisects between the highest
// level that meets them and the lowest above it that does not. For this direction only, a
// level whose verdict is uncertain counts by its measured share against the target (the
// verdicts and the capacity are the analysis's, with their confidence, as for rate tiers).
func nextUsers(done []measure.Summary, p curve.Params, precision float64) (int, string, bool) {
	var search []measure.Summary
	for _, s := range done {
		if s.Role == records.RoleTier || s.Role == "" {
			search = append(search, s)
		}
	}
	if len(search) == 0 {
		return 1, "the search starts from one user", true
	}
	ran := map[int]bool{}
	meet, notMeet := 0, 0 // the highest level that meets; the lowest above it that does not
	lowest := MaxUsers + 1
	a := curve.Analyze(search, p)
	meets := func(v curve.PointVerdict) bool {
		return v.Verdict == curve.VerdictMeets || v.Verdict == curve.VerdictUncertain && v.Share >= a.Params.TargetShare
	}
	for _, v := range a.Points {
		n := int(v.Rate)
		ran[n] = true
		if meets(v) {
			meet = max(meet, n)
		}
	}
	for _, v := range a.Points {
		n := int(v.Rate)
		if !meets(v) && (v.Verdict == curve.VerdictFails || v.Verdict == curve.VerdictUncertain) {
			lowest = min(lowest, n)
			if n > meet && (notMeet == 0 || n < notMeet) {
				notMeet = n
			}
		}
	}
	var next int
	var why string
	switch {
	case meet == 0 && lowest == 1:
		return 0, "even one user does not meet the objectives", false
	case meet == 0 && lowest <= MaxUsers:
		next, why = lowest/2, fmt.Sprintf("%d users do not meet the objectives: half as many", lowest)
	case notMeet == 0:
		if meet >= MaxUsers {
			return 0, fmt.Sprintf("%d users still meet the objectives: the most this search tries", meet), false
		}
		next, why = min(2*meet, MaxUsers), fmt.Sprintf("every level up to %d users meets the objectives: twice as many", meet)
	case notMeet-meet <= 1 || float64(notMeet-meet) <= precision*float64(meet):
		return 0, fmt.Sprintf("%d users meet the objectives and %d do not: within the precision", meet, notMeet), false
	default:
		next, why = (meet+notMeet)/2, fmt.Sprintf("%d users meet the objectives and %d do not: half way", meet, notMeet)
	}
	if ran[next] {
		return 0, fmt.Sprintf("%d users ran already without a verdict that moves the search", next), false
	}
	return next, why, true
}

// closed plans and runs one closed-loop tier of users.
func (e *exec) closed(ctx context.Context, role records.Role, users int) (*result.TierResult, error) {
	cfg := e.cfg
	c := cfg.Concurrency
	idx := len(e.tiers)
	salt := uint64(e.repeat)<<8 | 0x80 // apart from the open tiers' salts
	if role == records.RoleConfirm {
		salt |= 1
	}
	seed := TierSeed(cfg.Seed, float64(users), salt)
	id := records.Tier{Tier: idx, Role: role, Repeat: e.repeat, Users: users, ThinkS: c.Think.Seconds(), Seed: seed,
		Arrival: fmt.Sprintf("closed loop of %d users, think %v", users, c.Think)}
	plan := Plan{Offsets: make([]time.Duration, users), Grace: cfg.Drain,
		Label: e.label(role, idx, fmt.Sprintf("%d users", users))}
	switch {
	case cfg.Requests > 0:
		plan.Pool = cfg.Requests
	case cfg.Duration > 0:
		// Enough requests for every user to send one every 20 ms for the whole tier.
		plan.Pool = int(math.Min(maxClosedPool, float64(users)*cfg.Duration.Seconds()*50))
		plan.StopAfter, plan.ArrivalsEnd = cfg.Duration, cfg.Duration
		id.DurationS = cfg.Duration.Seconds()
	default:
		plan.Pool, plan.StopAfter = cfg.TierRequests, cfg.MaxTierDuration
		if role == records.RoleConfirm {
			plan.Pool = int(math.Max(float64(ConfirmFactor*cfg.TierRequests), e.confirmNeed))
			plan.StopAfter = ConfirmFactor * cfg.MaxTierDuration
		}
		plan.ArrivalsEnd = plan.StopAfter
		id.MaxDurationS = plan.StopAfter.Seconds()
	}
	if left, bounded := e.budgetLeft(); bounded {
		// Within what the budget leaves, drain included: the users stop sending in time.
		want, least := plan.StopAfter, min(plan.StopAfter, cfg.MinTierDuration)
		switch {
		case cfg.Duration > 0:
			least = cfg.Duration
		case plan.StopAfter == 0: // a pool of requests: sent in full when the budget allows
			want, least = max(left-cfg.Drain, 0), min(left, cfg.MinTierDuration)
		}
		stopAfter, grace, ok := e.fit(left, want, least)
		if !ok {
			e.outOfBudget(left, role, fmt.Sprintf("%s %d (%d users)", roleLabel(role), idx, users), least+e.leastGrace())
			return nil, nil
		}
		plan.Grace = grace
		if stopAfter < plan.StopAfter || plan.StopAfter == 0 {
			plan.StopAfter = stopAfter
			if cfg.Requests == 0 {
				plan.ArrivalsEnd, id.MaxDurationS = stopAfter, stopAfter.Seconds()
			}
		}
	}
	id.Planned = plan.Pool
	plan.Tier = id
	plan.Status = e.status(role, plan.StopAfter, plan.Grace, cfg.Requests == 0 && cfg.Duration == 0)
	return e.execute(ctx, plan, nil)
}
