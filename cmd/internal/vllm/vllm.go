// Package vllm is loadcurve's side of vLLM's `vllm bench serve` command line, which run and sweep
// accept: every flag of vLLM's benchmark client (vllm/benchmarks/serve.py, add_cli_args, with its
// dataset parser) is one of loadcurve's own (Native), honoured here with vLLM's meaning, accepted
// and stated once as having no effect, or refused with one line saying why and what to do
// instead. The table (Flags) is the one place that says which; Target, Dataset and Source apply
// the honoured ones to what the command builds, Refusals the rest, and Tap keeps the per-request
// arrays of vLLM's result file. The README's table lists every flag (cmd's
// TestVLLMFlagsAreAllAccepted holds the two together). It speaks vLLM's flags, so it lives with
// the command: WithFlags makes the ones a command lacks its flags, and the rules read the command
// line through Args (Given answers for a urfave/cli command; ReadRun reads what concerns the
// run as a whole).
package vllm

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/loadcurve/loadcurve/cmd/internal/nearest"
	"github.com/loadcurve/loadcurve/loadgen"
	"github.com/loadcurve/loadcurve/measure/tokens"
	"github.com/loadcurve/loadcurve/workloads"
)

// Kind is what loadcurve does with a vLLM flag.
type Kind int

const (
	Native   Kind = iota // a loadcurve flag of the same name and meaning
	Honoured             // read by this package with vLLM's meaning
	NoEffect             // accepted; said once to have no effect here
	Refused              // refused, saying why and what to do instead
)

// Flag is one flag of vLLM's benchmark client.
type Flag struct {
	Name string
	Kind Kind
	// Type is the flag's value: bool, string, int, float, or list (several values after the
	// flag).
	Type string
	// Note is what it does here (Honoured), why it has none (NoEffect), or why it is refused and
	// what to do instead (Refused).
	Note string
	// Allowed, for a refused flag, is the value that is accepted (vLLM's default, which changes
	// nothing): --random-batch-size 1, --probe-request-rate 0.
	Allowed string
	// Only names the one command the flag is native to (run); on the other it is refused with
	// OnlyWhy.
	Only, OnlyWhy string
}

// Args is the command line as given, read by flag name: Given reports whether the command has
// the flag and it was given (on the command line or by a scenario); the others return its
// value (the zero value for a flag the command lacks).
type Args interface {
	Given(name string) bool
	String(name string) string
	Int(name string) int
	Float64(name string) float64
	Bool(name string) bool
}

const (
	whyNoHF       = "needs a dataset from the Hugging Face Hub, and loadcurve downloads nothing: save the rows as JSONL ({\"prompt\": …, \"max_tokens\": …} a line) and pass --workload FILE.jsonl"
	whyMultimodal = "loadcurve sends text only (no images, video or audio)"
	whyNoTemplate = "loadcurve applies no chat template on the client: chat requests carry messages and the server applies its own template, completions send the prompt as it is (vLLM's --skip-chat-template)"
	whyRunOnly    = "vLLM's result file is one run's: use loadcurve run (a sweep writes curve.json and one summary per tier)"
)

