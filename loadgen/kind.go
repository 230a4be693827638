package loadgen

import (
	"fmt"
	"slices"
	"strings"

	"github.com/loadcurve/loadcurve/internal/field"
	"github.com/loadcurve/loadcurve/measure/records"
	"github.com/loadcurve/loadcurve/workloads"
)

// Endpoint names a kind of endpoint: the value of --endpoint and the records header's
// "endpoint". The zero value is Chat.
type Endpoint string

// Kind is one kind of endpoint: how a request is sent to it and how its answer is read into a
// record. Each kind lives in its own file (chat.go, completions.go, responses.go, embeddings.go)
// and registers itself there (register); nothing else in the client branches on the kind.
//
// A kind is either a streamKind (its answer is a server-sent event stream read chunk by chunk)
// or a documentKind (its answer is one JSON document).
type Kind interface {
	// Name is the kind's name (--endpoint).
	Name() Endpoint
	// Route is the path of the kind's API below the base URL, e.g. "/chat/completions".
	Route() string
	// Unit is what the kind's throughputs count.
	Unit() records.Unit
	// MaxTokensParam is the body member that bounds the output ("max_tokens"), "" when the
	// kind generates no output.
	MaxTokensParam() string
	// appendMembers appends the request's members after "model" to b, a body that starts with
	// '{' (use member, which skips those the extra body overrides).
	appendMembers(b []byte, p *bodyPlan, req *workloads.Request) []byte
}

// streamKind is a kind answered with a server-sent event stream.
type streamKind interface {
	Kind
	// parseEvent reads one whole data payload into ci (the record's moments: output, answer or
	// reasoning, finish reason, usage, an error, the end of the response), validating it as
	// JSON, without allocating on the usual path.
	parseEvent(payload []byte, ci *chunkInfo) error
	// appendText appends the generated answer text of a payload parseEvent accepted (only for
	// requests whose check or next turn needs it).
	appendText(payload []byte, text *strings.Builder)
	// lastEvent names the event that ends a whole response, for the message of a stream that
	// ended without it ("data: [DONE]").
	lastEvent() string
}

// documentKind is a kind answered with one JSON document.
type documentKind interface {
	Kind
	// readDocument reads a 2xx answer's body into d; an error says why it is not an answer.
	readDocument(body []byte, d *document) error
}

// document is what a documentKind's answer tells the client.
type document struct {
	prompt   int  // usage.prompt_tokens (when promptOK)
	promptOK bool // a valid count
}

// kinds is the registry of endpoint kinds, keyed by name; register fills it from each kind's
// file.
var kinds = map[Endpoint]Kind{}

// register adds k to the registry. A kind must stream or answer with a document, and its name
// must be new and lower case; anything else is a programming error.
func register(k Kind) {
	name := k.Name()
	_, isStream := k.(streamKind)
	_, isDoc := k.(documentKind)
	switch {
	case name == "" || string(name) != strings.ToLower(string(name)):
		panic(fmt.Sprintf("loadgen: endpoint kind name %q must be lower case and not empty", name))
	case kinds[name] != nil:
		panic(fmt.Sprintf("loadgen: endpoint kind %q registered twice", name))
	case isStream == isDoc:
		panic(fmt.Sprintf("loadgen: endpoint kind %q must either stream or answer with a document", name))
	case !strings.HasPrefix(k.Route(), "/"):
		panic(fmt.Sprintf("loadgen: endpoint kind %q: route %q must start with /", name, k.Route()))
	}
	kinds[name] = k
}

// Kinds returns the names of the registered kinds, sorted.
func Kinds() []Endpoint {
	names := make([]Endpoint, 0, len(kinds))
	for n := range kinds {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// kindNames is the registered names joined for a message: "chat, completions or embeddings".
func kindNames() string {
	names := Kinds()
	s := make([]string, len(names))
	for i, n := range names {
		s[i] = string(n)
	}
	if len(s) < 2 {
		return strings.Join(s, "")
	}
	return strings.Join(s[:len(s)-1], ", ") + " or " + s[len(s)-1]
}

// ParseEndpoint parses an endpoint kind (FieldEndpoint): the name of a registered kind, whatever its
// letter case and surrounding blanks.
func ParseEndpoint(s string) (Endpoint, error) {
	e := Endpoint(strings.ToLower(strings.TrimSpace(s)))
	if kinds[e] != nil {
		return e, nil
	}
	return "", field.Errorf(FieldEndpoint, "want %s, got %q", kindNames(), s)
}

// EndpointOfRoute returns the kind whose route the path ends with ("/v1/chat/completions" is
// chat); the longest route wins, so that chat/completions is not taken for completions.
func EndpointOfRoute(path string) (Endpoint, bool) {
	path = strings.TrimRight(path, "/")
	var best Kind
	for _, k := range kinds {
		if strings.HasSuffix(path, k.Route()) && (best == nil || len(k.Route()) > len(best.Route())) {
			best = k
		}
	}
	if best == nil {
		return "", false
	}
	return best.Name(), true
}

// Kind returns the kind e names (Chat for the zero value); nil when none is registered.
func (e Endpoint) Kind() Kind {
	if e == "" {
		e = Chat
	}
	return kinds[e]
}

func (e Endpoint) String() string {
	if e == "" {
		return string(Chat)
	}
	return string(e)
}

// Route is the path of e's API below the base URL ("" for an unknown kind).
func (e Endpoint) Route() string {
	if k := e.Kind(); k != nil {
		return k.Route()
	}
	return ""
}

// Unit is what e's throughputs count (UnitOutputTokens for an unknown kind).
func (e Endpoint) Unit() records.Unit {
	if k := e.Kind(); k != nil {
		return k.Unit()
	}
	return records.UnitOutputTokens
}

// Streams reports whether e's answers are event streams.
func (e Endpoint) Streams() bool {
	_, ok := e.Kind().(streamKind)
	return ok
}

// member starts the member key in b (a body that starts with '{') and reports true, unless the
// extra body overrides key: then b is returned as it is, with false.
func member(b []byte, p *bodyPlan, key string) ([]byte, bool) {
	if p.override[key] {
		return b, false
	}
	if len(b) > 1 {
		b = append(b, ',')
	}
	b = append(b, '"')
	b = append(b, key...)
	return append(b, '"', ':'), true
}
