package main

import (
	"encoding/json"
	"fmt"
	"maps"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/urfave/cli/v2"

	"github.com/loadcurve/loadcurve/cmd/internal/nearest"
	"github.com/loadcurve/loadcurve/loadgen"
	"github.com/loadcurve/loadcurve/tokens"
	"github.com/loadcurve/loadcurve/workloads"
)

// vLLM's `vllm bench serve` command line, accepted by run and sweep: every flag of vLLM's
// benchmark client (vllm/benchmarks/serve.py, add_cli_args, with its dataset parser) is either
// one of loadcurve's own (native), honoured here with vLLM's meaning, accepted and stated once
// as having no effect, or refused with one line saying why and what to do instead. The
// README's table lists them all (TestVLLMFlagTableInREADME holds the two together).

// compatKind is what loadcurve does with a vLLM flag.
type compatKind int

const (
	native   compatKind = iota // a loadcurve flag of the same name and meaning
	honoured                   // read by this file with vLLM's meaning
	noEffect                   // accepted; said once to have no effect here
	refused                    // refused, saying why and what to do instead
)

// vllmFlag is one flag of vLLM's benchmark client.
type vllmFlag struct {
	name string
	kind compatKind
	// typ is the flag's value: bool, string, int, float, or list (several values after the flag).
	typ string
	// note is what it does here (honoured), why it has none (noEffect), or why it is refused and
	// what to do instead (refused).
	note string
	// allowed, for a refused flag, is the value that is accepted (vLLM's default, which changes
	// nothing): --random-batch-size 1, --probe-request-rate 0.
	allowed string
	// only names the one command the flag is native to (run); on the other it is refused with
	// onlyWhy.
	only, onlyWhy string
}

const (
	whyNoHF        = "needs a dataset from the Hugging Face Hub, and loadcurve downloads nothing: save the rows as JSONL ({\"prompt\": …, \"max_tokens\": …} a line) and pass --workload FILE.jsonl"
	whyMultimodal  = "loadcurve sends text only (no images, video or audio)"
	whyNoTemplate  = "loadcurve applies no chat template on the client: chat requests carry messages and the server applies its own template, completions send the prompt as it is (vLLM's --skip-chat-template)"
	whyRunOnly     = "vLLM's result file is one run's: use loadcurve run (a sweep writes curve.json and one summary per tier)"
	whyNoTokenizer = "loadcurve loads no tokenizer from a model hub: --tokenizer takes a local tokenizer.json"
)