// Flags is vLLM's benchmark client's flags, in the order of its --help.
var Flags = []Flag{
	// Connection.
	{Name: "backend", Kind: Honoured, Type: "string", Note: "vllm and openai send completions (/completions), openai-chat chat (/chat/completions), openai-embeddings embeddings (/embeddings); the other embeddings, pooling, rerank and audio backends are refused"},
	{Name: "base-url", Kind: Native, Type: "string", Note: "with --endpoint PATH, --host/--port or --backend, vLLM's form: the server's root, the URL is base-url + endpoint; otherwise loadcurve's, the API root (http://host:8000/v1)"},
	{Name: "host", Kind: Honoured, Type: "string", Note: "with --port: the target is http://HOST:PORT + --endpoint (vLLM's defaults 127.0.0.1, 8000, /v1/completions); --base-url wins over both"},
	{Name: "port", Kind: Honoured, Type: "int", Note: "see --host"},
	{Name: "endpoint", Kind: Native, Type: "string", Note: "loadcurve's endpoint kind (chat, completions, responses, embeddings), or vLLM's path (/v1/completions): the path is added to the base as it is, and its ending (chat/completions, completions, responses or embeddings) chooses the API"},
	{Name: "header", Kind: Native, Type: "list"},
	{Name: "insecure", Kind: Native, Type: "bool"},
	{Name: "ready-check-timeout-sec", Kind: Native, Type: "int"},
	// Model and tokenizer.
	{Name: "model", Kind: Native, Type: "string"},
	{Name: "served-model-name", Kind: Honoured, Type: "string", Note: "the model name sent in every request (--model, when also given, names it in the results)"},
	{Name: "tokenizer", Kind: Honoured, Type: "string", Note: "a tokenizer.json, a model directory holding one, or a Hugging Face model id (ORG/NAME) found in the local cache (HF_HUB_CACHE, HF_HOME, ~/.cache/huggingface/hub), read offline; without it, --model's tokenizer when the cache has it, as in vLLM: synthetic prompts are sized, and dataset prompts counted, in its tokens, everything loadcurve adds included"},
	{Name: "tokenizer-mode", Kind: NoEffect, Type: "string", Note: "a tokenizer.json is read one way, by a Go tokenizer; there is no slow, mistral or custom mode"},
	{Name: "trust-remote-code", Kind: NoEffect, Type: "bool", Note: "loadcurve runs no code from a model or data set repository"},
	{Name: "skip-tokenizer-init", Kind: NoEffect, Type: "bool", Note: "without --tokenizer, loadcurve loads none and counts tokens from the server's usage (vLLM's --skip-tokenizer-init, but the latency statistics are kept)"},
	{Name: "lora-modules", Kind: Refused, Type: "list", Note: "loadcurve sends one model name: benchmark one adapter at a time with --served-model-name ADAPTER"},
	{Name: "lora-assignment", Kind: NoEffect, Type: "string", Note: "it applies to --lora-modules, which loadcurve refuses"},
	// Datasets.
	{Name: "seed", Kind: Native, Type: "int"},
	{Name: "num-prompts", Kind: Native, Type: "int", Note: "= --num-requests"},
	{Name: "dataset-name", Kind: Honoured, Type: "string", Note: "random (synthetic), sharegpt and custom (--dataset-path FILE), prefix_repetition (shared-prefix) and timed_trace (a Mooncake-format trace with 512-token blocks) are built locally; hf needs the internet and is refused, and so are the multimodal, rerank, sonnet, burstgpt, spec_bench and speed_bench sets, each with what to do instead"},
	{Name: "dataset-path", Kind: Honoured, Type: "string", Note: "the local file of sharegpt, custom or timed_trace (refused with random and prefix_repetition, as in vLLM)"},
	{Name: "no-stream", Kind: NoEffect, Type: "bool", Note: "it applies to Hugging Face datasets, which loadcurve does not load"},
	{Name: "no-oversample", Kind: NoEffect, Type: "bool", Note: "a dataset with fewer rows than --num-prompts is reused in order, and the run says so; cut the run to the file with --num-prompts"},
	{Name: "skip-chat-template", Kind: NoEffect, Type: "bool", Note: whyNoTemplate},
	{Name: "enable-multimodal-chat", Kind: Refused, Type: "bool", Note: whyMultimodal},
	{Name: "disable-shuffle", Kind: NoEffect, Type: "bool", Note: "loadcurve never shuffles a dataset: its requests are sent in file order"},
	{Name: "input-len", Kind: Honoured, Type: "int", Note: "= --random-input-len"},
	{Name: "output-len", Kind: Honoured, Type: "int", Note: "the output length of random, sharegpt, custom and prefix_repetition (each one's own flag wins)"},
	{Name: "custom-output-len", Kind: Honoured, Type: "int", Note: "custom: max_tokens of every row (vLLM's default 256); -1 keeps each row's output_tokens"},
	{Name: "custom-ensure-client-side-data", Kind: NoEffect, Type: "bool", Note: "it applies to images, which loadcurve does not send"},
	{Name: "spec-bench-output-len", Kind: NoEffect, Type: "int", Note: "it applies to spec_bench, which loadcurve refuses"},
	{Name: "spec-bench-category", Kind: NoEffect, Type: "string", Note: "it applies to spec_bench, which loadcurve refuses"},
	{Name: "sonnet-input-len", Kind: NoEffect, Type: "int", Note: "it applies to sonnet, which loadcurve refuses"},
	{Name: "sonnet-output-len", Kind: NoEffect, Type: "int", Note: "it applies to sonnet, which loadcurve refuses"},
	{Name: "sonnet-prefix-len", Kind: NoEffect, Type: "int", Note: "it applies to sonnet, which loadcurve refuses"},
	{Name: "sharegpt-output-len", Kind: Honoured, Type: "int", Note: "sharegpt: max_tokens of every request instead of the reply's length"},
	{Name: "timed-trace-chunk-hash-size", Kind: Honoured, Type: "int", Note: "must be 512, the block size loadcurve reads hash_ids with (refused otherwise)"},
	{Name: "timed-trace-sec-multiplier", Kind: Honoured, Type: "float", Note: "must be 0.001 (timestamps in milliseconds, as loadcurve reads them); to replay faster or slower use --trace-time-scale"},
	{Name: "timed-trace-label-timestamp", Kind: Honoured, Type: "string", Note: "must be timestamp (loadcurve reads the Mooncake keys)"},
	{Name: "timed-trace-label-input-length", Kind: Honoured, Type: "string", Note: "must be input_length"},
	{Name: "timed-trace-label-output-length", Kind: Honoured, Type: "string", Note: "must be output_length"},
	{Name: "timed-trace-label-hash-ids", Kind: Honoured, Type: "string", Note: "must be hash_ids"},
	{Name: "blazedit-min-distance", Kind: NoEffect, Type: "float", Note: "it applies to a Hugging Face dataset, which loadcurve does not load"},
	{Name: "blazedit-max-distance", Kind: NoEffect, Type: "float", Note: "it applies to a Hugging Face dataset, which loadcurve does not load"},
	{Name: "asr-max-audio-len-sec", Kind: NoEffect, Type: "float", Note: "it applies to audio, which loadcurve does not send"},
	{Name: "asr-min-audio-len-sec", Kind: NoEffect, Type: "float", Note: "it applies to audio, which loadcurve does not send"},
	{Name: "random-input-len", Kind: Native, Type: "int"},
	{Name: "random-output-len", Kind: Native, Type: "int"},
	{Name: "random-range-ratio", Kind: Native, Type: "float", Note: "a number; vLLM's JSON form ({\"input\":…,\"output\":…}) is not read"},
	{Name: "random-prefix-len", Kind: Honoured, Type: "int", Note: "random: a prefix of this many tokens shared by every request, before its own random part"},
	{Name: "random-batch-size", Kind: Refused, Type: "int", Allowed: "1", Note: "several prompts a request is for embeddings and reranking, which loadcurve does not send: omit it (1)"},
	{Name: "no-reranker", Kind: NoEffect, Type: "bool", Note: "it applies to random-rerank, which loadcurve refuses"},
	{Name: "random-mm-base-items-per-request", Kind: NoEffect, Type: "int", Note: "it applies to random-mm, which loadcurve refuses"},
	{Name: "random-mm-num-mm-items-range-ratio", Kind: NoEffect, Type: "float", Note: "it applies to random-mm, which loadcurve refuses"},
	{Name: "random-mm-limit-mm-per-prompt", Kind: NoEffect, Type: "string", Note: "it applies to random-mm, which loadcurve refuses"},
	{Name: "random-mm-bucket-config", Kind: NoEffect, Type: "string", Note: "it applies to random-mm, which loadcurve refuses"},
	{Name: "hf-subset", Kind: NoEffect, Type: "string", Note: "it applies to --dataset-name hf, which loadcurve refuses"},
	{Name: "hf-split", Kind: NoEffect, Type: "string", Note: "it applies to --dataset-name hf, which loadcurve refuses"},
	{Name: "hf-name", Kind: NoEffect, Type: "string", Note: "it applies to --dataset-name hf, which loadcurve refuses"},
	{Name: "hf-output-len", Kind: NoEffect, Type: "int", Note: "it applies to --dataset-name hf, which loadcurve refuses"},
	{Name: "bfcl-categories", Kind: NoEffect, Type: "string", Note: "it applies to a Hugging Face dataset, which loadcurve does not load"},
	{Name: "prefix-repetition-prefix-len", Kind: Honoured, Type: "int", Note: "prefix_repetition: tokens of each shared prefix (vLLM's default 256)"},
	{Name: "prefix-repetition-suffix-len", Kind: Honoured, Type: "int", Note: "prefix_repetition: tokens of each request's own suffix (256)"},
	{Name: "prefix-repetition-num-prefixes", Kind: Honoured, Type: "int", Note: "prefix_repetition: distinct prefixes (10); request i uses prefix i mod N"},
	{Name: "prefix-repetition-output-len", Kind: Honoured, Type: "int", Note: "prefix_repetition: output tokens (128)"},
	{Name: "speed-bench-dataset-subset", Kind: NoEffect, Type: "string", Note: "it applies to speed_bench, which loadcurve refuses"},
	{Name: "speed-bench-output-len", Kind: NoEffect, Type: "int", Note: "it applies to speed_bench, which loadcurve refuses"},
	{Name: "speed-bench-category", Kind: NoEffect, Type: "string", Note: "it applies to speed_bench, which loadcurve refuses"},
	{Name: "chat-template-kwargs", Kind: NoEffect, Type: "string", Note: whyNoTemplate},
	// Load.
	{Name: "request-rate", Kind: Native, Type: "string", Only: "run", OnlyWhy: "a sweep chooses its rates; did you mean --request-rates? (--request-rates R runs one tier at R)"},
	{Name: "burstiness", Kind: Native, Type: "string"},
	{Name: "max-concurrency", Kind: Native, Type: "int"},
	{Name: "num-warmups", Kind: Honoured, Type: "int", Note: "sends that many copies of the first request before the run, unmeasured and not recorded (within --max-concurrency)"},
	{Name: "ramp-up-strategy", Kind: Native, Type: "string", Only: "run", OnlyWhy: "a sweep's tiers each run at one rate: ramp within one run with loadcurve run"},
	{Name: "ramp-up-start-rps", Kind: Native, Type: "float", Only: "run", OnlyWhy: "a sweep's tiers each run at one rate: ramp within one run with loadcurve run"},
	{Name: "ramp-up-end-rps", Kind: Native, Type: "float", Only: "run", OnlyWhy: "a sweep's tiers each run at one rate: ramp within one run with loadcurve run"},
	{Name: "self-timed", Kind: NoEffect, Type: "bool", Note: "a trace (timed_trace, --workload mooncake:FILE) is always its own schedule"},
	{Name: "no-self-timed", Kind: Refused, Type: "bool", Note: "loadcurve replays a trace at its own timestamps: to change its pace use --trace-time-scale, to send its requests on a rate's schedule save them as JSONL"},
	{Name: "probe-request-rate", Kind: Refused, Type: "float", Allowed: "0", Note: "loadcurve sends no probe requests beside the load: run a second loadcurve run at that rate against the same target"},
	{Name: "request-id-prefix", Kind: Native, Type: "string"},
	// Output.
	{Name: "save-result", Kind: Native, Type: "bool", Only: "run", OnlyWhy: whyRunOnly},
	{Name: "save-detailed", Kind: Honoured, Type: "bool", Only: "run", OnlyWhy: whyRunOnly, Note: "the result file also holds vLLM's seven per-request arrays (input_lens, output_lens, ttfts, itls, start_times, generated_texts, errors; generated_texts are empty strings: loadcurve keeps no response text)"},
	{Name: "append-result", Kind: Honoured, Type: "bool", Only: "run", OnlyWhy: whyRunOnly, Note: "appends the result to the file as one more line (JSON Lines), as vLLM; implies --save-result"},
	{Name: "result-dir", Kind: Native, Type: "string", Only: "run", OnlyWhy: whyRunOnly},
	{Name: "result-filename", Kind: Native, Type: "string", Only: "run", OnlyWhy: whyRunOnly},
	{Name: "label", Kind: Native, Type: "string"},
	{Name: "metadata", Kind: Native, Type: "list"},
	{Name: "percentile-metrics", Kind: Native, Type: "string"},
	{Name: "metric-percentiles", Kind: Native, Type: "string"},
	{Name: "goodput", Kind: Native, Type: "list"},
	{Name: "plot-timeline", Kind: NoEffect, Type: "bool", Note: "--out writes loadcurve's own plots and report.html"},
	{Name: "timeline-itl-thresholds", Kind: NoEffect, Type: "string", Note: "it applies to --plot-timeline"},
	{Name: "plot-dataset-stats", Kind: NoEffect, Type: "bool", Note: "--out writes loadcurve's own plots and report.html; 'loadcurve workload' writes the request set"},
	{Name: "disable-tqdm", Kind: Honoured, Type: "bool", Note: "= --quiet: no progress display"},
	// Request body and sampling.
	{Name: "temperature", Kind: Honoured, Type: "float", Note: "sent as \"temperature\" in every request body"},
	{Name: "top-p", Kind: Honoured, Type: "float", Note: "\"top_p\""},
	{Name: "top-k", Kind: Honoured, Type: "int", Note: "\"top_k\""},
	{Name: "min-p", Kind: Honoured, Type: "float", Note: "\"min_p\""},
	{Name: "frequency-penalty", Kind: Honoured, Type: "float", Note: "\"frequency_penalty\""},
	{Name: "presence-penalty", Kind: Honoured, Type: "float", Note: "\"presence_penalty\""},
	{Name: "repetition-penalty", Kind: Honoured, Type: "float", Note: "\"repetition_penalty\""},
	{Name: "extra-body", Kind: Native, Type: "string", Note: "its keys win over the sampling flags', as in vLLM"},
	{Name: "ignore-eos", Kind: Native, Type: "bool"},
	{Name: "logprobs", Kind: Honoured, Type: "int", Note: "\"logprobs\" in completions bodies (chat bodies carry none, as in vLLM)"},
	{Name: "use-beam-search", Kind: NoEffect, Type: "bool", Note: "vLLM's client never reads it either"},
	{Name: "profile", Kind: Refused, Type: "bool", Note: "loadcurve does not drive the server's profiler: POST /start_profile and /stop_profile to the server yourself around the run"},
}

