package redact_test

import (
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"html"
	"net/url"
	"strings"
	"testing"

	"github.com/loadcurve/loadcurve/internal/redact"
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
		{"a middle piece", "…ETKEY0123…", "…[REDACTED]…"},
		{"a tail", "key ends EY0123456789.", "key ends [REDACTED]."},
		{"upper case", "SK-SECRETKEY0123456789", "[REDACTED]"},
		{"lower case middle", "x secretkey01 y", "x [REDACTED] y"},
		{"hex", "0x" + hex.EncodeToString([]byte(key)), "0x[REDACTED]"},
		{"hex upper case", strings.ToUpper(hex.EncodeToString([]byte(key))), "[REDACTED]"},
		{"HTML-escaped header", "&lt;b&gt;hdr-token-abcdef&lt;/b&gt;", "&lt;b&gt;[REDACTED]&lt;/b&gt;"},
		{"user:password", "alice:pa ss@", "[REDACTED]@"},
		{"seven bytes of a piece stay", "TKEY012", "TKEY012"},
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

// FuzzClean: whatever the text and wherever a piece of a secret (of MinPrefix bytes or more, from
// its start, middle or end, in either case) sits in it, no run of MinPrefix bytes of the secret
// survives outside the masks (ASCII case ignored), nothing a terminal would act on remains, and the result respects
// its bound.
func FuzzClean(f *testing.F) {
	f.Add("sk-SECRETKEY0123", "HTTP 401: bad key ", 3, 40, 0, 16)
	f.Add("abcdefghij", "aaaaaaaaaaaaaaaaaaaaa", 0, 5, 1, 9)
	f.Add("[REDACTED]xyz", "[REDACTED]", 2, 100, 0, 13)
	f.Add("Pw\x1bSecret\n99", "x\x1b[31my", 1, 80, 2, 12)
	f.Fuzz(func(t *testing.T, secret, text string, at, bound, from, n int) {
		if len(secret) < redact.MinPrefix || bound < 0 || bound > 1<<16 {
			return
		}
		// The piece echoed: secret[from:from+n], at least MinPrefix bytes.
		from = ((from % len(secret)) + len(secret)) % len(secret)
		from = min(from, len(secret)-redact.MinPrefix)
		n = min(max(n, redact.MinPrefix), len(secret)-from)
		piece := secret[from : from+n]
		if n%2 == 1 {
			piece = strings.Map(func(r rune) rune {
				if r >= 'a' && r <= 'z' {
					return r - 'a' + 'A'
				}
				return r
			}, piece)
		}
		at = ((at % (len(text) + 1)) + len(text) + 1) % (len(text) + 1)
		in := text[:at] + piece + text[at:]
		got := redact.New(secret).Clean(in, bound)
		if len(got) > bound && !(bound < len("…") && got == "…") {
			t.Fatalf("Clean(_, %d) is %d bytes", bound, len(got))
		}
		if strings.ContainsFunc(got, func(r rune) bool { return r < 0x20 || r == 0x7f || (r >= 0x80 && r <= 0x9f) }) {
			t.Fatalf("a control character survives in %q", got)
		}
		for _, form := range []string{secret, redact.StripControl(secret)} {
			form = asciiLower(form)
			for _, part := range strings.Split(got, redact.Mask) {
				part = asciiLower(part)
				for i := 0; i+redact.MinPrefix <= len(form); i++ {
					if strings.Contains(part, form[i:i+redact.MinPrefix]) {
						t.Fatalf("%q of secret %q survives in %q (input %q)", form[i:i+redact.MinPrefix], secret, got, in)
					}
				}
			}
		}
	})
}

// asciiLower lowers ASCII letters only: the case Redact ignores.
func asciiLower(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'A' && r <= 'Z' {
			return r - 'A' + 'a'
		}
		return r
	}, s)
}