// vllmFlags is vLLM's benchmark client's flags, in the order of its --help.
var vllmFlags = []vllmFlag{
	// Connection.
	{name: "backend", kind: honoured, typ: "string", note: "vllm and openai send completions (/completions), openai-chat chat (/chat/completions); the embeddings, pooling, rerank and audio backends are refused"},
	{name: "base-url", kind: native, typ: "string", note: "with --endpoint PATH, --host/--port or --backend, vLLM's form: the server's root, the URL is base-url + endpoint; otherwise loadcurve's, the API root (http://host:8000/v1)"},
	{name: "host", kind: honoured, typ: "string", note: "with --port: the target is http://HOST:PORT + --endpoint (vLLM's defaults 127.0.0.1, 8000, /v1/completions); --base-url wins over both"},
	{name: "port", kind: honoured, typ: "int", note: "see --host"},
	{name: "endpoint", kind: native, typ: "string", note: "loadcurve's chat or completions, or vLLM's path (/v1/completions): the path is added to the base as it is, and its ending (chat/completions or completions) chooses the API"},
	{name: "header", kind: native, typ: "list"},
	{name: "insecure", kind: native, typ: "bool"},
	{name: "ready-check-timeout-sec", kind: native, typ: "int"},
	// Model and tokenizer.
	{name: "model", kind: native, typ: "string"},
	{name: "served-model-name", kind: honoured, typ: "string", note: "the model name sent in every request (--model, when also given, names it in the results)"},
	{name: "tokenizer", kind: honoured, typ: "string", note: "a local tokenizer.json, or a directory holding one: synthetic prompts are sized, and dataset prompts counted, in its tokens"},
	{name: "tokenizer-mode", kind: noEffect, typ: "string", note: "a tokenizer.json is read one way, by a Go tokenizer; there is no slow, mistral or custom mode"},
	{name: "trust-remote-code", kind: noEffect, typ: "bool", note: "loadcurve runs no code from a model or data set repository"},
	{name: "skip-tokenizer-init", kind: noEffect, typ: "bool", note: "without --tokenizer, loadcurve loads none and counts tokens from the server's usage (vLLM's --skip-tokenizer-init, but the latency statistics are kept)"},
	{name: "lora-modules", kind: refused, typ: "list", note: "loadcurve sends one model name: benchmark one adapter at a time with --served-model-name ADAPTER"},
	{name: "lora-assignment", kind: noEffect, typ: "string", note: "it applies to --lora-modules, which loadcurve refuses"},
	// Datasets.
	{name: "seed", kind: native, typ: "int"},
	{name: "num-prompts", kind: native, typ: "int", note: "= --num-requests"},
	{name: "dataset-name", kind: honoured, typ: "string", note: "random (synthetic), sharegpt and custom (--dataset-path FILE), prefix_repetition (shared-prefix) and timed_trace (a Mooncake-format trace with 512-token blocks) are built locally; hf needs the internet and is refused, and so are the multimodal, rerank, sonnet, burstgpt, spec_bench and speed_bench sets, each with what to do instead"},
	{name: "dataset-path", kind: honoured, typ: "string", note: "the local file of sharegpt, custom or timed_trace (refused with random and prefix_repetition, as in vLLM)"},
	{name: "no-stream", kind: noEffect, typ: "bool", note: "it applies to Hugging Face datasets, which loadcurve does not load"},
	{name: "no-oversample", kind: noEffect, typ: "bool", note: "a dataset with fewer rows than --num-prompts is reused in order, and the run says so; cut the run to the file with --num-prompts"},
	{name: "skip-chat-template", kind: noEffect, typ: "bool", note: whyNoTemplate},
	{name: "enable-multimodal-chat", kind: refused, typ: "bool", note: whyMultimodal},
	{name: "disable-shuffle", kind: noEffect, typ: "bool", note: "loadcurve never shuffles a dataset: its requests are sent in file order"},
	{name: "input-len", kind: honoured, typ: "int", note: "= --random-input-len"},
	{name: "output-len", kind: honoured, typ: "int", note: "the output length of random, sharegpt, custom and prefix_repetition (each one's own flag wins)"},
	{name: "custom-output-len", kind: honoured, typ: "int", note: "custom: max_tokens of every row (vLLM's default 256); -1 keeps each row's output_tokens"},
	{name: "custom-ensure-client-side-data", kind: noEffect, typ: "bool", note: "it applies to images, which loadcurve does not send"},
	{name: "spec-bench-output-len", kind: noEffect, typ: "int", note: "it applies to spec_bench, which loadcurve refuses"},
	{name: "spec-bench-category", kind: noEffect, typ: "string", note: "it applies to spec_bench, which loadcurve refuses"},
	{name: "sonnet-input-len", kind: noEffect, typ: "int", note: "it applies to sonnet, which loadcurve refuses"},
	{name: "sonnet-output-len", kind: noEffect, typ: "int", note: "it applies to sonnet, which loadcurve refuses"},
	{name: "sonnet-prefix-len", kind: noEffect, typ: "int", note: "it applies to sonnet, which loadcurve refuses"},
	{name: "sharegpt-output-len", kind: honoured, typ: "int", note: "sharegpt: max_tokens of every request instead of the reply's length"},
	{name: "timed-trace-chunk-hash-size", kind: honoured, typ: "int", note: "must be 512, the block size loadcurve reads hash_ids with (refused otherwise)"},
	{name: "timed-trace-sec-multiplier", kind: honoured, typ: "float", note: "must be 0.001 (timestamps in milliseconds, as loadcurve reads them); to replay faster or slower use --trace-time-scale"},
	{name: "timed-trace-label-timestamp", kind: honoured, typ: "string", note: "must be timestamp (loadcurve reads the Mooncake keys)"},
	{name: "timed-trace-label-input-length", kind: honoured, typ: "string", note: "must be input_length"},
	{name: "timed-trace-label-output-length", kind: honoured, typ: "string", note: "must be output_length"},
	{name: "timed-trace-label-hash-ids", kind: honoured, typ: "string", note: "must be hash_ids"},
	{name: "blazedit-min-distance", kind: noEffect, typ: "float", note: "it applies to a Hugging Face dataset, which loadcurve does not load"},
	{name: "blazedit-max-distance", kind: noEffect, typ: "float", note: "it applies to a Hugging Face dataset, which loadcurve does not load"},
	{name: "asr-max-audio-len-sec", kind: noEffect, typ: "float", note: "it applies to audio, which loadcurve does not send"},
	{name: "asr-min-audio-len-sec", kind: noEffect, typ: "float", note: "it applies to audio, which loadcurve does not send"},
	{name: "random-input-len", kind: native, typ: "int"},
	{name: "random-output-len", kind: native, typ: "int"},
	{name: "random-range-ratio", kind: native, typ: "float", note: "a number; vLLM's JSON form ({\"input\":…,\"output\":…}) is not read"},
	{name: "random-prefix-len", kind: honoured, typ: "int", note: "random: a prefix of this many tokens shared by every request, before its own random part"},
	{name: "random-batch-size", kind: refused, typ: "int", allowed: "1", note: "several prompts a request is for embeddings and reranking, which loadcurve does not send: omit it (1)"},
	{name: "no-reranker", kind: noEffect, typ: "bool", note: "it applies to random-rerank, which loadcurve refuses"},
	{name: "random-mm-base-items-per-request", kind: noEffect, typ: "int", note: "it applies to random-mm, which loadcurve refuses"},
	{name: "random-mm-num-mm-items-range-ratio", kind: noEffect, typ: "float", note: "it applies to random-mm, which loadcurve refuses"},
	{name: "random-mm-limit-mm-per-prompt", kind: noEffect, typ: "string", note: "it applies to random-mm, which loadcurve refuses"},
	{name: "random-mm-bucket-config", kind: noEffect, typ: "string", note: "it applies to random-mm, which loadcurve refuses"},
	{name: "hf-subset", kind: noEffect, typ: "string", note: "it applies to --dataset-name hf, which loadcurve refuses"},
	{name: "hf-split", kind: noEffect, typ: "string", note: "it applies to --dataset-name hf, which loadcurve refuses"},
	{name: "hf-name", kind: noEffect, typ: "string", note: "it applies to --dataset-name hf, which loadcurve refuses"},
	{name: "hf-output-len", kind: noEffect, typ: "int", note: "it applies to --dataset-name hf, which loadcurve refuses"},
	{name: "bfcl-categories", kind: noEffect, typ: "string", note: "it applies to a Hugging Face dataset, which loadcurve does not load"},
	{name: "prefix-repetition-prefix-len", kind: honoured, typ: "int", note: "prefix_repetition: tokens of each shared prefix (vLLM's default 256)"},
	{name: "prefix-repetition-suffix-len", kind: honoured, typ: "int", note: "prefix_repetition: tokens of each request's own suffix (256)"},
	{name: "prefix-repetition-num-prefixes", kind: honoured, typ: "int", note: "prefix_repetition: distinct prefixes (10); request i uses prefix i mod N"},
	{name: "prefix-repetition-output-len", kind: honoured, typ: "int", note: "prefix_repetition: output tokens (128)"},
	{name: "speed-bench-dataset-subset", kind: noEffect, typ: "string", note: "it applies to speed_bench, which loadcurve refuses"},
	{name: "speed-bench-output-len", kind: noEffect, typ: "int", note: "it applies to speed_bench, which loadcurve refuses"},
	{name: "speed-bench-category", kind: noEffect, typ: "string", note: "it applies to speed_bench, which loadcurve refuses"},
	{name: "chat-template-kwargs", kind: noEffect, typ: "string", note: whyNoTemplate},
	// Load.
	{name: "request-rate", kind: native, typ: "string", only: "run", onlyWhy: "a sweep chooses its rates; did you mean --request-rates? (--request-rates R runs one tier at R)"},
	{name: "burstiness", kind: native, typ: "string"},
	{name: "max-concurrency", kind: native, typ: "int"},
	{name: "num-warmups", kind: honoured, typ: "int", note: "sends that many copies of the first request before the run, unmeasured and not recorded (within --max-concurrency)"},
	{name: "ramp-up-strategy", kind: native, typ: "string", only: "run", onlyWhy: "a sweep's tiers each run at one rate: ramp within one run with loadcurve run"},
	{name: "ramp-up-start-rps", kind: native, typ: "float", only: "run", onlyWhy: "a sweep's tiers each run at one rate: ramp within one run with loadcurve run"},
	{name: "ramp-up-end-rps", kind: native, typ: "float", only: "run", onlyWhy: "a sweep's tiers each run at one rate: ramp within one run with loadcurve run"},
	{name: "self-timed", kind: noEffect, typ: "bool", note: "a trace (timed_trace, --workload mooncake:FILE) is always its own schedule"},
	{name: "no-self-timed", kind: refused, typ: "bool", note: "loadcurve replays a trace at its own timestamps: to change its pace use --trace-time-scale, to send its requests on a rate's schedule save them as JSONL"},
	{name: "probe-request-rate", kind: refused, typ: "float", allowed: "0", note: "loadcurve sends no probe requests beside the load: run a second loadcurve run at that rate against the same target"},
	{name: "request-id-prefix", kind: native, typ: "string"},
	// Output.
	{name: "save-result", kind: native, typ: "bool", only: "run", onlyWhy: whyRunOnly},
	{name: "save-detailed", kind: honoured, typ: "bool", only: "run", onlyWhy: whyRunOnly, note: "the result file also holds vLLM's seven per-request arrays (input_lens, output_lens, ttfts, itls, start_times, generated_texts, errors; generated_texts are empty strings: loadcurve keeps no response text)"},
	{name: "append-result", kind: honoured, typ: "bool", only: "run", onlyWhy: whyRunOnly, note: "appends the result to the file as one more line (JSON Lines), as vLLM; implies --save-result"},
	{name: "result-dir", kind: native, typ: "string", only: "run", onlyWhy: whyRunOnly},
	{name: "result-filename", kind: native, typ: "string", only: "run", onlyWhy: whyRunOnly},
	{name: "label", kind: native, typ: "string"},
	{name: "metadata", kind: native, typ: "list"},
	{name: "percentile-metrics", kind: native, typ: "string"},
	{name: "metric-percentiles", kind: native, typ: "string"},
	{name: "goodput", kind: native, typ: "list"},
	{name: "plot-timeline", kind: noEffect, typ: "bool", note: "--out writes loadcurve's own plots and report.html"},
	{name: "timeline-itl-thresholds", kind: noEffect, typ: "string", note: "it applies to --plot-timeline"},
	{name: "plot-dataset-stats", kind: noEffect, typ: "bool", note: "--out writes loadcurve's own plots and report.html; `loadcurve workload` writes the request set"},
	{name: "disable-tqdm", kind: honoured, typ: "bool", note: "= --quiet: no progress display"},
	// Request body and sampling.
	{name: "temperature", kind: honoured, typ: "float", note: "sent as \"temperature\" in every request body"},
	{name: "top-p", kind: honoured, typ: "float", note: "\"top_p\""},
	{name: "top-k", kind: honoured, typ: "int", note: "\"top_k\""},
	{name: "min-p", kind: honoured, typ: "float", note: "\"min_p\""},
	{name: "frequency-penalty", kind: honoured, typ: "float", note: "\"frequency_penalty\""},
	{name: "presence-penalty", kind: honoured, typ: "float", note: "\"presence_penalty\""},
	{name: "repetition-penalty", kind: honoured, typ: "float", note: "\"repetition_penalty\""},
	{name: "extra-body", kind: native, typ: "string", note: "its keys win over the sampling flags', as in vLLM"},
	{name: "ignore-eos", kind: native, typ: "bool"},
	{name: "logprobs", kind: honoured, typ: "int", note: "\"logprobs\" in completions bodies (chat bodies carry none, as in vLLM)"},
	{name: "use-beam-search", kind: noEffect, typ: "bool", note: "vLLM's client never reads it either"},
	{name: "profile", kind: refused, typ: "bool", note: "loadcurve does not drive the server's profiler: POST /start_profile and /stop_profile to the server yourself around the run"},
}

