package main

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"time"

	"github.com/loadcurve/loadcurve/scripts/fifoserver/fifo"
)

// serverLog is a fifoserver log read back, with the requests whose lateness the as-served truth
// draws from.
type serverLog struct {
	*fifo.Log
	// latenessOf, when not nil, is the requests whose lateness the as-served truth draws from.
	latenessOf map[string]bool
}

func readLog(path string) (*serverLog, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("server log: %w", err)
	}
	defer f.Close()
	l, err := fifo.ReadLog(f, path)
	if err != nil {
		return nil, err
	}
	return &serverLog{Log: l}, nil
}

func describe(c fifo.Config) string {
	if !c.Spread() {
		return fmt.Sprintf("M/D/%d: %g ms a request, first token %g ms, %d tokens", c.Slots, 1000*c.ServiceS, 1000*c.FirstTokenS, c.Tokens)
	}
	return fmt.Sprintf("M/G/%d: first token %g ms, then a token every %g ms, %s output lengths of mean %g (cv %g)", c.Slots, 1000*c.FirstTokenS, 1000*c.IntervalS, c.OutputDist, c.OutputMean, c.OutputCV)
}

// queueModel is a FIFO queue with Servers slots fed Poisson arrivals: the truth the fifoserver
// is, simulated by brute force (independently of loadcurve's simulator). A request complies when
// its wait plus its Extra draw is at most MaxWait (the TTFT objective less the first token).
type queueModel struct {
	Servers int
	// Services are drawn from uniformly, with replacement (one value: deterministic service).
	Services []float64
	MaxWait  float64
	// Extra, when not empty, is added to every request's wait before it is judged, drawn
	// uniformly from it: what the server's own lateness added to its TTFT.
	Extra []float64
}

// shareRun is the compliant share of n Poisson arrivals at rate (after the first n/20, left out
// as warm-up), with the variance factor of its batch means. Runs with the same seed share their
// random numbers (the gaps are scaled by 1/rate), so the share falls with the rate.
func (m queueModel) shareRun(rate float64, n int, seed uint64) (share, varianceFactor float64) {
	rng := rand.New(rand.NewPCG(seed, 0x5851f42d4c957f2d))
	free := make([]float64, m.Servers)
	var t float64
	warm := n / 20
	const batches = 50
	per := max((n-warm)/batches, 1)
	var bm [batches]float64
	ok, counted := 0, 0
	for i := range n {
		t += rng.ExpFloat64() / rate
		s := m.Services[0]
		if len(m.Services) > 1 {
			s = m.Services[rng.IntN(len(m.Services))]
		}
		extra := 0.0
		if len(m.Extra) > 0 {
			extra = m.Extra[rng.IntN(len(m.Extra))]
		}
		k := 0
		for j := 1; j < len(free); j++ {
			if free[j] < free[k] {
				k = j
			}
		}
		w := max(free[k]-t, 0)
		free[k] = t + w + s
		if i < warm {
			continue
		}
		if b := (i - warm) / per; b < batches {
			counted++
			if w+extra <= m.MaxWait {
				ok++
				bm[b]++
			}
		}
	}
	share = float64(ok) / float64(counted)
	var v float64
	for _, x := range bm {
		d := x/float64(per) - share
		v += d * d
	}
	v /= batches - 1
	if binom := share * (1 - share); binom > 0 {
		varianceFactor = math.Max(1, v*float64(per)/binom)
	}
	return share, varianceFactor
}

// capacity is the highest Poisson rate at which the model's share reaches target, found by
// bisection on one seed's random numbers, for each of reps seeds: their mean and standard error.
func (m queueModel) capacity(target float64, n, reps int) (mean, se float64, err error) {
	if len(m.Services) == 0 || m.Servers < 1 {
		return 0, 0, errors.New("no service times to model")
	}
	var sum float64
	for _, s := range m.Services {
		sum += s
	}
	top := float64(m.Servers) / (sum / float64(len(m.Services)))
	caps := make([]float64, reps)
	for r := range reps {
		lo, hi := 0.0, top
		for range 30 {
			mid := (lo + hi) / 2
			if s, _ := m.shareRun(mid, n, uint64(r+1)); s >= target {
				lo = mid
			} else {
				hi = mid
			}
		}
		caps[r] = (lo + hi) / 2
	}
	for _, c := range caps {
		mean += c
	}
	mean /= float64(reps)
	if reps > 1 {
		for _, c := range caps {
			se += (c - mean) * (c - mean)
		}
		se = math.Sqrt(se / float64(reps-1) / float64(reps))
	}
	return mean, se, nil
}

// keepLateness limits the lateness the as-served truth draws from to the requests with these ids
// (a sweep's curve tiers: its probes overload the server, which then runs later).
func (l *serverLog) keepLateness(ids map[string]bool) { l.latenessOf = ids }

// models returns the fifoserver's queue as configured (its logical service times from the log)
// and as it served (its own lateness added: the first token's flush after it was due, and the
// time from its handler's start to its joining the queue), for a TTFT objective.
func (l *serverLog) models(objective time.Duration) (configured, asServed queueModel) {
	c := l.Config
	configured = queueModel{Servers: c.Slots, MaxWait: objective.Seconds() - c.FirstTokenS}
	if !c.Spread() {
		configured.Services = []float64{c.ServiceS}
	}
	for i := range l.Requests {
		s := &l.Requests[i]
		if c.Spread() && s.Service > 0 {
			configured.Services = append(configured.Services, s.Service)
		}
		if s.OK() && s.FirstDue != nil && (l.latenessOf == nil || l.latenessOf[s.ID]) {
			asServed.Extra = append(asServed.Extra, (s.Sent()-*s.FirstDue)+(s.Arrival-s.From()))
		}
	}
	asServed.Servers, asServed.Services, asServed.MaxWait = configured.Servers, configured.Services, configured.MaxWait
	return configured, asServed
}

func quantile(xs []float64, p float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	h := float64(len(s)-1) * p
	i := int(h)
	if i+1 >= len(s) {
		return s[len(s)-1]
	}
	return s[i] + (h-float64(i))*(s[i+1]-s[i])
}