// SamplingKeys maps vLLM's sampling flags to their body keys.
var SamplingKeys = map[string]string{"temperature": "temperature", "top-p": "top_p", "top-k": "top_k", "min-p": "min_p",
	"frequency-penalty": "frequency_penalty", "presence-penalty": "presence_penalty", "repetition-penalty": "repetition_penalty",
	"logprobs": "logprobs"}

// MaxWarmups bounds --num-warmups.
const MaxWarmups = 100000

// Lookup returns the flag of vLLM's client called name (nil if there is none).
func Lookup(name string) *Flag {
	for i := range Flags {
		if Flags[i].Name == name {
			return &Flags[i]
		}
	}
	return nil
}

// Refusals returns a line for every vLLM flag given that the command refuses, and states
// once on stderr every one given that has no effect here.
func Refusals(a Args, command string, notes io.Writer) []error {
	var errs []error
	for _, v := range Flags {
		if !a.Given(v.Name) {
			continue
		}
		switch {
		case v.Only != "" && v.Only != command:
			errs = append(errs, fmt.Errorf("--%s: not in loadcurve %s: %s", v.Name, command, v.OnlyWhy))
		case v.Kind == Refused && v.Allowed != "" && Text(a, v) == v.Allowed:
			fmt.Fprintf(notes, "loadcurve: --%s %s: vLLM's default, no effect\n", v.Name, v.Allowed)
		case v.Kind == Refused:
			errs = append(errs, fmt.Errorf("--%s: not supported: %s", v.Name, v.Note))
		case v.Kind == NoEffect:
			fmt.Fprintf(notes, "loadcurve: --%s: accepted, no effect here: %s\n", v.Name, v.Note)
		}
	}
	return errs
}