// samplingKeys maps vLLM's sampling flags to their body keys.
var samplingKeys = map[string]string{"temperature": "temperature", "top-p": "top_p", "top-k": "top_k", "min-p": "min_p",
	"frequency-penalty": "frequency_penalty", "presence-penalty": "presence_penalty", "repetition-penalty": "repetition_penalty",
	"logprobs": "logprobs"}

// vllmCompatFlags are the flags vLLM's client has and the command (run or sweep) has not, with
// what they do here as their usage.
func vllmCompatFlags(command string, existing []cli.Flag) []cli.Flag {
	have := map[string]bool{}
	for _, f := range existing {
		for _, n := range f.Names() {
			have[n] = true
		}
	}
	var out []cli.Flag
	for _, v := range vllmFlags {
		if have[v.name] {
			continue
		}
		usage := "vLLM's flag: " + v.note
		switch {
		case v.only != "" && v.only != command:
			usage = "vLLM's flag, refused here: " + v.onlyWhy
		case v.kind == noEffect:
			usage = "vLLM's flag, no effect here: " + v.note
		case v.kind == refused:
			usage = "vLLM's flag, refused: " + v.note
		}
		f := cli.Flag(nil)
		switch v.typ {
		case "bool":
			f = &cli.BoolFlag{Name: v.name, Category: catVLLMCompat, Usage: usage}
		case "int":
			f = &cli.IntFlag{Name: v.name, Category: catVLLMCompat, Usage: usage}
		case "float":
			f = &cli.Float64Flag{Name: v.name, Category: catVLLMCompat, Usage: usage}
		case "list":
			f = &cli.GenericFlag{Name: v.name, Category: catVLLMCompat, Value: &listValue{}, Usage: usage}
		default:
			f = &cli.StringFlag{Name: v.name, Category: catVLLMCompat, Usage: usage}
		}
		out = append(out, f)
	}
	return out
}

