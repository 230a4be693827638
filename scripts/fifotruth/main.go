// Command fifotruth holds a sweep of the fifoserver (scripts/fifoserver) to the truth in the
// server's own log: the true capacity of the queue the server is, and, tier by tier, the share of
// requests that met the TTFT objective as the server timed them against the share the client
// measured, with what the client added to each request's latency.
//
//	go run ./scripts/fifotruth -log fifo.jsonl                       # the true capacity
//	go run ./scripts/fifotruth -log fifo.jsonl -sweep out/sweep      # and the sweep held to it
//	go run ./scripts/fifotruth -log fifo.jsonl -sweep out/sweep -server-timed out/st -as-read out/read
//	loadcurve report out/st                                          # the sweep, judged on the server's TTFT
//	loadcurve report out/read                                        # judged on its first tokens as read
//
// The true capacity is the highest Poisson arrival rate at which -target of the requests meet
// the objective: for M/D/c exactly (queueing.MDCCapacity) and by brute force (a FIFO queue simulated
// here, on the service times in the log), for M/G/c by brute force; "as served" adds the
// server's own lateness (its first token's flush after it was due, and its handler's time before
// the request joined the queue), resampled from the log: that is the deployment's latency too.
//
// A request's TTFT as the client measured it (first − sent) is its TTFT as the server timed it
// (first token flushed − handler started) plus what the client added: the time from its sent
// stamp to the server's handler, and from the server's flush to the client's reading of the
// chunk. The two are told apart by aligning the clocks on the smallest delays each way (the
// processes' monotonic clocks differ by a constant; the error is half the smallest round trip).
// The -server-timed records are the sweep's own, every first token moved to when the server
// timed it (sent + server TTFT): `loadcurve report` on them is the sweep's answer had the client
// added nothing. The -as-read records have every first token timed when the client read it
// (first_read_s), as loadcurve timed it before it took the socket's arrival (metric definitions
// version 2): `loadcurve report` on them is the sweep's answer had its reading been counted.
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/loadcurve/loadcurve/curve/result"
	"github.com/loadcurve/loadcurve/internal/queueing"
	"github.com/loadcurve/loadcurve/measure"
	"github.com/loadcurve/loadcurve/measure/records"
)

func main() {
	logPath := flag.String("log", "", "the fifoserver's log (required)")
	dir := flag.String("sweep", "", "a sweep's result directory to hold to the truth (records.jsonl, curve.json)")
	objective := flag.String("goodput", "ttft:100", "the TTFT objective, ttft:MS")
	target := flag.Float64("target", 0.99, "the share of requests that must meet it")
	n := flag.Int("n", 1_000_000, "arrivals of each brute-force run")
	reps := flag.Int("reps", 6, "brute-force runs (seeds) of each capacity")
	st := flag.String("server-timed", "", "write the sweep's records with the server's TTFT into this directory")
	asRead := flag.String("as-read", "", "write the sweep's records with every first token timed when the client read it into this directory")
	flag.Parse()
	if err := run(os.Stdout, *logPath, *dir, *objective, *target, *n, *reps, *st, *asRead); err != nil {
		fmt.Fprintln(os.Stderr, "fifotruth:", err)
		os.Exit(1)
	}
}

func parseObjective(s string) (time.Duration, error) {
	ms, ok := strings.CutPrefix(s, "ttft:")
	v, err := strconv.ParseFloat(ms, 64)
	if !ok || err != nil || !(v > 0) {
		return 0, fmt.Errorf("-goodput %q: want ttft:MS, MS > 0", s)
	}
	return time.Duration(v * float64(time.Millisecond)), nil
}

func run(w io.Writer, logPath, dir, objectiveText string, target float64, n, reps int, serverTimed, asRead string) error {
	if logPath == "" {
		return errors.New("-log is required")
	}
	objective, err := parseObjective(objectiveText)
	if err != nil {
		return err
	}
	l, err := readLog(logPath)
	if err != nil {
		return err
	}
	var f *records.File
	var cf result.CurveFile
	if dir != "" {
		if f, err = records.ReadFile(filepath.Join(dir, "records.jsonl")); err != nil {
			return err
		}
		if cf, err = result.ReadCurve(filepath.Join(dir, "curve.json")); err != nil {
			return err
		}
		l.keepLateness(curveTierIDs(f))
	}
	tr, err := truthOf(l, objective, target, n, reps)
	if err != nil {
		return err
	}
	tr.print(w, l, objectiveText, target)
	if dir == "" {
		return nil
	}
	tiers := joinTiers(l, f, cf, objective)
	printTiers(w, tiers, tr)
	printAnswer(w, cf, tr)
	if serverTimed != "" {
		if err := writeServerTimed(w, filepath.Join(dir, "records.jsonl"), serverTimed, l, f.Header.RequestIDPrefix); err != nil {
			return err
		}
	}
	if asRead != "" {
		return writeAsRead(w, filepath.Join(dir, "records.jsonl"), asRead)
	}
	return nil
}

