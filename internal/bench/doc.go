// Package bench measures whether loadcurve's client can carry the load it is asked to send, on
// the machine it runs on, against a physical limit measured in the same run.
//
// It has three parts, each meant to run in its own process so that the CPU time and memory of
// each come from the operating system's accounting (getrusage) and not from estimates:
//
//   - [Server]: a minimal OpenAI-compatible streaming server of our own. Every stream carries a
//     fixed number of one-token content chunks at a fixed gap (or as fast as possible), then a
//     usage chunk and [DONE]. It counts requests and chunks itself, timestamps the first chunk
//     of every stream (the server-side truth for TTFT) and the arrival of every request (the
//     delivered rate as the server saw it), and serves these counts on GET /bench/stats.
//     Under /stall/ it sends one chunk and then holds the stream open, to count the client
//     memory each open stream costs.
//   - the probe: the smallest Go client that sends the same seeded open-loop schedule and only
//     counts SSE data lines (no JSON, no records, no statistics beyond its own schedule lag).
//     It is the physical limit of this machine, and every loadcurve figure is reported as a
//     ratio to the probe's figure from the same run.
//   - the loadcurve client: the real path, loadgen.Run with records streamed to a file through
//     records.Writer and measure.Summarize at the end, exactly as `loadcurve run` does.
//
// [Run] starts the server in a child process, then for each rate, concurrency and repeat runs
// the probe and the client, each in a child process of its own, one after the other, and
// gathers offered vs delivered rate (from the server's counts), schedule-lag percentiles, CPU
// microseconds per streamed chunk (from the child's rusage), RSS per in-flight stream (with the
// stalled-stream mode) and TTFT overhead against the server's own clock (at light load). The
// children are started by re-executing a binary (Options.Exec), normally `loadcurve bench`; a
// child gets its role and its [Job] (as JSON) as its last two arguments and writes its
// [ChildResult] as one JSON line on stdout ([RunChild]).
//
// Nothing here asserts a wall-clock threshold: [Report.Goals] compares the figures with the
// goals of docs/PERFORMANCE.md and says which were met, and the caller decides what to do.
package bench
