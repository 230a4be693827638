package curve

import (
	"fmt"
	"math"

	"github.com/loadcurve/loadcurve/measure"
	"github.com/loadcurve/loadcurve/measure/records"
)

// Axis is what a sweep varies from tier to tier, and so what every rate of its curve counts
// (the points' Rate, the capacity, the knee, the plateau and the operating point). It owns its
// unit, where a tier stands on it, the words that name it, and how curve.json writes it. The
// zero value is AxisRate.
type Axis uint8

// The axes of a sweep.
const (
	// AxisRate: open tiers whose arrivals are requests, at a rate in requests per second.
	AxisRate Axis = iota
	// AxisSessions: open tiers whose arrivals start sessions (conversations whose later turns
	// follow their responses), at a rate in sessions per second.
	AxisSessions
	// AxisUsers: closed loops, each tier a number of users who send their next request when
	// the previous one ended; the level is the users, the request rate an outcome.
	AxisUsers
)

// AxisConcurrency is AxisUsers by the name curve.json gives it.
const AxisConcurrency = AxisUsers

// AxisOf is the axis a tier stands on: a closed loop's users, else the arrival rate of
// sessions or of requests.
func AxisOf(s measure.Summary) Axis {
	switch {
	case s.Users > 0:
		return AxisUsers
	case s.Sessions != nil:
		return AxisSessions
	}
	return AxisRate
}

// AxisOfTier is the axis a tier line states (a closed loop's users, else a rate): a tier line
// does not say whether its arrivals start sessions, its records do (AxisOf).
func AxisOfTier(t records.Tier) Axis {
	if t.Users > 0 {
		return AxisUsers
	}
	return AxisRate
}

// SweepAxis is the axis of a sweep of these tiers: users once a tier other than a probe is a
// closed loop, else sessions once any tier's arrivals started sessions, else the request rate.
func SweepAxis(tiers []measure.Summary) Axis {
	ax := AxisRate
	for _, s := range tiers {
		switch t := AxisOf(s); {
		case t == AxisUsers && s.Role != records.RoleProbe:
			return AxisUsers
		case t == AxisSessions:
			ax = AxisSessions
		}
	}
	return ax
}

// String names the axis: "rate", "sessions" or "users".
func (a Axis) String() string {
	switch a {
	case AxisSessions:
		return "sessions"
	case AxisUsers:
		return "users"
	case AxisRate:
		return "rate"
	}
	return fmt.Sprintf("axis(%d)", uint8(a))
}

// Unit is what the axis counts: "req/s", "sessions/s" or "users".
func (a Axis) Unit() string {
	switch a {
	case AxisSessions:
		return "sessions/s"
	case AxisUsers:
		return "users"
	}
	return "req/s"
}

// UnitWords is the unit in words: "requests per second", "sessions per second" or
// "concurrent users".
func (a Axis) UnitWords() string {
	switch a {
	case AxisSessions:
		return "sessions per second"
	case AxisUsers:
		return "concurrent users"
	}
	return "requests per second"
}

// ArrivalUnit is the unit of a tier's arrivals on this axis: "sessions/s" for sessions, else
// "req/s" (a closed loop's users produce requests).
func (a Axis) ArrivalUnit() string {
	if a == AxisSessions {
		return "sessions/s"
	}
	return "req/s"
}

// Open reports whether the axis's tiers send on a schedule whatever the deployment completes
// (a rate of requests or of sessions); a closed loop's users wait for their responses, so
// such a tier cannot offer more than it completes.
func (a Axis) Open() bool { return a != AxisUsers }

// Holds reports whether a tier stands on this axis: a closed loop on the users' axis, an open
// tier on a rate's.
func (a Axis) Holds(s measure.Summary) bool { return a.Open() == AxisOf(s).Open() }

// Pools reports whether tiers of this axis at one nominal level may be pooled into one point:
// open tiers may (their arrivals are independent draws); closed loops are not.
func (a Axis) Pools() bool { return a.Open() }

// Level is where a tier stands on its axis, nominal (what was asked for) and realised (what its
// steady state measured; the nominal rate when the shadow queue controlled its share, which
// then estimates the share at the rate the schedule was drawn at). A closed loop's level is its
// users, both ways. st is the tier's steady state.
func (a Axis) Level(s measure.Summary, st *measure.Steady) (nominal, realised float64) {
	if !a.Open() {
		return float64(s.Users), float64(s.Users)
	}
	nominal, realised = s.NominalRate, st.RealisedRate
	if st.Controlled != nil && isFinite(nominal) && nominal > 0 {
		realised = nominal
	}
	return nominal, realised
}

