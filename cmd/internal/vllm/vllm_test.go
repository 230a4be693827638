package vllm_test

import (
	"bytes"
	"encoding/json"
	"io"
	"strconv"
	"strings"
	"testing"

	"github.com/loadcurve/loadcurve/cmd/internal/vllm"
	"github.com/loadcurve/loadcurve/loadgen"
	"github.com/loadcurve/loadcurve/workloads"
)

// args is a command line of run as package vllm reads it: the flags given, by name, and the
// defaults of run's own flags that the rules read (--endpoint chat).
type args map[string]string

func (a args) Given(name string) bool { _, ok := a[name]; return ok }

func (a args) String(name string) string {
	if v, ok := a[name]; ok {
		return v
	}
	return map[string]string{"endpoint": "chat"}[name]
}

func (a args) Int(name string) int {
	n, _ := strconv.Atoi(a[name])
	return n
}

func (a args) Float64(name string) float64 {
	f, _ := strconv.ParseFloat(a[name], 64)
	return f
}

func (a args) Bool(name string) bool { return a[name] == "true" }

// parse turns "--name value" pairs (and "--name" alone: a bool) into args.
func parse(line ...string) args {
	a := args{}
	for i := 0; i < len(line); i++ {
		name := strings.TrimPrefix(line[i], "--")
		if i+1 < len(line) && !strings.HasPrefix(line[i+1], "--") {
			a[name] = line[i+1]
			i++
		} else {
			a[name] = "true"
		}
	}
	return a
}

// check applies every rule of the package, as run does, and returns its refusals.
func check(a args) (errs []error, notes string) {
	var w bytes.Buffer
	t := loadgen.Target{Endpoint: loadgen.Chat}
	if ep := a.String("endpoint"); !strings.HasPrefix(ep, "/") {
		t.Endpoint = loadgen.Endpoint(ep)
	}
	errs = append(errs, vllm.Refusals(a, "run", &w)...)
	errs = append(errs, vllm.Target(a, &t, &w)...)
	var opts workloads.LoadOptions
	_, dErrs := vllm.Dataset(a, &opts, &w)
	return append(errs, dErrs...), w.String()
}

// TestRefusedCommandLines: command lines vLLM itself refuses (or would send to the wrong API),
// and those asking for what loadcurve does not do, are refused with one line naming the flags
// and what to do instead (these were run's command lines in cmd's test, one process each).
func TestRefusedCommandLines(t *testing.T) {
	for _, tc := range []struct {
		line []string
		want string
	}{
		{[]string{"--backend", "openai-chat"}, "--backend openai-chat needs --endpoint /v1/chat/completions"},
		{[]string{"--backend", "openai-chat", "--endpoint", "/v1/completions"}, "give --endpoint /v1/chat/completions (or --backend openai)"},
		{[]string{"--backend", "openai", "--endpoint", "/v1/chat/completions"}, "give --endpoint /v1/completions (or --backend openai-chat)"},
		{[]string{"--backend", "openai", "--endpoint", "chat"}, "--backend openai sends completions requests and --endpoint chat asks for chat"},
		{[]string{"--backend", "openai-embeddings"}, "--backend openai-embeddings needs --endpoint /v1/embeddings"},
		{[]string{"--backend", "openai-embeddings", "--endpoint", "/v1/completions"}, "give --endpoint /v1/embeddings (or --backend openai)"},
		{[]string{"--backend", "openai-embeddings-clip"}, "image embeddings"},
		{[]string{"--backend", "vllm-rerank"}, "reranking is not measured"},
		{[]string{"--backend", "vlm"}, "did you mean vllm?"},
		{[]string{"--backend", "zzzzzzzzz"}, "not one of vLLM's backends (infinity-embeddings,"},
		{[]string{"--endpoint", "/v1/rerank"}, "must end with the route of one of loadcurve's APIs (/chat/completions, /completions, /embeddings, /responses)"},
		{[]string{"--port", "70000"}, "--port must be in [1, 65535], got 70000"},
		{[]string{"--host", "http://h/x"}, "want a host name or address"},
		{[]string{"--dataset-name", "random", "--dataset-path", "x.json"}, "cannot be used with --dataset-name random"},
		{[]string{"--dataset-name", "prefix_repetition", "--dataset-path", "x.json"}, "cannot be used with --dataset-name prefix_repetition"},
		{[]string{"--dataset-name", "sharegpt"}, "--dataset-name sharegpt needs --dataset-path FILE"},
		{[]string{"--dataset-path", "x.json"}, "--dataset-path needs --dataset-name"},
		{[]string{"--dataset-name", "hf", "--dataset-path", "likaixin/InstructCoder"}, "downloads nothing"},
		{[]string{"--dataset-name", "random-mm"}, "text only"},
		{[]string{"--dataset-name", "sonnet"}, "--dataset-name sonnet: not supported"},
		{[]string{"--dataset-name", "sharegtp", "--dataset-path", "x.json"}, "did you mean sharegpt?"},
		{[]string{"--dataset-name", "timed_trace", "--dataset-path", "t.jsonl"}, "--timed-trace-chunk-hash-size 512"},
		{[]string{"--dataset-name", "timed_trace", "--dataset-path", "t.jsonl", "--timed-trace-chunk-hash-size", "512", "--timed-trace-sec-multiplier", "1"},
			"--timed-trace-sec-multiplier 1: loadcurve reads timed traces in the Mooncake format"},
		{[]string{"--dataset-name", "random", "--workload", "shared-prefix"}, "give one of them"},
		{[]string{"--random-prefix-len", "-1"}, "--random-prefix-len must be in [0,"},
		{[]string{"--tokenizer", "meta-llama/Llama-3.1-8B-no-such-dir"}, "not in the Hugging Face cache (looked in "},
		{[]string{"--tokenizer", ""}, "--tokenizer: empty"},
		{[]string{"--lora-modules", "a"}, "one adapter at a time"},
		{[]string{"--probe-request-rate", "2"}, "no probe requests"},
		{[]string{"--random-batch-size", "4"}, "--random-batch-size: not supported"},
		{[]string{"--save-detailed"}, ""}, // run's own: accepted
		{[]string{"--request-rate", "4"}, ""},
	} {
		errs, _ := check(parse(tc.line...))
		text := ""
		for _, e := range errs {
			text += e.Error() + "\n"
		}
		if tc.want == "" && text != "" || tc.want != "" && !strings.Contains(text, tc.want) {
			t.Errorf("%v: refused with %q, want %q", tc.line, text, tc.want)
		}
	}
}