// TestEchoesInEveryEncoding: a secret echoed in any encoding, at any of the three alignments a
// base64 text can give it, whole or as a piece cut from its start, middle or end, is hidden.
func TestEchoesInEveryEncoding(t *testing.T) {
	const key, hdr = "sk-Abc123+/Def456<&>Ghi789", "tok_9f8e7d6c5b4a3210"
	s := redact.New()
	s.AddAPIKey(key)
	s.AddHeader("X-Custom: Bearer " + hdr)
	s.AddURL("http://bob:Pw%21Secret99@h/v1?sig=QuerySecret42")
	b64 := func(prefix, v string) string { return base64.StdEncoding.EncodeToString([]byte(prefix + v)) }
	forms := map[string]func(string) string{
		"plain":                     func(v string) string { return v },
		"upper":                     strings.ToUpper,
		"lower":                     strings.ToLower,
		"hex":                       func(v string) string { return hex.EncodeToString([]byte(v)) },
		"query-escaped":             url.QueryEscape,
		"path-escaped":              url.PathEscape,
		"HTML-escaped":              html.EscapeString,
		"JSON-escaped":              func(v string) string { return strings.Trim(fmt.Sprintf("%q", v), `"`) },
		"base64":                    func(v string) string { return b64("", v) },
		"base64 after 1 byte":       func(v string) string { return b64("x", v) },
		"base64 after 2 bytes":      func(v string) string { return b64("xy", v) },
		"base64url":                 func(v string) string { return base64.URLEncoding.EncodeToString([]byte("z" + v)) },
		"base64 of Bearer":          func(v string) string { return b64("Bearer ", v) },
		"base64 of Bearer, shifted": func(v string) string { return b64("{Authorization: Bearer ", v+"}") },
	}
	secrets := []string{key, hdr, "Pw!Secret99", "QuerySecret42", "bob:Pw!Secret99"}
	for _, v := range secrets {
		for name, enc := range forms {
			e := enc(v)
			// The encoded secret whole, and cut to its start, its middle and its end.
			n := len(e)
			for _, piece := range []string{e, e[:n*2/3], e[n/4 : n*3/4], e[n/3:]} {
				text := "server said <" + piece + "> to us"
				got := s.Redact(text)
				if leaked := leakedPiece(got, v, enc); leaked != "" {
					t.Errorf("%s of %q, piece %q: %q survives in %q", name, v, piece, leaked, got)
				}
				if len(piece) >= redact.MinPrefix && !strings.Contains(got, redact.Mask) {
					t.Errorf("%s of %q, piece %q: nothing hidden in %q", name, v, piece, got)
				}
			}
		}
	}
}

// leakedPiece returns a run of redact.MinPrefix bytes of enc(secret) found, ignoring case, in
// text outside its masks, "" when there is none. Base64 pieces that the text's own bytes around
// the secret determine are not the secret's, so only pieces of the part of enc that the secret
// alone fixes are looked for: the encoding of the secret padded at each alignment is compared
// character by character with the encoding of another secret of the same length.
func leakedPiece(text, secret string, enc func(string) string) string {
	full := strings.ToLower(enc(secret))
	other := strings.ToLower(enc(strings.Map(func(r rune) rune { return r ^ 1 }, secret)))
	low := strings.ToLower(text)
	for i := 0; i+redact.MinPrefix <= len(full); i++ {
		w := full[i : i+redact.MinPrefix]
		if len(other) == len(full) && other[i:i+redact.MinPrefix] == w {
			continue // does not depend on the secret
		}
		for _, part := range strings.Split(low, strings.ToLower(redact.Mask)) {
			if strings.Contains(part, w) {
				return w
			}
		}
	}
	return ""
}

func TestAddHeaderHidesTheValueNotTheName(t *testing.T) {
	s := redact.New()
	s.AddHeader("X-Api-Token: HdrSecret000")
	if got := s.Redact("X-Api-Token was HdrSecret000"); got != "X-Api-Token was [REDACTED]" {
		t.Errorf("got %q", got)
	}
}

