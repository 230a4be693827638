// Package loadgen sends one tier of load and records what happened to every request.
//
// It has three parts, each built so that the client does not shape the load it measures:
//
//   - the dispatcher ([Run]) sleeps to absolute deadlines T0+offset with one reused timer and
//     records, per request, when it was planned and when it was actually released, so its own
//     lateness (schedule lag) is visible in the data;
//   - the max-concurrency gate admits dispatched requests in planned order (FIFO) without ever
//     blocking the dispatcher, and records when each was admitted (slot);
//   - the streaming client ([Client.Do]) sends one OpenAI-compatible streaming request over a
//     connection pool sized to the concurrency and times every server-sent event on the monotonic
//     clock when its bytes arrived at the socket (the kernel's receive timestamp, on Linux), not
//     when the client got round to reading it, so its own delays on a busy machine are not
//     counted as the server's latency; it keeps when the request's last bytes went to the socket
//     (written) and when it read the first token (first_read), which show those delays.
//
// Every planned request yields exactly one [records.Record], handed to a [Sink] by a single
// writer goroutine, so neither the dispatcher nor the requests wait for disk. The timestamps and
// outcomes follow METRICS.md.
package loadgen