// Text is a flag's value as text (numbers as strconv writes them).
func Text(a Args, v Flag) string {
	switch v.Type {
	case "int":
		return strconv.Itoa(a.Int(v.Name))
	case "float":
		return strconv.FormatFloat(a.Float64(v.Name), 'g', -1, 64)
	case "bool":
		return strconv.FormatBool(a.Bool(v.Name))
	}
	return a.String(v.Name)
}

// backends are vLLM's --backend values: the API each speaks here, or why it is refused.
var backends = map[string]struct {
	endpoint loadgen.Endpoint
	refused  string
}{
	"vllm":                      {endpoint: loadgen.Completions},
	"openai":                    {endpoint: loadgen.Completions},
	"openai-chat":               {endpoint: loadgen.Chat},
	"openai-audio":              {refused: "speech transcription: " + whyMultimodal},
	"openai-embeddings":         {endpoint: loadgen.Embeddings},
	"openai-embeddings-chat":    {refused: "embeddings of chat messages: loadcurve sends a text input (use openai-embeddings)"},
	"openai-embeddings-clip":    {refused: "image embeddings: " + whyMultimodal},
	"openai-embeddings-vlm2vec": {refused: "image embeddings: " + whyMultimodal},
	"infinity-embeddings":       {refused: "Infinity's request form is not sent by loadcurve (use openai-embeddings against an OpenAI-compatible /v1/embeddings)"},
	"infinity-embeddings-clip":  {refused: "image embeddings: " + whyMultimodal},
	"vllm-pooling":              {refused: "pooling is not measured by loadcurve (it measures streamed generation)"},
	"vllm-rerank":               {refused: "reranking is not measured by loadcurve (it measures streamed generation)"},
}

