package records

// Unit is what a result's throughputs count: the tokens a kind of endpoint is measured by. A
// generating endpoint (chat, completions, responses) is measured in the output tokens it
// streams; an embeddings endpoint, which generates none, in the input tokens it reads.
type Unit string

// The units. A header without one (every file written before units were kept) counts output
// tokens.
const (
	UnitOutputTokens Unit = "output tokens"
	UnitInputTokens  Unit = "input tokens"
)

// Or returns u, or UnitOutputTokens when u is empty.
func (u Unit) Or() Unit {
	if u == "" {
		return UnitOutputTokens
	}
	return u
}

// Valid reports whether u is empty or one of the units.
func (u Unit) Valid() bool { return u == "" || u == UnitOutputTokens || u == UnitInputTokens }

// Tokens is what r counts in unit u: its output tokens (streamed, whatever its outcome), or for
// UnitInputTokens its input tokens when it ended ok (a failed request delivered nothing).
func (u Unit) Tokens(r *Record) int {
	if u == UnitInputTokens {
		if r.Outcome != OK {
			return 0
		}
		return r.InputTokens
	}
	return r.OutputTokens
}

// Short is the unit's word for a throughput's label: "output" or "input".
func (u Unit) Short() string {
	if u == UnitInputTokens {
		return "input"
	}
	return "output"
}