// truth is the deployment's true capacity, computed three ways.
type truth struct {
	Exact          float64 // M/D/c exact (queueing.MDCCapacity), NaN for M/G/c
	Brute, BruteSE float64 // brute force, the queue as configured
	Served, SrvSE  float64 // brute force, with the server's own lateness
	configured     queueModel
	served         queueModel
	objective      time.Duration
	lateP50        float64
	lateP99        float64
}

func truthOf(l *serverLog, objective time.Duration, target float64, n, reps int) (truth, error) {
	conf, served := l.models(objective)
	tr := truth{Exact: math.NaN(), configured: conf, served: served, objective: objective,
		lateP50: quantile(served.Extra, 0.5), lateP99: quantile(served.Extra, 0.99)}
	var err error
	if !l.Config.Spread() {
		service := time.Duration(math.Round(l.Config.ServiceS * 1e9))
		maxWait := objective - time.Duration(math.Round(l.Config.FirstTokenS*1e9))
		if tr.Exact, err = queueing.MDCCapacity(service, l.Config.Slots, maxWait, target); err != nil {
			return tr, err
		}
	}
	if tr.Brute, tr.BruteSE, err = conf.capacity(target, n, reps); err != nil {
		return tr, err
	}
	if len(served.Extra) > 0 {
		if tr.Served, tr.SrvSE, err = served.capacity(target, n, reps); err != nil {
			return tr, err
		}
	}
	return tr, nil
}

// reference is the truth a sweep is held to: the capacity of the queue as it served (its own
// lateness is the deployment's), else as configured.
func (t truth) reference() float64 {
	if t.Served > 0 {
		return t.Served
	}
	return t.Brute
}

func (t truth) print(w io.Writer, l *serverLog, objective string, target float64) {
	ok := 0
	for i := range l.Requests {
		if l.Requests[i].OK() {
			ok++
		}
	}
	fmt.Fprintf(w, "Deployment: %s; %d requests in the log, %d streamed whole.\n", describe(l.Config), len(l.Requests), ok)
	fmt.Fprintf(w, "True capacity at %s for %.4g %% of requests (Poisson arrivals):\n", objective, 100*target)
	if !math.IsNaN(t.Exact) {
		fmt.Fprintf(w, "  exact (M/D/c):                 %.3f req/s\n", t.Exact)
	}
	fmt.Fprintf(w, "  brute force, as configured:    %.3f ± %.3f req/s\n", t.Brute, t.BruteSE)
	if t.Served > 0 {
		fmt.Fprintf(w, "  brute force, as served:        %.3f ± %.3f req/s (its own lateness added: p50 %.2f ms, p99 %.2f ms)\n",
			t.Served, t.SrvSE, 1000*t.lateP50, 1000*t.lateP99)
	}
}

// curveTierIDs is the request ids of the sweep's tiers that are points of its curve (search and
// confirmation tiers; not the probes, which overload the server).
func curveTierIDs(f *records.File) map[string]bool {
	curve := map[int]bool{}
	for _, t := range f.Tiers {
		curve[t.Tier] = t.Role != records.RoleProbe
	}
	ids := map[string]bool{}
	for i := range f.Records {
		if r := &f.Records[i]; curve[r.Tier] {
			ids[f.Header.RequestIDPrefix+strconv.Itoa(r.Tier)+"-"+strconv.Itoa(r.ID)] = true
		}
	}
	return ids
}

