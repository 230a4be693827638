// Command tokcheck holds llama-server's tokenizer, serving a model makegguf wrote, to loadcurve's
// own (the tokens package, with the tokenizer.json the model's vocabulary came from): for each
// line of a corpus (a JSON string a line), the ids of the engine's POST /tokenize (no BOS, special
// tokens parsed: what a prompt gets) against tokens.Encode, and, for every -usage'th line, the
// prompt_tokens of a one-token /v1/completions as well. It prints each line that differs and a
// summary. With -nfc the engine is sent each text in NFC, the normalization Qwen3's
// tokenizer.json asks for and llama.cpp's gpt2 tokenizer does not do.
//
//	go run ./scripts/makegguf/tokcheck -url http://127.0.0.1:8090 -corpus measure/tokens/testdata/corpus.jsonl
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"time"

	"github.com/loadcurve/loadcurve/measure/tokens"
	"github.com/loadcurve/loadcurve/scripts/makegguf/tokfile"
	"golang.org/x/text/unicode/norm"
)

func main() {
	url := flag.String("url", "http://127.0.0.1:8090", "llama-server's base URL")
	corpus := flag.String("corpus", "measure/tokens/testdata/corpus.jsonl", "the strings, one JSON string a line")
	tok := flag.String("tokenizer", "measure/tokens/testdata/models/qwen3.json.xz", "the tokenizer.json (or .json.xz) the model's vocabulary came from")
	limit := flag.Int("n", 0, "check only the first n lines (0: all)")
	usage := flag.Int("usage", 50, "also check usage.prompt_tokens of /v1/completions for every usage'th line (0: never)")
	verbose := flag.Bool("v", false, "print the ids of each difference")
	nfc := flag.Bool("nfc", false, "send the engine each text in Unicode NFC, as Qwen3's tokenizer.json normalizes it before splitting and llama.cpp does not: what differs then is not normalization")
	flag.Parse()
	if err := run(*url, *corpus, *tok, *limit, *usage, *verbose, *nfc); err != nil {
		fmt.Fprintln(os.Stderr, "tokcheck:", err)
		os.Exit(1)
	}
}

func run(url, corpus, tokPath string, limit, usageEvery int, verbose, nfc bool) error {
	data, err := tokfile.Read(tokPath)
	if err != nil {
		return err
	}
	t, err := tokens.Parse(tokPath, data)
	if err != nil {
		return err
	}
	f, err := os.Open(corpus)
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	c := &http.Client{Timeout: 60 * time.Second}
	var lines, sameIDs, sameCount, usageChecked, usageSame, tokTotal int
	for n := 1; sc.Scan(); n++ {
		if limit > 0 && n > limit {
			break
		}
		var s string
		if err := json.Unmarshal(sc.Bytes(), &s); err != nil {
			return fmt.Errorf("%s:%d: %w", corpus, n, err)
		}
		ours, err := t.Encode(s)
		if err != nil {
			fmt.Printf("line %d: ours: %v\n", n, err)
			continue
		}
		sent := s
		if nfc {
			sent = norm.NFC.String(s)
		}
		var resp struct {
			Tokens []int `json:"tokens"`
		}
		if err := post(c, url+"/tokenize", map[string]any{"content": sent}, &resp); err != nil {
			return fmt.Errorf("line %d: %w", n, err)
		}
		lines++
		tokTotal += len(ours)
		if len(resp.Tokens) == len(ours) {
			sameCount++
		}
		if slices.Equal(resp.Tokens, ours) {
			sameIDs++
		} else {
			i := 0
			for i < min(len(ours), len(resp.Tokens)) && ours[i] == resp.Tokens[i] {
				i++
			}
			fmt.Printf("line %d %s: ours %d tokens, engine %d, first difference at token %d\n", n, clip(s), len(ours), len(resp.Tokens), i)
			if verbose {
				fmt.Printf("  ours   %v\n  engine %v\n", ours, resp.Tokens)
			}
		}
		if usageEvery > 0 && n%usageEvery == 0 && s != "" {
			var cr struct {
				Usage struct {
					PromptTokens int `json:"prompt_tokens"`
				} `json:"usage"`
			}
			if err := post(c, url+"/v1/completions", map[string]any{"prompt": sent, "max_tokens": 1}, &cr); err != nil {
				return fmt.Errorf("line %d: %w", n, err)
			}
			usageChecked++
			if cr.Usage.PromptTokens == len(ours) {
				usageSame++
			} else {
				fmt.Printf("line %d %s: ours %d tokens, the engine's usage.prompt_tokens %d\n", n, clip(s), len(ours), cr.Usage.PromptTokens)
			}
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	fmt.Printf("%d of %d lines the same ids, %d of %d the same count (%d tokens ours); usage.prompt_tokens equal on %d of %d\n",
		sameIDs, lines, sameCount, lines, tokTotal, usageSame, usageChecked)
	return nil
}

func post(c *http.Client, url string, body, out any) error {
	b, err := json.Marshal(body)
	if err != nil {
		return err
	}
	resp, err := c.Post(url, "application/json", bytes.NewReader(b))
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s: %s", url, resp.Status, bytes.TrimSpace(data))
	}
	return json.Unmarshal(data, out)
}

func clip(s string) string {
	q := fmt.Sprintf("%q", s)
	if len(q) > 70 {
		q = q[:67] + "..."
	}
	return q
}
