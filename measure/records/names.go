package records

import "github.com/loadcurve/loadcurve/internal/redact"

// cleanText makes the texts a records file carries fit for a terminal and a file: a file written
// by hand, by an older version, or holding a server's words is read without its control
// characters and escape sequences (redact.StripControl), so that no output shows them, and no
// SVG or file name is made invalid by them. Secrets cannot be hidden here (the file does not
// know them): the writer hid them.
func (h *Header) cleanText() {
	for _, s := range []*string{&h.Target, &h.Sim, &h.SimBalance, &h.Endpoint, &h.Model, &h.Workload, &h.Tokenizer, &h.Arrival,
		&h.CachePolicy, &h.Shard, &h.RequestIDPrefix, &h.Label} {
		*s = redact.StripControl(*s)
	}
	for i := range h.Metadata {
		h.Metadata[i].Key = redact.StripControl(h.Metadata[i].Key)
		h.Metadata[i].Value = redact.StripControl(h.Metadata[i].Value)
	}
}

// cleanText strips control characters from a record's server texts, as Header.cleanText does.
func (r *Record) cleanText() {
	r.FinishReason = redact.StripControl(r.FinishReason)
	r.Error = redact.StripControl(r.Error)
}

// cleanNote is a note read from a file (a cut line's error), without control characters and
// bounded to MaxNoteLen bytes.
func cleanNote(s string) string { return BoundText(redact.StripControl(s), MaxNoteLen) }