// backendOf is vLLM's backend for each endpoint kind it has one for, as its errors suggest it.
var backendOf = map[loadgen.Endpoint]string{loadgen.Completions: "openai", loadgen.Chat: "openai-chat", loadgen.Embeddings: "openai-embeddings"}

// routes lists the endpoint kinds' routes for a message: "/chat/completions, /completions, …".
func routes() string {
	var r []string
	for _, k := range loadgen.Kinds() {
		r = append(r, k.Route())
	}
	return strings.Join(r, ", ")
}

// Target applies vLLM's connection, model and sampling flags to t (readTarget calls it
// before validating t): the URL from --base-url/--host/--port and --endpoint as vLLM forms it
// (base + path, joined as they are), the API from --backend or the path's ending, the model
// from --served-model-name, and the sampling flags merged under --extra-body into every body.
func Target(a Args, t *loadgen.Target, notes io.Writer) []error {
	ep := a.String("endpoint")
	path := ""
	if strings.HasPrefix(ep, "/") {
		path = ep
	}
	backend, errs, ok := targetBackend(a, t, ep, path)
	if !ok {
		return errs
	}
	urlForm := path != "" || a.Given("host") || a.Given("port") || backend != ""
	path, err := targetPath(a, t, backend, path, urlForm)
	if err != nil {
		return append(errs, err)
	}
	if urlForm {
		more, fatal := targetURL(a, t, path)
		if errs = append(errs, more...); fatal {
			return errs
		}
	}
	if a.Given("served-model-name") {
		t.Model = a.String("served-model-name")
	}
	return append(errs, targetSampling(a, t, notes)...)
}

// targetBackend applies --backend: the API its requests are sent to. It returns the backend
// given ("" for none) and what is wrong with it; ok is false when nothing else can be judged.
func targetBackend(a Args, t *loadgen.Target, ep, path string) (backend string, errs []error, ok bool) {
	if !a.Given("backend") {
		return "", nil, true
	}
	backend = a.String("backend")
	b, known := backends[backend]
	switch {
	case !known:
		names := slices.Sorted(maps.Keys(backends))
		if s := nearest.Names(backend, names); len(s) > 0 {
			return backend, []error{fmt.Errorf("--backend %q: not one of vLLM's backends; did you mean %s?", backend, nearest.Or(s))}, false
		}
		return backend, []error{fmt.Errorf("--backend %q: not one of vLLM's backends (%s)", backend, strings.Join(names, ", "))}, false
	case b.refused != "":
		return backend, []error{fmt.Errorf("--backend %s: not supported: %s; use openai (completions), openai-chat (chat) or openai-embeddings (embeddings)", backend, b.refused)}, false
	}
	t.Endpoint = b.endpoint
	if a.Given("endpoint") && path == "" && !strings.EqualFold(ep, t.Endpoint.String()) {
		errs = append(errs, fmt.Errorf("--backend %s sends %s requests and --endpoint %s asks for %s: give one of them", backend, t.Endpoint, ep, ep))
	}
	return backend, errs, true
}

// targetPath applies --endpoint's path, or vLLM's default one in the URL form (a path, --host,
// --port or --backend given): the API it names, checked against --backend's. It returns the
// path the URL ends with.
func targetPath(a Args, t *loadgen.Target, backend, path string, urlForm bool) (string, error) {
	switch {
	case path != "":
		// vLLM's request functions check the URL's ending (chat/completions for the chat API,
		// completions for the completions API, embeddings for openai-embeddings); the endpoint
		// kinds' routes say which API a path's ending is.
		kind, ok := loadgen.EndpointOfRoute(path)
		switch {
		case ok:
		case strings.HasSuffix(path, "completions"): // vLLM's own check, without the slash
			kind = loadgen.Completions
		default:
			return "", fmt.Errorf("--endpoint %s: the path must end with the route of one of loadcurve's APIs (%s), e.g. /v1/completions", path, routes())
		}
		if backend != "" && kind != t.Endpoint {
			hint := ""
			if b := backendOf[kind]; b != "" {
				hint = " (or --backend " + b + ")"
			}
			return "", fmt.Errorf("--backend %s sends %s requests, but --endpoint %s is the %s API: give --endpoint /v1%s%s",
				backend, t.Endpoint, path, kind, t.Endpoint.Route(), hint)
		}
		t.Endpoint = kind
	case urlForm:
		// vLLM's default endpoint is /v1/completions, whatever the backend.
		if t.Endpoint != loadgen.Completions && backend != "" {
			return "", fmt.Errorf("--backend %s needs --endpoint /v1%s: vLLM's default endpoint, /v1/completions, is not the %s API", backend, t.Endpoint.Route(), t.Endpoint)
		}
		if backend == "" && !a.Given("endpoint") {
			t.Endpoint = loadgen.Completions // vLLM's default backend, openai
		}
		path = "/v1" + t.Endpoint.Route()
	}
	return path, nil
}