// tierTruth is one tier of the sweep held to the server's log.
type tierTruth struct {
	Tier           int
	Role           records.Role
	Nominal        float64
	Rate           float64 // realised, in the steady window
	Window, Joined int
	ClientShare    float64 // ok and client TTFT (first − sent, as recorded) within the objective
	ReadShare      float64 // the same with the first token's moment when the client read it
	ServerShare    float64 // server TTFT within it, the same requests
	Flipped        int     // met at the server, missed at the client
	Shuffled       float64 // the server's share with its lateness shuffled between the requests
	Judged         float64 // the share the verdict used (controlled, when it was)
	Verdict        string
	// What the client measured beyond the server's TTFT, s: its TTFT as recorded, and as read.
	Added, AddedRead []float64
	// The parts of a request's TTFT as the client read it, s: sent → written (the client's),
	// written → the server's socket (the network), the server's socket → its handler (the
	// server's own, inside its TTFT), the server's first write → the client's socket (the
	// network; the clocks aligned on the smallest delays each way), and the client's socket →
	// its read (the client's).
	Send, ToServer, ToHandler, Back, Read []float64
	Lag                                   []float64 // dispatched − planned
}

func joinTiers(l *serverLog, f *records.File, cf result.CurveFile, objective time.Duration) []tierTruth {
	var out []tierTruth
	for _, s := range cf.Tiers {
		if s.Steady != nil {
			out = append(out, joinTier(l, f, cf, s, objective))
		}
	}
	return out
}

// joinTier joins tier s's requests in its steady-state window to the server's log by request id.
func joinTier(l *serverLog, f *records.File, cf result.CurveFile, s measure.Summary, objective time.Duration) tierTruth {
	obj := objective.Seconds()
	prefix := f.Header.RequestIDPrefix
	t := tierTruth{Tier: s.Tier, Role: s.Role, Nominal: s.NominalRate, Rate: s.Steady.RealisedRate}
	if c := s.Steady.Controlled; c != nil {
		t.Judged = c.Share
	} else {
		t.Judged = s.Steady.CompliantShare
	}
	for _, tr := range cf.Analysis.Points {
		if tr.Tier == s.Tier {
			t.Verdict = string(tr.Verdict)
		}
	}
	recs := f.TierRecords(s.Tier)
	var d1, d2 []float64 // server − client clock, each way, plus the delay
	var fw, rt []pair
	var handler []float64
	clientOK, readOK, serverOK := 0, 0, 0
	var waits, lates []float64 // of the joined requests the server streamed: wait + first token, lateness
	for i := range recs {
		r := &recs[i]
		p := r.Planned.Seconds()
		if p < s.Steady.Start || p > s.Steady.End || r.Sent == records.Unset {
			continue
		}
		t.Window++
		ok := r.Outcome == records.OK && r.First != records.Unset
		read := r.First
		if r.FirstRead != records.Unset {
			read = r.FirstRead
		}
		if ok && (r.First-r.Sent).Seconds() <= obj {
			clientOK++
		}
		if ok && (read-r.Sent).Seconds() <= obj {
			readOK++
		}
		if r.Dispatched != records.Unset {
			t.Lag = append(t.Lag, (r.Dispatched - r.Planned).Seconds())
		}
		written := r.Sent
		if r.Written != records.Unset {
			written = r.Written
			t.Send = append(t.Send, (r.Written - r.Sent).Seconds())
		}
		sv := l.ByID[prefix+strconv.Itoa(r.Tier)+"-"+strconv.Itoa(r.ID)]
		if sv == nil {
			continue
		}
		t.Joined++
		sOK := sv.OK() && sv.TTFT() <= obj
		if sv.OK() && sv.Start != nil && sv.FirstDue != nil {
			waits = append(waits, *sv.FirstDue-sv.Arrival)
			lates = append(lates, sv.Sent()-*sv.FirstDue+sv.Arrival-sv.From())
		}
		if sOK {
			serverOK++
		}
		if sOK && !(ok && (r.First-r.Sent).Seconds() <= obj) {
			t.Flipped++
		}
		// The request's last bytes reached the server's socket (or its queue, without the
		// socket's stamp) after the client began writing them: the smallest such delay is the
		// clocks' offset, nearly. (Its handler may start before: a body in two writes is read
		// after the first.)
		to := sv.Arrival
		if sv.RX != nil {
			to = *sv.RX
			handler = append(handler, sv.Received-*sv.RX)
		}
		d1 = append(d1, to-written.Seconds())
		fw = append(fw, pair{written.Seconds(), to})
		if sv.OK() && ok {
			t.Added = append(t.Added, (r.First-r.Sent).Seconds()-sv.TTFT())
			t.AddedRead = append(t.AddedRead, (read-r.Sent).Seconds()-sv.TTFT())
			t.Read = append(t.Read, (read - r.First).Seconds())
			d2 = append(d2, r.First.Seconds()-sv.Sent())
			rt = append(rt, pair{r.First.Seconds(), sv.Sent()})
		}
	}
	t.oneWay(d1, d2, fw, rt)
	t.ToHandler = handler
	t.Shuffled = shuffledShare(waits, lates, obj)
	t.ClientShare = ratio(clientOK, t.Window)
	t.ReadShare = ratio(readOK, t.Window)
	t.ServerShare = ratio(serverOK, t.Joined)
	return t
}