// NominalLevel is the level a tier was asked for: a closed loop's users, else its nominal
// rate (+Inf for a burst, NaN for a ramp or a replay).
func NominalLevel(s measure.Summary) float64 {
	if AxisOf(s) == AxisUsers {
		return float64(s.Users)
	}
	return s.NominalRate
}

// operatingLevel is the operating point's level at rate: users come in whole numbers, so on
// their axis it is the largest whole number of users at or below it (at least one).
func (a Axis) operatingLevel(rate float64) float64 {
	if a.Open() {
		return rate
	}
	return math.Max(1, math.Floor(rate+1e-9))
}

// capacityUnit is Capacity.Unit on this axis: "users", or "" for a rate (curve.json's
// encoding, which names the rate's unit in the result's notes).
func (a Axis) capacityUnit() string {
	if a.Open() {
		return ""
	}
	return "users"
}

// Title names the axis under a plot: "arrival rate (req/s, realised in the steady-state
// window)", or "concurrency (users of a closed loop)".
func (a Axis) Title() string {
	if !a.Open() {
		return "concurrency (users of a closed loop)"
	}
	return "arrival rate (" + a.Unit() + ", realised in the steady-state window)"
}

// Words names the axis in a heading: "arrival rate" or "concurrency".
func (a Axis) Words() string {
	if !a.Open() {
		return "concurrency"
	}
	return "arrival rate"
}

// Heading heads a table's column of the tiers' levels: "rate req/s", "rate sessions/s" or
// "users".
func (a Axis) Heading() string {
	if !a.Open() {
		return "users"
	}
	return "rate " + a.Unit()
}

// RealisedHeading heads a table's column of the rates the tiers realised: on the users' axis,
// the request rate they produced.
func (a Axis) RealisedHeading() string {
	if !a.Open() {
		return "req/s produced"
	}
	return "realised"
}

// Noun names what a result of this axis varies, after "sweep of" or "run of": "users",
// "sessions", or "" for requests (a plain sweep or run).
func (a Axis) Noun() string {
	switch a {
	case AxisUsers:
		return "users"
	case AxisSessions:
		return "sessions"
	}
	return ""
}

// LevelName names a tier's place on its axis: "8 users" for a closed loop, else its nominal
// rate as rate writes it (rate is given the unit of the tier's own axis, and writes +Inf and
// NaN its own way).
func LevelName(s measure.Summary, rate func(r float64, unit string) string) string {
	ax := AxisOf(s)
	if !ax.Open() {
		return fmt.Sprintf("%d users", s.Users)
	}
	return rate(s.NominalRate, ax.Unit())
}

// LevelText is LevelName in a line of text: "with 8 users", or "at " and the rate.
func LevelText(s measure.Summary, rate func(r float64, unit string) string) string {
	if !AxisOf(s).Open() {
		return "with " + LevelName(s, rate)
	}
	return "at " + LevelName(s, rate)
}

// LevelCell is a tier's level in a table cell: a closed loop's users, else its nominal rate
// as rate writes it.
func LevelCell(s measure.Summary, rate func(float64) string) string {
	if AxisOf(s) == AxisUsers {
		return fmt.Sprint(s.Users)
	}
	return rate(s.NominalRate)
}

// MarshalText writes the axis as curve.json names it: "" for the request rate (the field is
// then left out), "sessions", or "concurrency" for users.
func (a Axis) MarshalText() ([]byte, error) {
	switch a {
	case AxisRate:
		return []byte(""), nil
	case AxisSessions:
		return []byte("sessions"), nil
	case AxisUsers:
		return []byte("concurrency"), nil
	}
	return nil, fmt.Errorf("curve: no axis %d", uint8(a))
}

// UnmarshalText reads what MarshalText writes.
func (a *Axis) UnmarshalText(b []byte) error {
	switch string(b) {
	case "", "rate":
		*a = AxisRate
	case "sessions":
		*a = AxisSessions
	case "concurrency", "users":
		*a = AxisUsers
	default:
		return fmt.Errorf("curve: axis %q: want concurrency, sessions or none", b)
	}
	return nil
}