// maxWarmups bounds --num-warmups.
const maxWarmups = 100000

const catVLLMCompat = "vLLM's other flags (vllm bench serve)"

func vllmFlagOf(name string) *vllmFlag {
	for i := range vllmFlags {
		if vllmFlags[i].name == name {
			return &vllmFlags[i]
		}
	}
	return nil
}

// isSetHere reports whether the command has the flag and it was given.
func isSetHere(c *cli.Context, name string) bool {
	f, ok := flagsByName(c.Command)[name]
	if !ok {
		return false
	}
	// c.IsSet is cheap for a flag that is set and costs a scan of every flag's names for one
	// that is not, which most of vLLM's are: look at what was set first.
	names := f.Names()
	for _, n := range c.LocalFlagNames() {
		if slices.Contains(names, n) {
			return c.IsSet(name)
		}
	}
	return f.IsSet() // set from the environment
}

// vllmRefusals returns a line for every vLLM flag given that the command refuses, and states
// once on stderr every one given that has no effect here.
func vllmRefusals(c *cli.Context) []error {
	var errs []error
	for _, v := range vllmFlags {
		if !isSetHere(c, v.name) {
			continue
		}
		switch {
		case v.only != "" && v.only != c.Command.Name:
			errs = append(errs, fmt.Errorf("--%s: not in loadcurve %s: %s", v.name, c.Command.Name, v.onlyWhy))
		case v.kind == refused && v.allowed != "" && flagText(c, v) == v.allowed:
			fmt.Fprintf(c.App.ErrWriter, "loadcurve: --%s %s: vLLM's default, no effect\n", v.name, v.allowed)
		case v.kind == refused:
			errs = append(errs, fmt.Errorf("--%s: not supported: %s", v.name, v.note))
		case v.kind == noEffect:
			fmt.Fprintf(c.App.ErrWriter, "loadcurve: --%s: accepted, no effect here: %s\n", v.name, v.note)
		}
	}
	return errs
}

