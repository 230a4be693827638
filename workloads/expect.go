package workloads

import (
	"fmt"
	"regexp"
	"strings"
	"sync"
)

var regexCache sync.Map // pattern -> *regexp.Regexp

// Validate checks that the expectation can be evaluated (its regex compiles).
func (e *Expectation) Validate() error {
	if e == nil || e.Regex == "" {
		return nil
	}
	if _, err := compile(e.Regex); err != nil {
		return fmt.Errorf("expected regex %q: %w", e.Regex, err)
	}
	return nil
}

func compile(pattern string) (*regexp.Regexp, error) {
	if re, ok := regexCache.Load(pattern); ok {
		return re.(*regexp.Regexp), nil
	}
	re, err := regexp.Compile(pattern)
	if err != nil {
		return nil, err
	}
	regexCache.Store(pattern, re)
	return re, nil
}

// Check evaluates the expectation on a generated text, its finish reason and its output token
// count. It returns "" when every condition holds, else the first one that failed. A nil
// expectation always passes.
func (e *Expectation) Check(text, finishReason string, outputTokens int) string {
	if e == nil {
		return ""
	}
	switch {
	case e.Exact != "" && strings.TrimSpace(text) != strings.TrimSpace(e.Exact):
		return "text differs from the expected exact answer"
	case e.Contains != "" && !strings.Contains(text, e.Contains):
		return fmt.Sprintf("text does not contain %q", e.Contains)
	case e.FinishReason != "" && finishReason != e.FinishReason:
		return fmt.Sprintf("finish_reason %q, expected %q", finishReason, e.FinishReason)
	case e.MinTokens > 0 && outputTokens < e.MinTokens:
		return fmt.Sprintf("%d output tokens, expected at least %d", outputTokens, e.MinTokens)
	}
	if e.Regex != "" {
		re, err := compile(e.Regex)
		if err != nil {
			return fmt.Sprintf("expected regex does not compile: %v", err)
		}
		if !re.MatchString(text) {
			return fmt.Sprintf("text does not match /%s/", e.Regex)
		}
	}
	return ""
}

// NeedsText reports whether checking the expectation needs the generated text (so a client can
// skip accumulating it otherwise).
func (e *Expectation) NeedsText() bool {
	return e != nil && (e.Exact != "" || e.Contains != "" || e.Regex != "")
}