// targetURL sets t's base URL from --base-url, or --host and --port, and the path, as vLLM
// joins them. fatal is true when the URL cannot be formed.
func targetURL(a Args, t *loadgen.Target, path string) (errs []error, fatal bool) {
	root := a.String("base-url")
	if root == "" && (a.Given("host") || a.Given("port")) {
		host := "127.0.0.1"
		if a.Given("host") {
			host = a.String("host")
		}
		port := 8000
		if a.Given("port") {
			port = a.Int("port")
		}
		if port < 1 || port > 65535 {
			errs = append(errs, fmt.Errorf("--port must be in [1, 65535], got %d", port))
		}
		if host == "" || strings.ContainsAny(host, "/?#@ ") {
			errs = append(errs, fmt.Errorf("--host %q: want a host name or address, e.g. 127.0.0.1 (the scheme and path come from --endpoint)", host))
		}
		root = "http://" + net.JoinHostPort(strings.Trim(host, "[]"), strconv.Itoa(port))
	}
	if root == "" {
		return errs, false
	}
	// loadcurve's client adds its kind's route (/completions, /chat/completions, …) to its base
	// URL: the base is vLLM's URL less that ending, joined as vLLM joins them.
	full, suffix := root+path, t.Endpoint.Route()
	if !strings.HasSuffix(full, suffix) {
		return append(errs, fmt.Errorf("--endpoint %s: the path must end with %s for the %s API", path, suffix, t.Endpoint)), true
	}
	t.BaseURL = strings.TrimSuffix(full, suffix)
	return errs, false
}

// targetSampling merges the sampling flags given into t's extra body, under --extra-body's keys
// as vLLM does (extra_body = {**sampling_params, **extra_body}).
func targetSampling(a Args, t *loadgen.Target, notes io.Writer) []error {
	sampling := map[string]json.RawMessage{}
	for _, v := range Flags {
		key, ok := SamplingKeys[v.Name]
		if !ok || !a.Given(v.Name) {
			continue
		}
		if v.Name == "logprobs" && t.Endpoint == loadgen.Chat {
			fmt.Fprintln(notes, "loadcurve: --logprobs: no effect on chat requests (vLLM sends it in completions bodies only)")
			continue
		}
		sampling[key] = json.RawMessage(Text(a, v))
	}
	if randomIgnoresEOS(a) {
		sampling["ignore_eos"] = json.RawMessage("true")
	}
	if len(sampling) == 0 {
		return nil
	}
	body, err := mergeBody(sampling, t.ExtraBody)
	if err != nil {
		return []error{fmt.Errorf("--extra-body: %w", err)}
	}
	t.ExtraBody = body
	return nil
}