// flagText is a flag's value as text (numbers as strconv writes them).
func flagText(c *cli.Context, v vllmFlag) string {
	switch v.typ {
	case "int":
		return strconv.Itoa(c.Int(v.name))
	case "float":
		return strconv.FormatFloat(c.Float64(v.name), 'g', -1, 64)
	case "bool":
		return strconv.FormatBool(c.Bool(v.name))
	}
	return c.String(v.name)
}

// vllmBackends are vLLM's --backend values: the API each speaks here, or why it is refused.
var vllmBackends = map[string]struct {
	endpoint loadgen.Endpoint
	refused  string
}{
	"vllm":                      {endpoint: loadgen.Completions},
	"openai":                    {endpoint: loadgen.Completions},
	"openai-chat":               {endpoint: loadgen.Chat},
	"openai-audio":              {refused: "speech transcription: " + whyMultimodal},
	"openai-embeddings":         {refused: "embeddings are not measured by loadcurve yet (it measures streamed generation)"},
	"openai-embeddings-chat":    {refused: "embeddings are not measured by loadcurve yet (it measures streamed generation)"},
	"openai-embeddings-clip":    {refused: "embeddings are not measured by loadcurve yet (it measures streamed generation)"},
	"openai-embeddings-vlm2vec": {refused: "embeddings are not measured by loadcurve yet (it measures streamed generation)"},
	"infinity-embeddings":       {refused: "embeddings are not measured by loadcurve yet (it measures streamed generation)"},
	"infinity-embeddings-clip":  {refused: "embeddings are not measured by loadcurve yet (it measures streamed generation)"},
	"vllm-pooling":              {refused: "pooling is not measured by loadcurve (it measures streamed generation)"},
	"vllm-rerank":               {refused: "reranking is not measured by loadcurve (it measures streamed generation)"},
}