// pair is one request's moment on the client's clock (c) and on the server's (s).
type pair struct{ c, s float64 }

// oneWay splits the delays each way between the clocks: d1 (server − client, client to server)
// and d2 (client − server, back) share the clocks' offset, which their minima estimate (NTP's
// rule), and fw and rt become the one-way delays of each request.
func (t *tierTruth) oneWay(d1, d2 []float64, fw, rt []pair) {
	if len(d1) == 0 || len(d2) == 0 {
		return
	}
	theta := (minOf(d1) - minOf(d2)) / 2 // server clock − client clock
	for _, p := range fw {
		t.ToServer = append(t.ToServer, p.s-theta-p.c)
	}
	for _, p := range rt {
		t.Back = append(t.Back, p.c-(p.s-theta))
	}
}

func printTiers(w io.Writer, tiers []tierTruth, tr truth) {
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Shares in each tier's steady-state window (client: its TTFT as recorded; as read: with the first token when the client read it; server: its TTFT from the log; the queue's: Poisson arrivals at the realised rate):")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| tier | role | nominal req/s | realised req/s | window | joined | share, client | as read | server | met at the server, missed at the client | server, lateness shuffled | queue's share, as configured / as served | judged share | verdict |")
	fmt.Fprintln(w, "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
	for _, t := range tiers {
		model := "—"
		if t.Rate > 0 && t.Role != records.RoleProbe {
			c, _ := tr.configured.shareRun(t.Rate, 400_000, 1)
			s, _ := tr.served.shareRun(t.Rate, 400_000, 1)
			model = fmt.Sprintf("%.4f / %.4f", c, s)
		}
		fmt.Fprintf(w, "| %d | %s | %.3g | %.3f | %d | %d | %.4f | %.4f | %.4f | %d | %.4f | %s | %.4f | %s |\n",
			t.Tier, t.Role, t.Nominal, t.Rate, t.Window, t.Joined, t.ClientShare, t.ReadShare, t.ServerShare, t.Flipped, t.Shuffled, model, t.Judged, t.Verdict)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "What the client measured beyond the server's TTFT, and where it came from (ms, p50 / p99 / max):")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| tier | client TTFT − server's, as recorded | as read | sent → written (client) | written → server's socket | server's socket → its handler (in its TTFT) | server's write → client's socket | client's socket → its read (client) | dispatch lag |")
	fmt.Fprintln(w, "| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
	for _, t := range tiers {
		fmt.Fprintf(w, "| %d | %s | %s | %s | %s | %s | %s | %s | %s |\n", t.Tier, dist(t.Added), dist(t.AddedRead), dist(t.Send), dist(t.ToServer), dist(t.ToHandler), dist(t.Back), dist(t.Read), dist(t.Lag))
	}
}

func dist(xs []float64) string {
	if len(xs) == 0 {
		return "—"
	}
	return fmt.Sprintf("%.2f / %.2f / %.1f", ms(quantile(xs, 0.5)), ms(quantile(xs, 0.99)), ms(maxOf(xs)))
}

func ms(s float64) float64 { return 1000 * s }

// shuffledShare is the share of requests whose wait plus lateness is within obj, each wait paired
// with another request's lateness (a fixed permutation): equal to the share itself when the
// server's lateness is independent of the queue's state, as the as-served truth assumes.
func shuffledShare(waits, lates []float64, obj float64) float64 {
	n := len(waits)
	if n == 0 {
		return math.NaN()
	}
	rng := rand.New(rand.NewPCG(7, 11))
	perm := rng.Perm(n)
	ok := 0
	for i, j := range perm {
		if waits[i]+lates[j] <= obj {
			ok++
		}
	}
	return float64(ok) / float64(n)
}

func printAnswer(w io.Writer, cf result.CurveFile, tr truth) {
	ref := tr.reference()
	fmt.Fprintln(w)
	c := cf.Analysis.Capacity
	if c == nil {
		fmt.Fprintf(w, "The sweep found no capacity; the truth is %.3f req/s.\n", ref)
		return
	}
	hi := math.Inf(1)
	if c.High != nil {
		hi = *c.High
	}
	fmt.Fprintf(w, "Sweep: capacity %.3f req/s (%+.1f %% of the truth %.3f), interval %.3f–%.3f (%.3f–%.3f× the truth)", c.Rate, 100*(c.Rate/ref-1), ref, c.Low, hi, c.Low/ref, hi/ref)
	if op := cf.Analysis.OperatingPoint; op != nil {
		fmt.Fprintf(w, "; operating point %.3f req/s (%.2f× the truth), %s", op.Rate, op.Rate/ref, verifiedWord(op.VerifiedBy))
	}
	fmt.Fprintf(w, "; %.0f s of load.\n", cf.TargetSeconds)
}

func verifiedWord(by string) string {
	if by == "" {
		return "NOT verified"
	}
	return "verified (" + by + ")"
}

// writeServerTimed copies the records file at path into dir, every joined ok request's first
// token (and the moments after it) moved so that its TTFT is the server's.
func writeServerTimed(w io.Writer, path, dir string, l *serverLog, prefix string) error {
	return rewrite(w, path, dir, "timed by the server", func(m map[string]any) bool { return shifted(m, l, prefix) })
}

// writeAsRead copies the records file at path into dir, every ok request whose first token the
// client read after it arrived timed at that read (first_read_s, then dropped; its last token no
// earlier).
func writeAsRead(w io.Writer, path, dir string) error {
	return rewrite(w, path, dir, "timed when read", func(m map[string]any) bool {
		read, ok1 := m["first_read_s"].(float64)
		first, ok2 := m["first_s"].(float64)
		if !ok1 || !ok2 || read < first {
			return false
		}
		m["first_s"] = read
		delete(m, "first_read_s")
		if last, ok := m["last_s"].(float64); ok && last < read {
			m["last_s"] = read
		}
		return true
	})
}

// rewrite copies the records file at path into dir, each ok request's line passed to change
// (rewritten when it says so).
func rewrite(w io.Writer, path, dir, what string, change func(map[string]any) bool) error {
	in, err := os.Open(path)
	if err != nil {
		return err
	}
	defer in.Close()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	out, err := os.Create(filepath.Join(dir, "records.jsonl"))
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(out, 1<<20)
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<20), 1<<26)
	moved := 0
	for sc.Scan() {
		line := sc.Bytes()
		var m map[string]any
		if json.Unmarshal(line, &m) == nil && m["kind"] == nil && m["outcome"] == "ok" {
			if change(m) {
				moved++
				if line, err = json.Marshal(m); err != nil {
					return err
				}
			}
		}
		bw.Write(line)
		bw.WriteByte('\n')
	}
	if err := sc.Err(); err != nil {
		return err
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "\nwrote %s: %d requests %s\n", filepath.Join(dir, "records.jsonl"), moved, what)
	return out.Close()
}