// TestRefusalsByCommandAndNotes: a flag native to run alone is refused by sweep, saying what to
// use there; a flag without effect is said to be so once; a refused flag at vLLM's default
// changes nothing and is said to.
func TestRefusalsByCommandAndNotes(t *testing.T) {
	var w bytes.Buffer
	errs := vllm.Refusals(parse("--request-rate", "4", "--save-result", "--trust-remote-code", "--random-batch-size", "1"), "sweep", &w)
	if len(errs) != 2 || !strings.Contains(errs[0].Error(), "--request-rate: not in loadcurve sweep: a sweep chooses its rates; did you mean --request-rates?") ||
		!strings.Contains(errs[1].Error(), "--save-result: not in loadcurve sweep") {
		t.Errorf("sweep's refusals: %v", errs)
	}
	notes := w.String()
	if strings.Count(notes, "--trust-remote-code: accepted, no effect here") != 1 || !strings.Contains(notes, "--random-batch-size 1: vLLM's default, no effect") {
		t.Errorf("notes:\n%s", notes)
	}
	w.Reset()
	if errs := vllm.Refusals(parse("--request-rate", "4", "--save-result"), "run", &w); len(errs) != 0 || w.Len() != 0 {
		t.Errorf("run's own flags: %v, notes %q", errs, w.String())
	}
}