// vllmTarget applies vLLM's connection, model and sampling flags to t (readTarget calls it
// before validating t): the URL from --base-url/--host/--port and --endpoint as vLLM forms it
// (base + path, joined as they are), the API from --backend or the path's ending, the model
// from --served-model-name, and the sampling flags merged under --extra-body into every body.
func vllmTarget(c *cli.Context, t *loadgen.Target) []error {
	var errs []error
	ep := c.String("endpoint")
	path := ""
	if strings.HasPrefix(ep, "/") {
		path = ep
	}
	backend := ""
	if isSetHere(c, "backend") {
		backend = c.String("backend")
		b, ok := vllmBackends[backend]
		switch {
		case !ok:
			names := slices.Sorted(maps.Keys(vllmBackends))
			if s := nearest.Names(backend, names); len(s) > 0 {
				errs = append(errs, fmt.Errorf("--backend %q: not one of vLLM's backends; did you mean %s?", backend, nearest.Or(s)))
			} else {
				errs = append(errs, fmt.Errorf("--backend %q: not one of vLLM's backends (%s)", backend, strings.Join(names, ", ")))
			}
			return errs
		case b.refused != "":
			return append(errs, fmt.Errorf("--backend %s: not supported: %s; use openai (completions) or openai-chat (chat)", backend, b.refused))
		}
		t.Endpoint = b.endpoint
		if c.IsSet("endpoint") && path == "" && !strings.EqualFold(ep, t.Endpoint.String()) {
			errs = append(errs, fmt.Errorf("--backend %s sends %s requests and --endpoint %s asks for %s: give one of them", backend, t.Endpoint, ep, ep))
		}
	}
	urlForm := path != "" || isSetHere(c, "host") || isSetHere(c, "port") || backend != ""
	if path != "" {
		// vLLM's request functions check the URL's ending: chat/completions for the chat API,
		// completions for the completions API.
		kind := loadgen.Completions
		switch {
		case strings.HasSuffix(path, "chat/completions"):
			kind = loadgen.Chat
		case strings.HasSuffix(path, "completions"):
		default:
			return append(errs, fmt.Errorf("--endpoint %s: loadcurve speaks the completions and chat completions APIs: the path must end with completions or chat/completions, e.g. /v1/completions", path))
		}
		if backend != "" && kind != t.Endpoint {
			want := map[loadgen.Endpoint]string{loadgen.Chat: "/v1/chat/completions", loadgen.Completions: "/v1/completions"}[t.Endpoint]
			return append(errs, fmt.Errorf("--backend %s sends %s requests, but --endpoint %s is the %s API: give --endpoint %s (or --backend %s)",
				backend, t.Endpoint, path, kind, want, map[loadgen.Endpoint]string{loadgen.Chat: "openai-chat", loadgen.Completions: "openai"}[kind]))
		}
		t.Endpoint = kind
	} else if urlForm {
		// vLLM's default endpoint is /v1/completions, whatever the backend.
		if t.Endpoint == loadgen.Chat && backend != "" {
			return append(errs, fmt.Errorf("--backend %s needs --endpoint /v1/chat/completions: vLLM's default endpoint, /v1/completions, is not the chat API", backend))
		}
		if backend == "" && !c.IsSet("endpoint") {
			t.Endpoint = loadgen.Completions // vLLM's default backend, openai
		}
		path = "/v1" + map[loadgen.Endpoint]string{loadgen.Chat: "/chat/completions", loadgen.Completions: "/completions"}[t.Endpoint]
	}
	if urlForm {
		root := c.String("base-url")
		if root == "" && (isSetHere(c, "host") || isSetHere(c, "port")) {
			host := "127.0.0.1"
			if isSetHere(c, "host") {
				host = c.String("host")
			}
			port := 8000
			if isSetHere(c, "port") {
				port = c.Int("port")
			}
			if port < 1 || port > 65535 {
				errs = append(errs, fmt.Errorf("--port must be in [1, 65535], got %d", port))
			}
			if host == "" || strings.ContainsAny(host, "/?#@ ") {
				errs = append(errs, fmt.Errorf("--host %q: want a host name or address, e.g. 127.0.0.1 (the scheme and path come from --endpoint)", host))
			}
			root = "http://" + net.JoinHostPort(strings.Trim(host, "[]"), strconv.Itoa(port))
		}
		if root != "" {
			// loadcurve's client adds /completions or /chat/completions to its base URL: the
			// base is vLLM's URL less that ending, joined as vLLM joins them.
			full := root + path
			suffix := "/completions"
			if t.Endpoint == loadgen.Chat {
				suffix = "/chat/completions"
			}
			if !strings.HasSuffix(full, suffix) {
				return append(errs, fmt.Errorf("--endpoint %s: the path must end with %s for the %s API", path, suffix, t.Endpoint))
			}
			t.BaseURL = strings.TrimSuffix(full, suffix)
		}
	}
	if isSetHere(c, "served-model-name") {
		t.Model = c.String("served-model-name")
	}
	// vLLM: extra_body = {**sampling_params, **extra_body}: --extra-body's keys win.
	sampling := map[string]json.RawMessage{}
	for _, v := range vllmFlags {
		key, ok := samplingKeys[v.name]
		if !ok || !isSetHere(c, v.name) {
			continue
		}
		if v.name == "logprobs" && t.Endpoint == loadgen.Chat {
			fmt.Fprintln(c.App.ErrWriter, "loadcurve: --logprobs: no effect on chat requests (vLLM sends it in completions bodies only)")
			continue
		}
		sampling[key] = json.RawMessage(flagText(c, v))
	}
	if vllmRandomIgnoresEOS(c) {
		sampling["ignore_eos"] = json.RawMessage("true")
	}
	if len(sampling) > 0 {
		body, err := mergeBody(sampling, t.ExtraBody)
		if err != nil {
			errs = append(errs, fmt.Errorf("--extra-body: %w", err))
		} else {
			t.ExtraBody = body
		}
	}
	return errs
}

// vllmRandomIgnoresEOS: vLLM forces ignore_eos for its random dataset (the default one), so that
// every request generates its drawn output length; loadcurve does the same when the command line
// is vLLM's (a --dataset-name or a --backend given) and the dataset is random.
func vllmRandomIgnoresEOS(c *cli.Context) bool {
	if !isSetHere(c, "dataset-name") && !isSetHere(c, "backend") {
		return false
	}
	name := "random"
	if isSetHere(c, "dataset-name") {
		name = c.String("dataset-name")
	}
	return name == "random" && !c.IsSet("workload")
}

// mergeBody returns the JSON object of base's members with over's on top (over's keys win).
func mergeBody(base map[string]json.RawMessage, over json.RawMessage) (json.RawMessage, error) {
	m := maps.Clone(base)
	if len(strings.TrimSpace(string(over))) > 0 {
		var o map[string]json.RawMessage
		if err := json.Unmarshal(over, &o); err != nil {
			return nil, err
		}
		maps.Copy(m, o)
	}
	return json.Marshal(m)
}

