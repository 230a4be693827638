// Package sim is an embedded simulated deployment: an in-process,
// OpenAI-compatible HTTP server that behaves like a continuous-batching LLM
// inference server (vLLM-like), so that loadcurve runs without a GPU and its
// tests have a real server. It is a model, not a measurement: every number
// it produces follows from the formulas below and its Config, not from any
// hardware.
//
// # Engine
//
// One goroutine runs engine steps back to back while there is work and
// sleeps when there is none. A step:
//
//  1. drops sequences whose client went away;
//  2. gives each decoding sequence KV for the tokens it yields this step;
//     with Config.Preempt, if they do not fit, the newest running sequence is
//     preempted (its KV freed, back to the front of the queue, its prefill
//     redone later over prompt plus generated tokens; tokens already
//     streamed stay streamed);
//  3. spends the token budget MaxBatchedTokens: one token per decoding
//     sequence first, then prefill chunks of the prefilling sequences in
//     admission order (chunked prefill);
//  4. admits waiting requests in FIFO order while budget, MaxNumSeqs and KV
//     allow (a prefix-cache hit skips that part of the prefill);
//  5. lasts StepBase + StepPerSeq·batch + StepPerKVToken·kv + prefill/PrefillRate,
//     where batch is the number of scheduled sequences, kv the sum of their
//     contexts at the end of the step and prefill the prompt tokens computed;
//  6. sleeps to its absolute deadline (monotonic clock, one reused timer);
//     then each decoding sequence yields TokensPerChunk tokens and a
//     sequence whose prefill ends yields its first token; how long after
//     the deadline the last of them was handed out is the step's lateness.
//     The next step starts at this step's deadline, so
//     lateness delays tokens but does not slow the step clock (unless the
//     engine falls more than 250 ms behind, when it restarts its schedule
//     and counts a schedule reset).
//
// KV admission: with Preempt a request needs its context plus one token of
// free KV (vLLM's optimistic policy); without it, its prompt plus max output
// tokens are reserved up front and no preemption is ever needed. KV is
// counted in tokens, not blocks, and the prefix cache does not consume the
// KV budget.
//
// Prefix cache (PrefixCacheBlocks > 0): the prompt's full blocks of
// BlockSize tokens are hashed as a chain (each block's hash covers the
// previous hash and its own tokens); an LRU of block hashes, bounded in
// blocks, remembers the prompts whose prefill finished. At a request's first
// admission its longest cached prefix (at most the prompt minus one token) is
// skipped; queries and hits are counted in tokens, as vLLM counts
// prefix_cache_queries and prefix_cache_hits.
//
// # Tokens
//
// A prompt token is a whitespace-separated word (or one token id when the
// prompt is a list of ids); a chat prompt is its messages' words plus
// MessageOverheadTokens (4) per message. Generated text cycles through a
// fixed word list, one word per token, every word but the first preceded by
// a space, so a client that counts words counts tokens. Output length is
// max_completion_tokens (chat) or max_tokens, else DefaultMaxTokens, capped
// by MaxModelLen minus the prompt; with EOSProbability p > 0 (and no
// "ignore_eos": true) the output stops at a geometric number of tokens
// (mean 1/p), drawn from Seed and the request's arrival index, with
// finish_reason "stop"; otherwise finish_reason is "length".
//
// Chunks: the first SSE chunk carries the first token, every later one the
// TokensPerChunk tokens of one decode step (the last may be shorter). A
// handler that falls behind writes the chunks it owes in one flush; it never
// merges them, so chunk counts and contents do not depend on the load.
//
// Reasoning (ReasoningShare s > 0, chat only): of a response whose max
// output tokens is n, the first r = floor(s·n) tokens are reasoning, streamed
// as delta.reasoning_content (message.reasoning_content when not streaming),
// and the rest the answer; a response that stops early is reasoning up to
// its r-th token. Token i has the same text (a space and a word) whichever
// field carries it, so words still count tokens. A chunk that straddles the
// boundary is written as two SSE events, back to back: its reasoning
// tokens, then its answer tokens. Reasoning tokens are ordinary decode
// tokens to the engine.
//
// Tool calls (ToolCalls, chat only): a request with a non-empty "tools"
// array is answered with a call of its first tool (named by
// tools[0].function.name, else "tool"): the answer tokens are the call's
// arguments, the JSON object {"q":"<answer tokens>"}, streamed as
// tool_calls deltas (the first with index 0, an id "call_" + 16 hex digits
// drawn from Seed and the arrival index, type "function" and the name; the
// later ones with index 0 and arguments only), and finish_reason is
// "tool_calls". A non-streaming response carries the call in
// message.tool_calls with content null. A response that stops while still
// reasoning calls no tool. "tools", when present and not null, must be an
// array (else 400), whatever ToolCalls says.
//
// # HTTP
//
// POST /v1/chat/completions and /v1/completions stream when "stream" is
// true, framed as vLLM 0.6–0.10 frames them: "data: {json}\n\n" per chunk and
// "data: [DONE]\n\n" at the end. Chat streams start with a role chunk
// (delta {"role":"assistant","content":""}) sent with the first token, and
// carry no "usage" key; completion chunks carry "usage":null. The chunk
// with the last token carries finish_reason (and "stop_reason":null).
// With stream_options.include_usage a final chunk with "choices":[] and
// usage {prompt_tokens, total_tokens, completion_tokens} precedes [DONE].
// With the prefix cache on, usage (streamed or not) adds
// "prompt_tokens_details":{"cached_tokens":C}, C the prompt tokens the
// request found in the cache at its first admission (0 on a miss); with it
// off, a non-streaming response has "prompt_tokens_details":null and a
// stream none. A chat response with ReasoningShare > 0 adds
// "completion_tokens_details":{"reasoning_tokens":R}, R the reasoning
// tokens it sent.
// Response headers are sent as soon as the request is accepted.
// POST /v1/responses runs on the same engine with the Responses API's
// framing ("event: TYPE" and "data: {json}" with a sequence_number):
// response.created and response.in_progress at once, the reasoning share as
// response.reasoning_summary_text.delta events, the answer as
// response.output_text.delta events (one per engine step), then
// response.completed, or response.incomplete (reason max_output_tokens) when
// the output reached max_output_tokens, with usage {input_tokens,
// output_tokens and their details}; no [DONE]. POST /v1/embeddings prefills
// its input (a string, a one-element list of strings or token ids) on the
// engine as a request of one token and answers one JSON document with an
// embedding and usage.prompt_tokens. The routes are listed in one map
// (routes.go); a generating API is a genAPI (api.go).
// GET /v1/models, GET /health and GET /metrics (Prometheus text, vLLM's
// metric names with a model_name label, plus sim_* metrics) complete the
// surface. Errors are OpenAI-style JSON bodies {"error":{"message","type",
// "param","code"}} with code the HTTP status, as vLLM sends them.
//
// Faults are decided per request from Seed and its arrival index (the count
// of completion POSTs before it): ErrorRate answers 500 or 503; DropRate
// cuts the connection after 1 to all of the request's tokens, before
// [DONE]; StallRate stops sending after 0 to all-but-one token and holds
// the connection until the client leaves. The three are exclusive.
//
// # Cluster
//
// A Cluster (NewCluster; StartCluster serves one on an address as Start
// serves a Server) is N independent replicas, each a Server with its own
// engine, KV cache and prefix cache, behind an in-process load balancer on
// one address. Each completion POST goes to one replica: round-robin (the
// k-th to arrive to replica k mod N) or random (drawn from Seed and k, so
// reproducible). Replica 0 runs with Seed, the others with seeds derived
// from it. GET /v1/models is replica 0's answer, GET /health is 200 while
// every replica is up. GET /metrics reports the cluster under the names
// above: counters, gauges and histogram buckets summed over the replicas,
// KV-cache usage as their mean fraction; sim_replicas and a few
// sim_replica_* series with a replica label break the load down. The
// cluster's plateau is N times a replica's
// (Config.TheoreticalClusterPeakOutput).
//
// # Profiles
//
// The latency, medium and throughput profiles imitate, loosely and as a
// model only, one mid-size model served three ways; default is a faster,
// small engine, so that a whole automatic sweep with confirmation runs in
// minutes on a laptop (it imitates no deployment in particular). All share
// MaxModelLen 8192, BlockSize 16, PrefixCacheBlocks 4096, Preempt true,
// DefaultMaxTokens 256, ReasoningShare 0 and ToolCalls false; StepPerKVToken is 40 ns and TokensPerChunk 1 except
// in default (1 ns, 8 tokens a step). [ProfileObjectives] gives the
// objectives each is judged by when a sweep states none.
//
//	profile     imitates                               MaxNumSeqs  KVCacheTokens  MaxBatchedTokens  StepBase  StepPerSeq  PrefillRate
//	default     a fast small engine (8 tokens a step)           8         131072              8192      2 ms      250 µs   1e6 tok/s
//	latency     small batches on a faster (wider) node         16          65536              1024      8 ms      150 µs  40000 tok/s
//	medium      vLLM-like defaults on one GPU                  64         131072              2048     12 ms      150 µs  40000 tok/s
//	throughput  large batches, big KV cache and chunks        256         262144              8192     12 ms      100 µs  50000 tok/s
//
// Derived figures for loadcurve's default synthetic workload (1024 input
// and 128 output tokens: mean context 1088 tokens). "ITL alone" is one step
// at batch 1 (one chunk: 8 tokens in default); "decode plateau" is
// MaxNumSeqs·TokensPerChunk divided by the step time at full batch without
// prefill; "peak" is TheoreticalPeakOutput(1024, 128), which also charges
// prefill and the KV limit (the throughput profile's KV holds about 240
// such sequences on average, not 256).
//
//	profile     ITL alone  TTFT alone  full-batch step  decode plateau  peak output   peak requests
//	default       2.3 ms      3.3 ms         4.0 ms       15960 tok/s  13414 tok/s    104.8 req/s
//	latency       8.2 ms     33.8 ms        11.1 ms        1442 tok/s   1113 tok/s      8.7 req/s
//	medium       12.2 ms     37.8 ms        24.4 ms        2625 tok/s   1721 tok/s     13.4 req/s
//	throughput   12.1 ms     32.6 ms        48.7 ms        5252 tok/s   2829 tok/s     22.1 req/s
//
// TheoreticalPeakOutput agrees with the engine run on a virtual clock
// within 1% for these profiles and workloads (see the tests).
package sim