// TestTargetFormsTheURLAsVLLM: --host/--port/--base-url and --endpoint PATH give the URL vLLM
// would send to; the path's ending chooses the API; --served-model-name names the model.
func TestTargetFormsTheURLAsVLLM(t *testing.T) {
	for _, tc := range []struct {
		line     []string
		base     string
		endpoint loadgen.Endpoint
	}{
		{[]string{"--host", "10.0.0.2", "--port", "8001"}, "http://10.0.0.2:8001/v1", loadgen.Completions},
		{[]string{"--port", "9000"}, "http://127.0.0.1:9000/v1", loadgen.Completions},
		{[]string{"--host", "::1"}, "http://[::1]:8000/v1", loadgen.Completions},
		{[]string{"--base-url", "http://h:8000", "--endpoint", "/v1/chat/completions"}, "http://h:8000/v1", loadgen.Chat},
		{[]string{"--base-url", "http://h:8000", "--endpoint", "/openai/v1/completions"}, "http://h:8000/openai/v1", loadgen.Completions},
		{[]string{"--base-url", "http://h:8000", "--backend", "openai-chat", "--endpoint", "/v1/chat/completions"}, "http://h:8000/v1", loadgen.Chat},
		{[]string{"--base-url", "http://h:8000", "--backend", "vllm"}, "http://h:8000/v1", loadgen.Completions},
		{[]string{"--base-url", "http://h:8000", "--backend", "openai-embeddings", "--endpoint", "/v1/embeddings"}, "http://h:8000/v1", loadgen.Embeddings},
		{[]string{"--base-url", "http://h:8000", "--endpoint", "/v1/embeddings"}, "http://h:8000/v1", loadgen.Embeddings},
		{[]string{"--base-url", "http://h:8000", "--endpoint", "/v1/responses"}, "http://h:8000/v1", loadgen.Responses},
		// loadcurve's own form: the API root, untouched.
		{[]string{"--base-url", "http://h:8000/v1"}, "http://h:8000/v1", loadgen.Chat},
	} {
		a := parse(tc.line...)
		tg := loadgen.Target{BaseURL: a.String("base-url"), Endpoint: loadgen.Chat}
		if errs := vllm.Target(a, &tg, &bytes.Buffer{}); len(errs) > 0 {
			t.Errorf("%v: %v", tc.line, errs)
			continue
		}
		if tg.BaseURL != tc.base || tg.Endpoint != tc.endpoint {
			t.Errorf("%v: %s, %s; want %s, %s", tc.line, tg.BaseURL, tg.Endpoint, tc.base, tc.endpoint)
		}
	}
	tg := loadgen.Target{}
	if vllm.Target(parse("--served-model-name", "adapter-1"), &tg, &bytes.Buffer{}); tg.Model != "adapter-1" {
		t.Errorf("--served-model-name: model %q", tg.Model)
	}
}

// TestSamplingFlagsGoIntoTheBody: vLLM's sampling flags are merged under --extra-body, whose
// keys win; --logprobs is left out of chat bodies (said so); vLLM's random dataset ignores EOS.
func TestSamplingFlagsGoIntoTheBody(t *testing.T) {
	for _, tc := range []struct {
		line  []string
		extra string
		ep    loadgen.Endpoint
		want  map[string]any
		note  string
	}{
		{line: []string{"--temperature", "0.5", "--top-k", "20"}, ep: loadgen.Chat, want: map[string]any{"temperature": 0.5, "top_k": 20.0}},
		{line: []string{"--temperature", "0.5"}, extra: `{"temperature": 1, "seed": 3}`, ep: loadgen.Chat, want: map[string]any{"temperature": 1.0, "seed": 3.0}},
		{line: []string{"--logprobs", "2", "--top-p", "0.9"}, ep: loadgen.Chat, want: map[string]any{"top_p": 0.9}, note: "--logprobs: no effect on chat requests"},
		{line: []string{"--logprobs", "2"}, ep: loadgen.Completions, want: map[string]any{"logprobs": 2.0}},
		{line: []string{"--dataset-name", "random"}, ep: loadgen.Chat, want: map[string]any{"ignore_eos": true}},
		{line: []string{"--dataset-name", "random", "--workload", "x.jsonl"}, ep: loadgen.Chat},
		{line: []string{"--backend", "openai-chat", "--endpoint", "/v1/chat/completions", "--base-url", "http://h"}, ep: loadgen.Chat, want: map[string]any{"ignore_eos": true}},
	} {
		var w bytes.Buffer
		tg := loadgen.Target{Endpoint: tc.ep, ExtraBody: json.RawMessage(tc.extra)}
		if errs := vllm.Target(parse(tc.line...), &tg, &w); len(errs) > 0 {
			t.Errorf("%v: %v", tc.line, errs)
			continue
		}
		var got map[string]any
		if len(tg.ExtraBody) > 0 {
			if err := json.Unmarshal(tg.ExtraBody, &got); err != nil {
				t.Fatal(err)
			}
		}
		if len(got) != len(tc.want) {
			t.Errorf("%v: body %s, want %v", tc.line, tg.ExtraBody, tc.want)
		}
		for k, v := range tc.want {
			if got[k] != v {
				t.Errorf("%v: %s = %v, want %v (body %s)", tc.line, k, got[k], v, tg.ExtraBody)
			}
		}
		if !strings.Contains(w.String(), tc.note) {
			t.Errorf("%v: notes %q, want %q", tc.line, w.String(), tc.note)
		}
	}
	tg := loadgen.Target{ExtraBody: json.RawMessage(`[1]`)}
	if errs := vllm.Target(parse("--temperature", "1"), &tg, &bytes.Buffer{}); len(errs) != 1 || !strings.Contains(errs[0].Error(), "--extra-body") {
		t.Errorf("a body that is not an object: %v", errs)
	}
}