// vllmDataset applies vLLM's dataset flags to the workload: it returns the workload spec to
// build (--workload's when no --dataset-name is given) and sets opts from vLLM's length flags.
func vllmDataset(c *cli.Context, opts *workloads.LoadOptions) (string, []error) {
	spec := c.String("workload")
	var errs []error
	if isSetHere(c, "input-len") && !c.IsSet("random-input-len") {
		opts.Synthetic.InputLen = c.Int("input-len")
	}
	if isSetHere(c, "output-len") && !c.IsSet("random-output-len") {
		opts.Synthetic.OutputLen = c.Int("output-len")
		opts.SharedPrefix.OutputLen = c.Int("output-len")
	}
	if isSetHere(c, "random-prefix-len") {
		if n := c.Int("random-prefix-len"); n < 0 || n > workloads.MaxSyntheticLen {
			errs = append(errs, fmt.Errorf("--random-prefix-len must be in [0, %d], got %d", workloads.MaxSyntheticLen, n))
		} else {
			opts.Synthetic.PrefixLen = n
		}
	}
	tok, err := vllmTokenizer(c)
	if err != nil {
		errs = append(errs, err)
	} else if tok != nil {
		opts.Synthetic.Tokenizer = tok
	}
	if !isSetHere(c, "dataset-name") {
		if isSetHere(c, "dataset-path") && !c.IsSet("workload") {
			errs = append(errs, fmt.Errorf("--dataset-path needs --dataset-name (sharegpt, custom or timed_trace), as in vLLM, or give loadcurve's --workload FILE"))
		}
		return spec, errs
	}
	name, path := c.String("dataset-name"), c.String("dataset-path")
	if c.IsSet("workload") {
		return spec, append(errs, fmt.Errorf("--dataset-name %s and --workload %s both choose the requests: give one of them", name, spec))
	}
	needPath := func() bool {
		if path == "" {
			errs = append(errs, fmt.Errorf("--dataset-name %s needs --dataset-path FILE (a local file)", name))
			return false
		}
		return true
	}
	noPath := func() {
		if path != "" {
			errs = append(errs, fmt.Errorf("--dataset-path cannot be used with --dataset-name %s (its requests are generated), as in vLLM", name))
		}
	}
	switch name {
	case "random":
		noPath()
		return workloads.KindSynthetic, errs
	case "prefix_repetition":
		noPath()
		sp := &opts.SharedPrefix
		sp.PrefixLen, sp.SuffixLen, sp.Groups, sp.OutputLen = 256, 256, 10, 128
		for flag, to := range map[string]*int{"prefix-repetition-prefix-len": &sp.PrefixLen, "prefix-repetition-suffix-len": &sp.SuffixLen,
			"prefix-repetition-num-prefixes": &sp.Groups, "prefix-repetition-output-len": &sp.OutputLen} {
			if isSetHere(c, flag) {
				*to = c.Int(flag)
			} else if flag == "prefix-repetition-output-len" && isSetHere(c, "output-len") {
				*to = c.Int("output-len")
			}
		}
		return workloads.KindSharedPrefix, errs
	case "sharegpt":
		if needPath() {
			return workloads.FormatShareGPT + ":" + path, errs
		}
	case "custom":
		if needPath() {
			return workloads.FormatJSONL + ":" + path, errs
		}
	case "timed_trace":
		for flag, want := range map[string]string{"timed-trace-chunk-hash-size": strconv.Itoa(workloads.MooncakeBlockSize),
			"timed-trace-sec-multiplier": "0.001", "timed-trace-label-timestamp": "timestamp", "timed-trace-label-input-length": "input_length",
			"timed-trace-label-output-length": "output_length", "timed-trace-label-hash-ids": "hash_ids"} {
			if isSetHere(c, flag) && flagText(c, *vllmFlagOf(flag)) != want {
				errs = append(errs, fmt.Errorf("--%s %s: loadcurve reads timed traces in the Mooncake format (timestamps in ms, %d-token hash blocks): want %s",
					flag, flagText(c, *vllmFlagOf(flag)), workloads.MooncakeBlockSize, want))
			}
		}
		if !isSetHere(c, "timed-trace-chunk-hash-size") {
			errs = append(errs, fmt.Errorf("--dataset-name timed_trace: vLLM's default --timed-trace-chunk-hash-size is 16 and loadcurve reads hash_ids as %d-token blocks (Mooncake's): give --timed-trace-chunk-hash-size %d if the trace's blocks are that size",
				workloads.MooncakeBlockSize, workloads.MooncakeBlockSize))
		}
		if needPath() && len(errs) == 0 {
			return "mooncake:" + path, errs
		}
	case "hf":
		errs = append(errs, fmt.Errorf("--dataset-name hf: not supported: it %s", whyNoHF))
	case "random-mm", "custom_image", "custom_audio":
		errs = append(errs, fmt.Errorf("--dataset-name %s: not supported: %s; use random, sharegpt or custom", name, whyMultimodal))
	case "random-rerank":
		errs = append(errs, fmt.Errorf("--dataset-name random-rerank: not supported: reranking is not measured by loadcurve; use random"))
	case "sonnet":
		errs = append(errs, fmt.Errorf("--dataset-name sonnet: not supported (vLLM deprecates it, and it needs a client-side chat template): use random, or save the prompts as JSONL for --dataset-name custom"))
	case "burstgpt":
		errs = append(errs, fmt.Errorf("--dataset-name burstgpt: not supported: BurstGPT's CSV is not read yet; replay an Azure trace with --workload azure:FILE.csv, or give the lengths as JSONL"))
	case "spec_bench", "speed_bench":
		errs = append(errs, fmt.Errorf("--dataset-name %s: not supported: its files are not read yet; save the prompts as JSONL ({\"prompt\": …} a line) for --dataset-name custom", name))
	default:
		known := []string{"random", "sharegpt", "custom", "prefix_repetition", "timed_trace", "hf", "burstgpt", "sonnet", "random-mm", "random-rerank", "custom_image", "custom_audio", "spec_bench", "speed_bench"}
		if s := nearest.Names(name, known); len(s) > 0 {
			errs = append(errs, fmt.Errorf("--dataset-name %q: not one of vLLM's datasets; did you mean %s?", name, nearest.Or(s)))
		} else {
			errs = append(errs, fmt.Errorf("--dataset-name %q: not one of vLLM's datasets (%s)", name, strings.Join(known, ", ")))
		}
	}
	return spec, errs
}