func shifted(m map[string]any, l *serverLog, prefix string) bool {
	tier, ok1 := m["tier"].(float64)
	id, ok2 := m["id"].(float64)
	sent, ok3 := m["sent_s"].(float64)
	first, ok4 := m["first_s"].(float64)
	if !ok1 || !ok2 || !ok3 || !ok4 {
		return false
	}
	sv := l.ByID[prefix+strconv.Itoa(int(tier))+"-"+strconv.Itoa(int(id))]
	if sv == nil || !sv.OK() {
		return false
	}
	delta := sent + sv.TTFT() - first
	for _, k := range []string{"first_event_s", "first_s", "last_s", "end_s", "first_answer_s"} {
		if v, ok := m[k].(float64); ok {
			m[k] = v + delta
		}
	}
	// The client's own moments do not hold for a request timed by the server: its first token
	// may now come before the client finished writing it.
	delete(m, "written_s")
	delete(m, "first_read_s")
	return true
}

func ratio(a, b int) float64 {
	if b == 0 {
		return math.NaN()
	}
	return float64(a) / float64(b)
}

func minOf(xs []float64) float64 {
	m := math.Inf(1)
	for _, x := range xs {
		m = math.Min(m, x)
	}
	return m
}

func maxOf(xs []float64) float64 {
	m := math.Inf(-1)
	for _, x := range xs {
		m = math.Max(m, x)
	}
	return m
}