func TestAddJSONCredentials(t *testing.T) {
	s := redact.New()
	s.AddJSONCredentials([]byte(`{"max_tokens":100,"tokenizer":"meta-llama/Llama-3","extra":{"api_key":"ExtraSecret77"},"auth":["Bearer ListSecret88"]}`))
	for in, want := range map[string]string{
		"k=ExtraSecret77":            "k=[REDACTED]",
		"Bearer ListSecret88":        "Bearer [REDACTED]",
		"tokenizer meta-llama/Llama": "tokenizer meta-llama/Llama",
	} {
		if got := s.Redact(in); got != want {
			t.Errorf("Redact(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestUnion(t *testing.T) {
	a, b := redact.New("FirstSecret1"), redact.New("SecondSecret2")
	if got := redact.Union(a, nil, b).Redact("FirstSecret1 SecondSecret2"); got != "[REDACTED] [REDACTED]" {
		t.Errorf("got %q", got)
	}
}

func TestStripControl(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"plain text", "plain text"},
		{"line one\nfake: line two\r\n", "line one fake: line two  "},
		{"\x1b[31mred\x1b[0m", "red"},
		{"\x1b[2J\x1b[Hcleared", "cleared"},
		{"title\x1b]0;pwned\x07 after", "title after"},
		{"osc\x1b]8;;http://x\x1b\\link", "osclink"},
		{"tab\there", "tab here"},
		{"c1\u009b31m", "c1 31m"},
		{"bidi\u202eevil", "bidi evil"},
		{"sep\u2028line", "sep line"},
		{"bad \xff byte", "bad \uFFFD byte"},
		{"héllo wörld", "héllo wörld"},
	} {
		if got := redact.StripControl(tt.in); got != tt.want {
			t.Errorf("StripControl(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestCleanStripsBeforeItRedacts(t *testing.T) {
	// A server splits an echoed key with an escape sequence that the terminal would not show.
	s := redact.New("sk-SECRETKEY0123456789")
	got := s.Clean("key: sk-SECR\x1b[0mETKEY0123456789\nnext", 100)
	if strings.Contains(got, "SECRETKE") || strings.ContainsAny(got, "\x1b\n") {
		t.Errorf("Clean = %q", got)
	}
}

func TestFileName(t *testing.T) {
	for _, tt := range []struct {
		in   string
		max  int
		want string
	}{
		{"Llama-3.1-8B-Instruct", 100, "Llama-3.1-8B-Instruct"},
		{"org/model", 100, "org_model"},
		{"m\x01\x1b[31mx\ny", 100, "m x y"},
		{"../../etc/passwd", 100, "_._.._etc_passwd"},
		{"-rf", 100, "_rf"},
		{"a:b*c?d\"e<f>g|h\\i", 100, "a_b_c_d_e_f_g_h_i"},
		{"", 100, "_"},
		{"ünïcödé", 5, "ünï"},
		{"m\x00x", 100, "m x"},
	} {
		if got := redact.FileName(tt.in, tt.max); got != tt.want {
			t.Errorf("FileName(%q, %d) = %q, want %q", tt.in, tt.max, got, tt.want)
		}
	}
}

// BenchmarkClean is the sanitiser's cost on what a record carries: a 512-byte server error text
// and a finish reason, with a set built from a key, a header, a URL's credentials and a query.
func BenchmarkClean(b *testing.B) {
	s := redact.New()
	s.AddAPIKey("sk-proj-0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJ")
	s.AddHeader("X-Custom: Bearer hdr-0123456789abcdef")
	s.AddURL("http://user:password123@host:8000/v1?api-version=2024-10-01-secret")
	errText := strings.Repeat("upstream error: the request could not be served; ", 11)[:512]
	b.Run("error text 512 B", func(b *testing.B) {
		b.SetBytes(int64(len(errText)))
		for b.Loop() {
			_ = s.Clean(errText, 512)
		}
	})
	b.Run("finish reason", func(b *testing.B) {
		for b.Loop() {
			_ = s.Clean("stop", 64)
		}
	})
}