// vllmSource completes a source read from a dataset file with vLLM's output-length flags
// (--sharegpt-output-len, --custom-output-len, --output-len) and, with --tokenizer, counts its
// prompts in the model's tokens.
func vllmSource(c *cli.Context, src *workloads.Source) []error {
	if src == nil || src.Generated() || src.Trace != nil {
		return nil
	}
	var errs []error
	name := ""
	if isSetHere(c, "dataset-name") {
		name = c.String("dataset-name")
	}
	out := 0
	switch {
	case name == "sharegpt" && isSetHere(c, "sharegpt-output-len"):
		out = c.Int("sharegpt-output-len")
	case name == "custom" && isSetHere(c, "custom-output-len"):
		out = c.Int("custom-output-len")
	case name == "custom":
		out = 256 // vLLM's default --custom-output-len
	}
	if out == 0 && (name == "sharegpt" || name == "custom") && isSetHere(c, "output-len") {
		out = c.Int("output-len")
	}
	switch {
	case out == -1 && name == "custom":
		// each row's own length
	case out < 1 && out != 0:
		errs = append(errs, fmt.Errorf("the output length must be >= 1 (or -1 with --custom-output-len: each row's own), got %d", out))
	case out > workloads.MaxSyntheticLen:
		errs = append(errs, fmt.Errorf("the output length must be at most %d, got %d", workloads.MaxSyntheticLen, out))
	case out > 0:
		src.SetMaxTokens(out)
	}
	tok, err := vllmTokenizer(c)
	if err == nil && tok != nil {
		if err := src.CountInputTokens(tok.Count); err != nil {
			errs = append(errs, fmt.Errorf("--tokenizer: %w", err))
		}
	}
	return errs
}

// applyVLLMCompat applies the vLLM flags that concern the run as a whole: the refusals and the
// flags without effect (stated once), --num-warmups and --disable-tqdm.
func applyVLLMCompat(c *cli.Context, lc *loadCommand) []error {
	errs := vllmRefusals(c)
	if isSetHere(c, "num-warmups") {
		n := c.Int("num-warmups")
		if n < 0 || n > maxWarmups {
			errs = append(errs, fmt.Errorf("--num-warmups must be in [0, %d], got %d", maxWarmups, n))
		}
		lc.target.Warmups = n
	}
	if isSetHere(c, "disable-tqdm") && c.Bool("disable-tqdm") {
		lc.progress = false
	}
	return errs
}

// tokenizers holds the tokenizers loaded, by path: run and sweep read --tokenizer in two places
// (the generated prompts and a dataset's counts), and a file is read once.
var tokenizers sync.Map // path → *tokens.Tokenizer

// vllmTokenizer loads --tokenizer (nil without it).
func vllmTokenizer(c *cli.Context) (*tokens.Tokenizer, error) {
	if !isSetHere(c, "tokenizer") {
		return nil, nil
	}
	path := c.String("tokenizer")
	if v, ok := tokenizers.Load(path); ok {
		return v.(*tokens.Tokenizer), nil
	}
	if path == "" {
		return nil, fmt.Errorf("--tokenizer: empty: give a tokenizer.json, or a model directory holding one")
	}
	if _, err := os.Stat(path); err != nil && !strings.ContainsAny(path, `/\`) {
		return nil, fmt.Errorf("--tokenizer %s: no such file or directory; %s (save the model's tokenizer.json and give its path)", path, whyNoTokenizer)
	}
	tk, err := tokens.Load(path)
	if err != nil {
		return nil, fmt.Errorf("--tokenizer: %w", err)
	}
	tokenizers.Store(path, tk)
	return tk, nil
}

// withVLLMFlags completes a command's flags (run, sweep) with the vLLM flags it lacks.
func withVLLMFlags(command string, flags []cli.Flag) []cli.Flag {
	return append(flags, vllmCompatFlags(command, flags)...)
}
