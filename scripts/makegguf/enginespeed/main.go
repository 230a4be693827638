// Command enginespeed measures how fast llama-server serves a model makegguf wrote, by the
// engine's own account: it sends -requests /v1/completions from -parallel clients at once, each
// with a fresh prompt of a length drawn from -prompt (exact, counted with the tokens package and
// the model's tokenizer.json) and max_tokens drawn from -output with ignore_eos, so every
// request generates all of them, and reports the wall-clock throughput and the mean of the
// timings each response carries (prompt_per_second, predicted_per_token_ms).
//
//	go run ./scripts/makegguf/enginespeed -url http://127.0.0.1:8090 -parallel 4 -requests 40
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/loadcurve/loadcurve/measure/tokens"
	"github.com/loadcurve/loadcurve/scripts/makegguf/tokfile"
)

// words are common English words, most of them one Qwen3 token with their leading space.
var words = strings.Fields(`the of and to in is was for on that with as by at from his her an be
this which or are had not but were have one they you all their has been its who more can there
when out up so said what about into other than them new some time only would could like these
two first may any then after most over also made such where many well before must through back
years much way down should because each just those people how too long little very still own
world between life last under work never while another old part same great might day both place
water house small found city large small number under every name three home hand high land show
around keep light open began line study family leave kind side night point state real think`)

type result struct {
	wall          time.Duration
	promptTokens  int
	outputTokens  int
	promptPerSec  float64
	perTokenMs    float64
	promptMs      float64
	predictedMs   float64
	finishReasons string
}

func main() {
	url := flag.String("url", "http://127.0.0.1:8090", "llama-server's base URL")
	tok := flag.String("tokenizer", "measure/tokens/testdata/models/qwen3.json.xz", "the model's tokenizer.json (or .json.xz), to size the prompts")
	parallel := flag.Int("parallel", 1, "clients sending at once")
	requests := flag.Int("requests", 20, "requests in all")
	prompt := flag.String("prompt", "100-300", "prompt tokens: N or MIN-MAX (uniform)")
	output := flag.String("output", "32-128", "max_tokens: N or MIN-MAX (uniform)")
	seed := flag.Uint64("seed", 1, "the seed of the prompts and lengths")
	flag.Parse()
	if err := run(*url, *tok, *parallel, *requests, *prompt, *output, *seed); err != nil {
		fmt.Fprintln(os.Stderr, "enginespeed:", err)
		os.Exit(1)
	}
}

func parseRange(s string) (int, int, error) {
	lo, hi, ok := strings.Cut(s, "-")
	if !ok {
		hi = lo
	}
	a, err := strconv.Atoi(lo)
	if err != nil {
		return 0, 0, err
	}
	b, err := strconv.Atoi(hi)
	if err != nil || b < a || a < 1 {
		return 0, 0, fmt.Errorf("range %q: N or MIN-MAX, 1 <= MIN <= MAX", s)
	}
	return a, b, nil
}

// makePrompt returns a text of exactly n tokens by t: random words, one at a time, a word that
// would pass n replaced by " a" (one token).
func makePrompt(t *tokens.Tokenizer, r *rand.Rand, n int) (string, error) {
	var b strings.Builder
	b.WriteString("Note")
	for {
		c, err := t.Count(b.String())
		if err != nil {
			return "", err
		}
		if c == n {
			return b.String(), nil
		}
		w := " " + words[r.IntN(len(words))]
		if c2, err := t.Count(b.String() + w); err != nil {
			return "", err
		} else if c2 > n {
			w = " a"
		}
		b.WriteString(w)
	}
}