// TestDatasetChoosesTheWorkload: vLLM's dataset names become loadcurve's workloads, with vLLM's
// defaults for prefix_repetition and the length flags applied.
func TestDatasetChoosesTheWorkload(t *testing.T) {
	for _, tc := range []struct {
		line []string
		spec string
		opts func(workloads.LoadOptions) bool
	}{
		{[]string{"--dataset-name", "random", "--input-len", "64", "--output-len", "8"}, workloads.KindSynthetic,
			func(o workloads.LoadOptions) bool { return o.Synthetic.InputLen == 64 && o.Synthetic.OutputLen == 8 }},
		{[]string{"--input-len", "64", "--random-input-len", "32"}, "", // loadcurve's own flag wins
			func(o workloads.LoadOptions) bool { return o.Synthetic.InputLen == 0 }},
		{[]string{"--random-prefix-len", "16"}, "", func(o workloads.LoadOptions) bool { return o.Synthetic.PrefixLen == 16 }},
		{[]string{"--dataset-name", "prefix_repetition"}, workloads.KindSharedPrefix, func(o workloads.LoadOptions) bool {
			sp := o.SharedPrefix
			return sp.PrefixLen == 256 && sp.SuffixLen == 256 && sp.Groups == 10 && sp.OutputLen == 128
		}},
		{[]string{"--dataset-name", "prefix_repetition", "--prefix-repetition-num-prefixes", "3", "--output-len", "5"}, workloads.KindSharedPrefix,
			func(o workloads.LoadOptions) bool { return o.SharedPrefix.Groups == 3 && o.SharedPrefix.OutputLen == 5 }},
		{[]string{"--dataset-name", "sharegpt", "--dataset-path", "s.json"}, workloads.FormatShareGPT + ":s.json", nil},
		{[]string{"--dataset-name", "custom", "--dataset-path", "c.jsonl"}, workloads.FormatJSONL + ":c.jsonl", nil},
		{[]string{"--dataset-name", "timed_trace", "--dataset-path", "t.jsonl", "--timed-trace-chunk-hash-size", "512"}, "mooncake:t.jsonl", nil},
		{[]string{"--workload", "shared-prefix"}, "shared-prefix", nil},
	} {
		a := parse(tc.line...)
		var o workloads.LoadOptions
		spec, errs := vllm.Dataset(a, &o, io.Discard)
		if len(errs) > 0 || spec != tc.spec || tc.opts != nil && !tc.opts(o) {
			t.Errorf("%v: %q, %+v, %v; want %q", tc.line, spec, o, errs, tc.spec)
		}
	}
}

// TestTableIsWhole: every flag has a kind and a type the command can make a flag of, a note
// where it does not do what loadcurve's flag of the name does, and no name twice.
func TestTableIsWhole(t *testing.T) {
	seen := map[string]bool{}
	for _, f := range vllm.Flags {
		if seen[f.Name] {
			t.Errorf("--%s is in the table twice", f.Name)
		}
		seen[f.Name] = true
		if !map[string]bool{"bool": true, "string": true, "int": true, "float": true, "list": true}[f.Type] {
			t.Errorf("--%s: type %q", f.Name, f.Type)
		}
		if f.Kind != vllm.Native && f.Note == "" {
			t.Errorf("--%s: kind %d without a note", f.Name, f.Kind)
		}
		if (f.Only == "") != (f.OnlyWhy == "") {
			t.Errorf("--%s: only %q without why, or why without only", f.Name, f.Only)
		}
		if vllm.Lookup(f.Name) == nil || vllm.Lookup(f.Name).Name != f.Name {
			t.Errorf("Lookup(%q) does not find it", f.Name)
		}
	}
	if vllm.Lookup("no-such-flag") != nil {
		t.Error("Lookup found a flag vLLM does not have")
	}
}