// randomIgnoresEOS: vLLM forces ignore_eos for its random dataset (the default one), so that
// every request generates its drawn output length; loadcurve does the same when the command line
// is vLLM's (a --dataset-name or a --backend given) and the dataset is random.
func randomIgnoresEOS(a Args) bool {
	if !a.Given("dataset-name") && !a.Given("backend") {
		return false
	}
	name := "random"
	if a.Given("dataset-name") {
		name = a.String("dataset-name")
	}
	return name == "random" && !a.Given("workload")
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

// Dataset applies vLLM's dataset flags to the workload: it returns the workload spec to
// build (--workload's when no --dataset-name is given) and sets opts from vLLM's length flags
// and the tokenizer (Tokenizer), whose note it writes to notes.
func Dataset(a Args, opts *workloads.LoadOptions, notes io.Writer) (string, []error) {
	spec := a.String("workload")
	errs := datasetLengths(a, opts)
	tok, note, err := Tokenizer(a)
	if err != nil {
		errs = append(errs, err)
	} else if tok != nil {
		opts.Tokenizer = tok
	}
	if note != "" && notes != nil {
		fmt.Fprintln(notes, note)
	}
	if !a.Given("dataset-name") {
		if a.Given("dataset-path") && !a.Given("workload") {
			errs = append(errs, fmt.Errorf("--dataset-path needs --dataset-name (sharegpt, custom or timed_trace), as in vLLM, or give loadcurve's --workload FILE"))
		}
		return spec, errs
	}
	if a.Given("workload") {
		return spec, append(errs, fmt.Errorf("--dataset-name %s and --workload %s both choose the requests: give one of them", a.String("dataset-name"), spec))
	}
	return datasetNamed(a, opts, spec, errs)
}

// datasetLengths sets opts from vLLM's length flags: --input-len and --output-len where
// loadcurve's own are not given, --random-prefix-len.
func datasetLengths(a Args, opts *workloads.LoadOptions) []error {
	if a.Given("input-len") && !a.Given("random-input-len") {
		opts.Synthetic.InputLen = a.Int("input-len")
	}
	if a.Given("output-len") && !a.Given("random-output-len") {
		opts.Synthetic.OutputLen = a.Int("output-len")
		opts.SharedPrefix.OutputLen = a.Int("output-len")
	}
	if a.Given("random-prefix-len") {
		n := a.Int("random-prefix-len")
		if n < 0 || n > workloads.MaxSyntheticLen {
			return []error{fmt.Errorf("--random-prefix-len must be in [0, %d], got %d", workloads.MaxSyntheticLen, n)}
		}
		opts.Synthetic.PrefixLen = n
	}
	return nil
}

// datasetNamed is the workload spec of --dataset-name (with --dataset-path), or spec with errs
// and what is wrong with it added; errs are the problems found so far (a timed trace is read
// only without any).
func datasetNamed(a Args, opts *workloads.LoadOptions, spec string, errs []error) (string, []error) {
	name, path := a.String("dataset-name"), a.String("dataset-path")
	needPath := func() bool {
		if path == "" {
			errs = append(errs, fmt.Errorf("--dataset-name %s needs --dataset-path FILE (a local file)", name))
			return false
		}
		return true
	}
	generated := func(kind string) (string, []error) {
		if path != "" {
			errs = append(errs, fmt.Errorf("--dataset-path cannot be used with --dataset-name %s (its requests are generated), as in vLLM", name))
		}
		return kind, errs
	}
	switch name {
	case "random":
		return generated(workloads.KindSynthetic)
	case "prefix_repetition":
		prefixRepetition(a, &opts.SharedPrefix)
		return generated(workloads.KindSharedPrefix)
	case "sharegpt":
		if needPath() {
			return workloads.FormatShareGPT + ":" + path, errs
		}
	case "custom":
		if needPath() {
			return workloads.FormatJSONL + ":" + path, errs
		}
	case "timed_trace":
		errs = append(errs, timedTraceRefusals(a)...)
		if needPath() && len(errs) == 0 {
			return "mooncake:" + path, errs
		}
	default:
		errs = append(errs, datasetRefused(name))
	}
	return spec, errs
}

// prefixRepetition sets sp from vLLM's prefix_repetition flags, at vLLM's defaults (256-token
// prefixes and suffixes, 10 prefixes, 128 output tokens, or --output-len).
func prefixRepetition(a Args, sp *workloads.SharedPrefix) {
	sp.PrefixLen, sp.SuffixLen, sp.Groups, sp.OutputLen = 256, 256, 10, 128
	for flag, to := range map[string]*int{"prefix-repetition-prefix-len": &sp.PrefixLen, "prefix-repetition-suffix-len": &sp.SuffixLen,
		"prefix-repetition-num-prefixes": &sp.Groups, "prefix-repetition-output-len": &sp.OutputLen} {
		if a.Given(flag) {
			*to = a.Int(flag)
		} else if flag == "prefix-repetition-output-len" && a.Given("output-len") {
			*to = a.Int("output-len")
		}
	}
}

// timedTraceRefusals are the timed_trace flags loadcurve cannot honour: it reads the Mooncake
// format only (timestamps in ms, MooncakeBlockSize-token hash blocks), whose block size must be
// given, vLLM's default being another.
func timedTraceRefusals(a Args) []error {
	var errs []error
	for flag, want := range map[string]string{"timed-trace-chunk-hash-size": strconv.Itoa(workloads.MooncakeBlockSize),
		"timed-trace-sec-multiplier": "0.001", "timed-trace-label-timestamp": "timestamp", "timed-trace-label-input-length": "input_length",
		"timed-trace-label-output-length": "output_length", "timed-trace-label-hash-ids": "hash_ids"} {
		if a.Given(flag) && Text(a, *Lookup(flag)) != want {
			errs = append(errs, fmt.Errorf("--%s %s: loadcurve reads timed traces in the Mooncake format (timestamps in ms, %d-token hash blocks): want %s",
				flag, Text(a, *Lookup(flag)), workloads.MooncakeBlockSize, want))
		}
	}
	if !a.Given("timed-trace-chunk-hash-size") {
		errs = append(errs, fmt.Errorf("--dataset-name timed_trace: vLLM's default --timed-trace-chunk-hash-size is 16 and loadcurve reads hash_ids as %d-token blocks (Mooncake's): give --timed-trace-chunk-hash-size %d if the trace's blocks are that size",
			workloads.MooncakeBlockSize, workloads.MooncakeBlockSize))
	}
	return errs
}

// datasetRefused says why vLLM's dataset name is not read: not supported (and what to use
// instead), or not one of vLLM's.
func datasetRefused(name string) error {
	switch name {
	case "hf":
		return fmt.Errorf("--dataset-name hf: not supported: it %s", whyNoHF)
	case "random-mm", "custom_image", "custom_audio":
		return fmt.Errorf("--dataset-name %s: not supported: %s; use random, sharegpt or custom", name, whyMultimodal)
	case "random-rerank":
		return fmt.Errorf("--dataset-name random-rerank: not supported: reranking is not measured by loadcurve; use random")
	case "sonnet":
		return fmt.Errorf("--dataset-name sonnet: not supported (vLLM deprecates it, and it needs a client-side chat template): use random, or save the prompts as JSONL for --dataset-name custom")
	case "burstgpt":
		return fmt.Errorf("--dataset-name burstgpt: not supported: BurstGPT's CSV is not read yet; replay an Azure trace with --workload azure:FILE.csv, or give the lengths as JSONL")
	case "spec_bench", "speed_bench":
		return fmt.Errorf("--dataset-name %s: not supported: its files are not read yet; save the prompts as JSONL ({\"prompt\": …} a line) for --dataset-name custom", name)
	}
	known := []string{"random", "sharegpt", "custom", "prefix_repetition", "timed_trace", "hf", "burstgpt", "sonnet", "random-mm", "random-rerank", "custom_image", "custom_audio", "spec_bench", "speed_bench"}
	if s := nearest.Names(name, known); len(s) > 0 {
		return fmt.Errorf("--dataset-name %q: not one of vLLM's datasets; did you mean %s?", name, nearest.Or(s))
	}
	return fmt.Errorf("--dataset-name %q: not one of vLLM's datasets (%s)", name, strings.Join(known, ", "))
}

// Source completes a source read from a dataset file with vLLM's output-length flags
// (--sharegpt-output-len, --custom-output-len, --output-len) and, with --tokenizer, counts its
// prompts in the model's tokens.
func Source(a Args, src *workloads.Source) []error {
	if src == nil || src.Generated() || src.Trace != nil {
		return nil
	}
	var errs []error
	name := ""
	if a.Given("dataset-name") {
		name = a.String("dataset-name")
	}
	out := 0
	switch {
	case name == "sharegpt" && a.Given("sharegpt-output-len"):
		out = a.Int("sharegpt-output-len")
	case name == "custom" && a.Given("custom-output-len"):
		out = a.Int("custom-output-len")
	case name == "custom":
		out = 256 // vLLM's default --custom-output-len
	}
	if out == 0 && (name == "sharegpt" || name == "custom") && a.Given("output-len") {
		out = a.Int("output-len")
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
	tok, _, err := Tokenizer(a)
	if err == nil && tok != nil {
		if err := src.CountInputTokens(tok); err != nil {
			errs = append(errs, fmt.Errorf("--tokenizer: %w", err))
		}
	}
	return errs
}

// tokenizers holds the tokenizers loaded, by name and the hub caches a model id is looked up
// in: run and sweep read --tokenizer in two places (the generated prompts and a dataset's
// counts), and a file is read once. (With the caches in the key, a process whose environment
// names another cache, as a test's does, looks again.)
var tokenizers sync.Map // name, hub caches → tokenizerFound

type tokenizerFound struct {
	tok  *tokens.Tokenizer
	note string
	err  error
}

// Tokenizer loads the tokenizer prompts are sized in, as vLLM chooses it: --tokenizer (a
// tokenizer.json, a model directory, or a Hugging Face model id in the local cache), or
// without it --model's, when the local cache or a directory of that name has it. nil when
// neither gives one. note, when not empty, is a line for the user: where a model id's tokenizer
// was found, or that --model's was not and prompts are sized in words.
func Tokenizer(a Args) (*tokens.Tokenizer, string, error) {
	name, flag := "", "tokenizer"
	switch {
	case a.Given("tokenizer"):
		name = a.String("tokenizer")
		if name == "" {
			return nil, "", fmt.Errorf("--tokenizer: empty: give a tokenizer.json, a model directory holding one, or a Hugging Face model id (ORG/NAME) in the local cache")
		}
	case a.Given("model") && a.String("model") != "":
		name, flag = a.String("model"), "model"
	default:
		return nil, "", nil
	}
	key := strings.Join(append([]string{flag, name}, tokens.HubCaches()...), "\x00")
	if v, ok := tokenizers.Load(key); ok {
		f := v.(tokenizerFound)
		return f.tok, f.note, f.err
	}
	f := loadTokenizer(flag, name)
	tokenizers.Store(key, f)
	return f.tok, f.note, f.err
}

func loadTokenizer(flag, name string) tokenizerFound {
	path, err := tokens.Resolve(name)
	var nf *tokens.NotFoundError
	switch {
	case errors.As(err, &nf) && flag == "model":
		if nf.NotAnID {
			return tokenizerFound{}
		}
		return tokenizerFound{note: fmt.Sprintf("loadcurve: prompts are sized in words: no tokenizer for --model %s (%v); give --tokenizer to size them in the model's tokens", name, strings.TrimPrefix(err.Error(), name+": "))}
	case err != nil:
		return tokenizerFound{err: fmt.Errorf("--tokenizer %w", err)}
	}
	tk, err := tokens.Load(path)
	if err != nil {
		return tokenizerFound{err: fmt.Errorf("--%s: %w", flag, err)}
	}
	f := tokenizerFound{tok: tk}
	if path != name || flag == "model" {
		f.note = fmt.Sprintf("loadcurve: prompts are sized in the tokens of --%s %s (%s, %s)", flag, name, tk.Name(), tk.ID()[:len("sha256:")+12])
	}
	return f
}