func run(url, tokPath string, parallel, requests int, promptRange, outputRange string, seed uint64) error {
	pmin, pmax, err := parseRange(promptRange)
	if err != nil {
		return err
	}
	omin, omax, err := parseRange(outputRange)
	if err != nil {
		return err
	}
	data, err := tokfile.Read(tokPath)
	if err != nil {
		return err
	}
	t, err := tokens.Parse(tokPath, data)
	if err != nil {
		return err
	}
	r := rand.New(rand.NewPCG(seed, 36))
	type job struct {
		prompt    string
		n, maxOut int
	}
	jobs := make([]job, requests)
	for i := range jobs {
		n := pmin + r.IntN(pmax-pmin+1)
		p, err := makePrompt(t, r, n)
		if err != nil {
			return err
		}
		jobs[i] = job{p, n, omin + r.IntN(omax-omin+1)}
	}
	c := &http.Client{Timeout: 10 * time.Minute}
	results := make([]result, requests)
	errs := make([]error, requests)
	next := make(chan int)
	var wg sync.WaitGroup
	start := time.Now()
	for range parallel {
		wg.Go(func() {
			for i := range next {
				results[i], errs[i] = send(c, url, jobs[i].prompt, jobs[i].maxOut)
				if errs[i] == nil && results[i].promptTokens != jobs[i].n {
					errs[i] = fmt.Errorf("request %d: the engine counted %d prompt tokens, we %d", i, results[i].promptTokens, jobs[i].n)
				}
			}
		})
	}
	for i := range jobs {
		next <- i
	}
	close(next)
	wg.Wait()
	wall := time.Since(start)
	var pt, ot, failed int
	var pps, ptm, lat []float64
	finish := map[string]int{}
	for i, res := range results {
		if errs[i] != nil {
			if failed == 0 {
				fmt.Printf("request %d: %v\n", i, errs[i])
			}
			failed++
			continue
		}
		pt += res.promptTokens
		ot += res.outputTokens
		pps = append(pps, res.promptPerSec)
		ptm = append(ptm, res.perTokenMs)
		lat = append(lat, res.wall.Seconds())
		finish[res.finishReasons]++
	}
	fmt.Printf("parallel %d: %d requests (%d failed) in %.1f s: %.2f requests/s, %.0f prompt tokens/s, %.0f generated tokens/s (prompts %s, outputs %s tokens; finish %v)\n",
		parallel, requests, failed, wall.Seconds(), float64(requests-failed)/wall.Seconds(), float64(pt)/wall.Seconds(), float64(ot)/wall.Seconds(), promptRange, outputRange, finish)
	fmt.Printf("  engine timings, median per request: prompt %.0f tokens/s, generation %.1f ms/token (%.0f tokens/s per sequence); latency p50 %.2f s\n",
		median(pps), median(ptm), 1000/median(ptm), median(lat))
	return nil
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	return s[len(s)/2]
}

func send(c *http.Client, url, prompt string, maxTokens int) (result, error) {
	body, _ := json.Marshal(map[string]any{"prompt": prompt, "max_tokens": maxTokens, "ignore_eos": true})
	start := time.Now()
	resp, err := c.Post(url+"/v1/completions", "application/json", bytes.NewReader(body))
	if err != nil {
		return result{}, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return result{}, err
	}
	if resp.StatusCode != http.StatusOK {
		return result{}, fmt.Errorf("%s: %s", resp.Status, bytes.TrimSpace(data))
	}
	var out struct {
		Choices []struct {
			FinishReason string `json:"finish_reason"`
		} `json:"choices"`
		Usage struct {
			PromptTokens     int `json:"prompt_tokens"`
			CompletionTokens int `json:"completion_tokens"`
		} `json:"usage"`
		Timings struct {
			PromptMs         float64 `json:"prompt_ms"`
			PromptPerSecond  float64 `json:"prompt_per_second"`
			PredictedMs      float64 `json:"predicted_ms"`
			PredictedPerTok  float64 `json:"predicted_per_token_ms"`
			PredictedPerSec  float64 `json:"predicted_per_second"`
			PredictedN       int     `json:"predicted_n"`
			PromptN          int     `json:"prompt_n"`
			PromptCachedToks int     `json:"cache_n"`
		} `json:"timings"`
	}
	if err := json.Unmarshal(data, &out); err != nil {
		return result{}, err
	}
	res := result{wall: time.Since(start), promptTokens: out.Usage.PromptTokens, outputTokens: out.Usage.CompletionTokens,
		promptPerSec: out.Timings.PromptPerSecond, perTokenMs: out.Timings.PredictedPerTok,
		promptMs: out.Timings.PromptMs, predictedMs: out.Timings.PredictedMs}
	if len(out.Choices) > 0 {
		res.finishReasons = out.Choices[0].FinishReason
	}
	return res, nil
}
