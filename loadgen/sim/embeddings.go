package sim

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// embeddingDims is the length of the simulator's embedding vectors: a few numbers, since
// nothing reads them.
const embeddingDims = 8

// serveEmbeddings answers POST /v1/embeddings: the input (a string, a one-element list of
// strings, or token ids, as a completions prompt) is prefilled by the engine as a request of one
// token, so its latency is the engine's prefill of its input (proportional to its length, in a
// batch with the other requests), and the answer is one JSON document with an embedding and the
// usage (prompt_tokens). The fault rates apply: an error answers 500 or 503, a drop closes the
// connection instead of answering, a stall never answers.
func (s *Server) serveEmbeddings(w http.ResponseWriter, r *http.Request) {
	if !s.method(w, r, http.MethodPost) {
		return
	}
	idx := s.received.Add(1) - 1
	arrival := time.Now()
	s.inflight.Add(1)
	defer s.inflight.Add(-1)
	body, _, ok := s.readModelRequest(w, r)
	if !ok {
		return
	}
	var in struct {
		Input json.RawMessage `json:"input"`
	}
	if err := json.Unmarshal(body, &in); err != nil { // decodeRequest read it once
		writeBad(w, bad("", "request body: %v", err))
		return
	}
	t := s.tokenizer()
	if err := tokenizeEmbeddingInput(in.Input, &t); err != nil {
		writeBad(w, err)
		return
	}
	if t.n >= s.cfg.MaxModelLen {
		writeError(w, http.StatusBadRequest, "BadRequestError", "input", fmt.Sprintf(
			"This model's maximum context length is %d tokens. However, your request has %d input tokens. Please reduce the length of the input.",
			s.cfg.MaxModelLen, t.n))
		return
	}
	p := s.decide(idx, 1, true)
	if p.fault == faultError {
		writeFault(w, p)
		return
	}
	q := &sequence{promptLen: t.n, blocks: t.blocks, maxOut: 1, target: 1, arrival: arrival, notify: make(chan struct{}, 1)}
	if !s.eng.submit(q) {
		writeError(w, http.StatusServiceUnavailable, "ServiceUnavailableError", "", "the simulated deployment is shut down")
		return
	}
	defer s.eng.cancel(q)
	if !s.awaitDone(w, r, q, &p) {
		return
	}
	b := append(make([]byte, 0, 256), `{"object":"list","data":[{"object":"embedding","index":0,"embedding":[`...)
	for i := range embeddingDims {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendFloat(b, 2*unit(mix(uint64(s.cfg.Seed), idx, saltEOS+uint64(i)+16))-1, 'f', 6, 64)
	}
	b = append(b, `]}],"model":`...)
	b = append(b, s.modelJSON...)
	b = append(b, `,"usage":{"prompt_tokens":`...)
	b = strconv.AppendInt(b, int64(t.n), 10)
	b = append(b, `,"total_tokens":`...)
	b = strconv.AppendInt(b, int64(t.n), 10)
	b = append(b, "}}\n"...)
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(b)
}

// tokenizeEmbeddingInput counts the tokens of an embeddings input: what a completions prompt
// may be, named input.
func tokenizeEmbeddingInput(raw []byte, t *tokenizer) error {
	if isNull(bytes.TrimSpace(raw)) {
		return bad("input", "input: required")
	}
	err := tokenizePrompt(raw, t)
	var br *badRequest
	if errors.As(err, &br) {
		return bad("input", "input%s", strings.TrimPrefix(br.msg, "prompt"))
	}
	return err
}
