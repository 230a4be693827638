package redact_test

import (
	"encoding/base64"
	"strings"
	"testing"

	"github.com/loadcurve/loadcurve/redact"
)

func TestRedact(t *testing.T) {
	const key = "sk-SECRETKEY0123456789"
	s := redact.New(key)
	s.AddHeaderValue("Bearer hdr-token-abcdef")
	s.AddURL("http://alice:pa%20ss@host:8000/v1?key=query-secret-1&flag=on")
	tests := []struct {
		name, in, want string
	}{
		{"no secret", "HTTP 500: boom", "HTTP 500: boom"},
		{"the key", "bad key " + key + "!", "bad key [REDACTED]!"},
		{"an echoed header", "Authorization: Bearer " + key, "Authorization: Bearer [REDACTED]"},
		{"a key cut by a server", "you sent Bearer sk-SECRE…", "you sent Bearer [REDACTED]…"},
		{"a prefix shorter than eight bytes stays", "sk-SECR", "sk-SECR"},
		{"a header credential", "token hdr-token-abcdef rejected", "token [REDACTED] rejected"},
		{"the scheme's name in other text stays", "missing Bearer scheme", "missing Bearer scheme"},
		{"the URL password", "pw=pa ss", "pw=[REDACTED]"},
		{"the password query-escaped", "pw=pa+ss", "pw=[REDACTED]"},
		{"the password path-escaped", "pw=pa%20ss", "pw=[REDACTED]"},
		{"HTTP Basic", "Basic " + base64.StdEncoding.EncodeToString([]byte("alice:pa ss")), "Basic [REDACTED]"},
		{"a query value", `{"echo":"query-secret-1"}`, `{"echo":"[REDACTED]"}`},
		{"a short query value is not a secret", "flag=on", "flag=on"},
		{"JSON-escaped", `"k":"a\"b/cdefgh"`, `"k":"[REDACTED]"`},
		{"twice", key + key, "[REDACTED][REDACTED]"},
	}
	s.Add(`a"b/cdefgh`)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := s.Redact(tt.in); got != tt.want {
				t.Errorf("Redact(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestCleanRedactsBeforeItCuts(t *testing.T) {
	const key = "sk-SECRETKEY0123456789"
	s := redact.New(key)
	// The key straddles the length bound: cutting first would leave "sk-SECRETK" unmatched.
	text := strings.Repeat("x", 40) + key + strings.Repeat("y", 40)
	got := s.Clean(text, 50)
	if strings.Contains(got, "sk-SECRE") || len(got) > 50 {
		t.Errorf("Clean = %q (%d bytes)", got, len(got))
	}
	// A text longer than the window, cut inside a key: the key's start is hidden too.
	long := strings.Repeat("z", redact.Window-5) + key
	if got := s.Clean(long, redact.Window+100); strings.Contains(got, "sk-SE") {
		t.Errorf("a key cut by the window leaks its start: …%q", got[len(got)-20:])
	}
}

func TestBoundKeepsRunes(t *testing.T) {
	for _, tt := range []struct {
		in   string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{"héllo wörld", 8, "héll…"}, {"héllo", 5, "h…"},
		{"abcdef", 4, "a…"},
		{"abcdef", 0, "…"},
	} {
		if got := redact.Bound(tt.in, tt.n); got != tt.want {
			t.Errorf("Bound(%q, %d) = %q, want %q", tt.in, tt.n, got, tt.want)
		}
	}
}

func TestURL(t *testing.T) {
	for in, want := range map[string]string{
		"http://user:pw@host:8000/v1?key=k#frag": "http://host:8000/v1",
		"https://host/v1":                        "https://host/v1",
		"http://[::1]:80/v1?":                    "http://[::1]:80/v1",
		"http://host/%zz":                        "(invalid URL)",
	} {
		if got := redact.URL(in); got != want {
			t.Errorf("URL(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestNothingToHide(t *testing.T) {
	var nilSet *redact.Secrets
	if got := nilSet.Clean("text", 100); got != "text" {
		t.Errorf("nil set: %q", got)
	}
	if !redact.New("abc").Empty() {
		t.Error("a three-byte value was taken as a secret")
	}
}

// FuzzClean: whatever the text and wherever a secret sits in it, no prefix of MinPrefix bytes of
// the secret survives outside the masks, and the result respects its bound.
func FuzzClean(f *testing.F) {
	f.Add("sk-SECRETKEY0123", "HTTP 401: bad key ", 3, 40)
	f.Add("abcdefghij", "aaaaaaaaaaaaaaaaaaaaa", 0, 5)
	f.Add("[REDACTED]xyz", "[REDACTED]", 2, 100)
	f.Fuzz(func(t *testing.T, secret, text string, at, max int) {
		if len(secret) < redact.MinPrefix || max < 0 || max > 1<<16 {
			return
		}
		at = ((at % (len(text) + 1)) + len(text) + 1) % (len(text) + 1)
		in := text[:at] + secret + text[at:]
		got := redact.New(secret).Clean(in, max)
		if len(got) > max && !(max < len("…") && got == "…") {
			t.Fatalf("Clean(_, %d) is %d bytes", max, len(got))
		}
		for _, part := range strings.Split(got, redact.Mask) {
			if strings.Contains(part, secret[:redact.MinPrefix]) {
				t.Fatalf("secret %q survives in %q (input %q)", secret, got, in)
			}
		}
	})
}
