package loadgen

import (
	"fmt"
	"time"

	"github.com/loadcurve/loadcurve/measure/records"
	"github.com/loadcurve/loadcurve/workloads"
)

// sessionHistory is what a session has said so far: every earlier turn's messages with the
// assistant's actual reply after each, and their length in tokens as the workload and the
// server's output counts give it.
type sessionHistory struct {
	msgs   []workloads.Message
	tokens int
}

// turn returns the request to send for req, a turn of this session: the history, then the
// turn's own messages. The first turn is sent as it is.
func (h *sessionHistory) turn(req *workloads.Request) *workloads.Request {
	if len(h.msgs) == 0 {
		return req
	}
	t := *req
	// A full slice expression: appending the turn's messages must never write into the
	// history's spare capacity, which the next add may fill differently.
	t.Messages = append(h.msgs[:len(h.msgs):len(h.msgs)], ownMessages(req)...)
	t.Prompt = "" // the completions endpoint joins the messages instead
	t.InputTokens += h.tokens
	return &t
}

// add appends a turn that completed, with the assistant's reply, to the history.
func (h *sessionHistory) add(req *workloads.Request, reply string, outputTokens int) {
	h.msgs = append(h.msgs, ownMessages(req)...)
	h.msgs = append(h.msgs, workloads.Message{Role: "assistant", Content: reply})
	h.tokens += req.InputTokens + outputTokens
}

// ownMessages are the messages a turn adds: its messages, or its prompt as a user message.
func ownMessages(req *workloads.Request) []workloads.Message {
	if len(req.Messages) > 0 {
		return req.Messages
	}
	return []workloads.Message{{Role: "user", Content: req.Text()}}
}

// initSessions prepares a run of sessions (nothing for independent requests).
func (r *run) initSessions() {
	r.sessions = workloads.Sessions(r.tier.Requests)
	if r.sessions == nil {
		return
	}
	r.sessionOf = make([]int32, len(r.tier.Requests))
	for k, s := range r.sessions {
		for i := s[0]; i < s[1]; i++ {
			r.sessionOf[i] = int32(k)
		}
	}
	r.history = make([]sessionHistory, len(r.sessions))
}

// nextTurn dispatches turn i of a session once the turn before it, which ended at prevEnd, is
// followed by the turn's think time. Called as a goroutine counted in r.wg.
func (r *run) nextTurn(i int, prevEnd time.Duration) {
	defer r.wg.Done()
	t := r.tier
	planned := r.followUp(prevEnd, t.Requests[i].Think())
	if t.StopAfter > 0 && planned >= t.StopAfter {
		r.turnsNotStarted(i, planned, fmt.Sprintf("not started: planned at or after the tier's stop time (%v)", t.StopAfter))
		return
	}
	switch r.waitFollowUp(planned) {
	case tierStopped: // later turns are not part of the tier
	case runStopped:
		r.turnsNotStarted(i, planned, "not started: "+causeText(r.ctx))
	default:
		r.dispatchAt(i, planned)
	}
}

// followUp is when a request that follows an earlier one's end is planned (a session's next
// turn, a closed-loop user's next request): that end, or now when it has none, plus think.
func (r *run) followUp(prevEnd, think time.Duration) time.Duration {
	if prevEnd == records.Unset {
		prevEnd = time.Since(r.t0)
	}
	return prevEnd + think
}

// What waitFollowUp saw.
const (
	followUpDue = iota // planned time reached: dispatch it
	tierStopped        // Tier.Stop closed: the tier dispatches nothing more (noted in turnStopped)
	runStopped         // the run was stopped (canceled, or its drain deadline passed)
)

// waitFollowUp waits until a follow-up request's planned time, or until the tier or the run
// stops first.
func (r *run) waitFollowUp(planned time.Duration) int {
	stop := r.tier.Stop
	if d := planned - time.Since(r.t0); d > 0 {
		timer := time.NewTimer(d)
		select {
		case <-timer.C:
		case <-r.done:
		case <-stop:
		}
		timer.Stop()
	}
	select {
	case <-stop:
		r.turnStopped.Store(true)
		return tierStopped
	default:
	}
	if r.stopped() {
		return runStopped
	}
	return followUpDue
}

// dispatchAt dispatches request i, planned at planned, now.
func (r *run) dispatchAt(i int, planned time.Duration) {
	rec := r.newRecord(i, planned)
	rec.Dispatched = time.Since(r.t0)
	r.progress.Dispatched.Add(1)
	r.admit(i, rec)
}

// turnsNotStarted records turn i and the later turns of its session as never dispatched, all
// planned at planned (the later ones would have come later still).
func (r *run) turnsNotStarted(i int, planned time.Duration, msg string) {
	end := r.sessions[r.sessionOf[i]][1]
	for j := i; j < end; j++ {
		rec := r.newRecord(j, planned)
		rec.Outcome, rec.Error = records.Canceled, msg
		r.out <- rec
	}
}
