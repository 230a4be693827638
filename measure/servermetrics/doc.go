// Package servermetrics reads the target's Prometheus /metrics during a tier
// and reports, per tier, the server-side numbers that matter beside the
// client's: prefix-cache hit rate, preemptions, mean running and waiting
// requests, KV-cache usage, generated and prompt tokens, requests counted.
//
// A Scraper fetches one exposition (Prometheus text format 0.0.4, parsed
// with github.com/prometheus/common/expfmt) and maps the server's metric
// names to canonical names (the Name* constants). A Sampler scrapes at the
// start of a tier, every interval during it and once more at Stop, and
// Summarize turns the snapshots into TierMetrics.
//
// # Names
//
// For each canonical name the first metric of its list that the server
// exports is used; the others are ignored (so a deprecated alias exported
// beside its successor is never counted twice). A name ending in _total
// also matches the family without the suffix (OpenMetrics style).
//
//	canonical          vLLM (v1, then older)                                    SGLang                              sim
//	running            vllm:num_requests_running                                sglang:num_running_reqs             (vLLM's)
//	waiting            vllm:num_requests_waiting                                sglang:num_queue_reqs               (vLLM's)
//	kv_usage           vllm:kv_cache_usage_perc, vllm:gpu_cache_usage_perc      sglang:token_usage                  (vLLM's)
//	prefix_queries     vllm:prefix_cache_queries_total,                         sglang:prompt_tokens_total          (vLLM's)
//	                   vllm:gpu_prefix_cache_queries_total
//	prefix_hits        vllm:prefix_cache_hits_total,                            sglang:cached_tokens_total          (vLLM's)
//	                   vllm:gpu_prefix_cache_hits_total
//	prefix_hit_rate    vllm:gpu_prefix_cache_hit_rate (v0 gauge)                sglang:cache_hit_rate (gauge)       -
//	preemptions        vllm:num_preemptions_total                               sglang:num_retracted_requests_total (vLLM's)
//	generation_tokens  vllm:generation_tokens_total                             sglang:generation_tokens_total      (vLLM's)
//	prompt_tokens      vllm:prompt_tokens_total                                 sglang:prompt_tokens_total          (vLLM's)
//	requests_finished  vllm:request_success_total (every finished_reason)       sglang:num_requests_total           (vLLM's)
//	requests_received  -                                                        -                                   sim_requests_received_total
//
// llama.cpp's server (llama-server --metrics), whose page has no labels:
//
//	running            llamacpp:requests_processing (slots busy)
//	waiting            llamacpp:requests_deferred (requests waiting for a slot)
//	kv_usage           llamacpp:kv_cache_usage_ratio (older servers; the newer page has none)
//	prefix_queries     llamacpp:prompt_tokens_total + llamacpp:prompt_tokens_cached_total
//	prefix_hits        llamacpp:prompt_tokens_cached_total
//	generation_tokens  llamacpp:tokens_predicted_total
//	prompt_tokens      llamacpp:prompt_tokens_total + llamacpp:prompt_tokens_cached_total
//
// llama.cpp's prompt_tokens_total counts the prompt tokens it processed, not those it reused
// from a slot's cache, so its prompt tokens are the sum of the two counters (read only when
// both are exported). It adds a request's generated tokens to tokens_predicted_total when the
// request ends, so a tier's generated tokens include those of requests begun in the tier
// before and exclude those still running at its end.
//
// Queries and hits are counted in prompt tokens. SGLang counts a request's
// prompt and cached tokens when it finishes, and creates its cached-tokens
// series at the first hit; its retractions are its preemptions. The step
// lateness histogram sim_step_lateness_seconds (sim only) is kept whole.
//
// # Label sets
//
// Series are aggregated over their label sets (engines, ranks, finish
// reasons): summed, except kv_usage and prefix_hit_rate, which are
// fractions and are averaged. With a model name, only series whose
// model_name label equals it (and series without that label) count; when
// no series carries model_name equal to the model, every series counts and
// the snapshot says so. NaN and infinite sample values are skipped.
//
// # Over a tier
//
// Counters give deltas over the successful scrapes: the sum of the
// increases between consecutive scrapes, where a decrease means the server
// restarted (its counters began again at zero), so the value after the
// decrease is the increase since the restart; each such reset is noted. A
// counter absent from the first scrape but present later is a series
// created during the tier and counts from zero. Deltas need two scrapes.
// Gauges give the mean and maximum over the scrapes that carry them (each
// scrape weighs the same; scrapes are evenly spaced except the last).
//
// PrefixCacheHitRate is Δprefix_hits/Δprefix_queries when both counters
// exist, nil when Δprefix_queries is 0; only when the counters do not exist
// is it the mean of a hit-rate gauge (noted, since a gauge is the server's
// own, differently defined, rate). StepLatenessP99 is the 0.99 quantile of
// the histogram's increase over the tier, interpolated linearly inside its
// bucket as Prometheus' histogram_quantile does.
//
// # Never in the way
//
// Each scrape has its own deadline (DefaultTimeout unless WithTimeout says
// otherwise) and, with a nil client, its own connection pool, not the load
// generator's. StartSampler returns at once; the scrapes run in one
// goroutine, one at a time. Ready tells when the first scrape (the tier's
// baseline) has ended, for a caller that wants it taken before the first
// request. A failed scrape is counted and remembered (Failures, LastError)
// and the tier goes on. Stop ends the periodic scrapes (an in-flight one is
// abandoned, not counted), makes the final scrape and returns: within twice
// the scrape deadline, since it waits for a baseline scrape still in
// flight.
package servermetrics
