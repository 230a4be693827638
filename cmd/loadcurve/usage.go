package main

import (
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/loadcurve/loadcurve/redact"
)

// checkBaseURL says what is wrong with a --base-url and what was probably meant; nil when it is
// an http or https URL with a host. The URL is echoed without user info, query or fragment:
// they may hold credentials.
func checkBaseURL(raw string) error {
	s := strings.TrimSpace(raw)
	const want = "want e.g. http://host:8000/v1"
	if !strings.Contains(s, "://") {
		guess, err := url.Parse("http://" + s)
		if err != nil || guess.Host == "" || strings.HasPrefix(strings.ToLower(s), "http") && strings.Contains(s, ":/") {
			return fmt.Errorf("--base-url: not a URL with a scheme; %s", want)
		}
		shown := redact.URL(guess.String())
		return fmt.Errorf("--base-url %s: not a URL with a scheme; did you mean %s?", strings.TrimPrefix(shown, "http://"), shown)
	}
	u, err := url.Parse(s)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // url.Error quotes the whole input, which may hold credentials
		}
		return fmt.Errorf("--base-url: not a valid URL (%v); %s", err, want)
	}
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		return fmt.Errorf("--base-url %s: the scheme must be http or https; %s", redact.URL(s), want)
	case u.Host == "":
		return fmt.Errorf("--base-url %s: no host; %s", redact.URL(s), want)
	}
	return nil
}
