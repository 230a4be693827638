package records

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
)

// Seal is what a tier's closing line says of the lines it closes, so that a reader can tell
// that they are the ones written (a resumed sweep keeps finished tiers only when they are):
// how many request lines the tier wrote, a digest of every line of the tier (its tier line,
// its request lines and its server metrics, in file order), and a digest of the header line
// the tier was written under. The Writer computes it from the bytes it writes; Seals
// recomputes it from the bytes a file holds. It is a check against edits and accidents (a
// line deleted, added or changed, a header edited by hand), not a signature: anyone can
// compute a SHA-256.
type Seal struct {
	// Records is the number of request lines of the tier.
	Records int `json:"records"`
	// Lines is "sha256:" and the hex SHA-256 of the tier's lines, each with its newline.
	Lines string `json:"lines"`
	// Header is the same digest of the header line; "" when the writer did not know it.
	Header string `json:"header,omitempty"`
}

// digestPrefix names the hash of a Seal's digests.
const digestPrefix = "sha256:"

// lineSum is the running seal of one tier's lines.
type lineSum struct {
	records int
	h       hash.Hash
	// closed: the tier's closing line came (Seals: every later line of the tier breaks it).
	closed bool
}

func newLineSum() *lineSum { return &lineSum{h: sha256.New()} }

// add hashes one line (without its line ending; the newline is hashed after it).
func (s *lineSum) add(line []byte) {
	s.h.Write(line)
	s.h.Write(newline)
}

var newline = []byte{'\n'}

func (s *lineSum) sum() string { return digestPrefix + hex.EncodeToString(s.h.Sum(nil)) }

// lineDigest is the digest of one line (the header's).
func lineDigest(line []byte) string {
	s := newLineSum()
	s.add(line)
	return s.sum()
}

// sealer seals the tiers a Writer writes: it follows every line of every tier it opened.
type sealer struct {
	header string
	tiers  map[int]*lineSum
	// last is the tier of the last line: records of a tier come together, so most lookups are
	// this one.
	last    int
	lastSum *lineSum
}

// of returns the running sum of tier, nil when the tier line was not written here.
func (s *sealer) of(tier int) *lineSum {
	if s.lastSum != nil && s.last == tier {
		return s.lastSum
	}
	sum := s.tiers[tier]
	if sum != nil {
		s.last, s.lastSum = tier, sum
	}
	return sum
}

// open starts the seal of a tier with its tier line.
func (s *sealer) open(tier int, line []byte) {
	if s.tiers == nil {
		s.tiers = map[int]*lineSum{}
	}
	sum := newLineSum()
	sum.add(line)
	s.tiers[tier] = sum
	s.last, s.lastSum = tier, sum
}

// close ends the seal of a tier: nil when its tier line was not written here (nothing to say
// of its lines).
func (s *sealer) close(tier int) *Seal {
	sum := s.of(tier)
	if sum == nil {
		return nil
	}
	delete(s.tiers, tier)
	s.lastSum = nil
	return &Seal{Records: sum.records, Lines: sum.sum(), Header: s.header}
}

// SealState is what Seals found of one tier.
type SealState int

const (
	// Unsealed: the tier has no closing line, or one without a seal (a file of an older
	// loadcurve): nothing can be said of its lines.
	Unsealed SealState = iota
	// Whole: the tier's lines and the header are the ones its seal states.
	Whole
	// Broken: they are not (SealError says what differs).
	Broken
)

// SealError says how a sealed tier's lines, or the header, differ from what its seal states.
type SealError struct {
	Tier int
	// What differs, in words: "its closing line counts 21 request lines, the file holds 11".
	What string
}

func (e *SealError) Error() string {
	return fmt.Sprintf("tier %d was changed after it finished: %s", e.Tier, e.What)
}

// Seals recomputes the seals of a file's tiers from the lines it holds, as Scan reads them
// (Visitor.Seals), and compares each with the one its closing line states.
type Seals struct {
	header string
	tiers  map[int]*lineSum
	state  map[int]SealState
	broken map[int]*SealError
}

// NewSeals returns Seals to give Scan.
func NewSeals() *Seals {
	return &Seals{tiers: map[int]*lineSum{}, state: map[int]SealState{}, broken: map[int]*SealError{}}
}

// State is what the scan found of tier's seal, with the difference when it is Broken.
func (s *Seals) State(tier int) (SealState, *SealError) {
	return s.state[tier], s.broken[tier]
}

func (s *Seals) breakTier(tier int, format string, a ...any) {
	if s.state[tier] == Broken {
		return // the first difference is the one said
	}
	s.state[tier] = Broken
	s.broken[tier] = &SealError{Tier: tier, What: fmt.Sprintf(format, a...)}
}

// add follows one line of the file (trimmed, as Scan parsed it into o).
func (s *Seals) add(o object, line []byte) {
	tier := -1
	switch {
	case o.header != nil:
		s.header = lineDigest(line)
		return
	case o.tier != nil:
		sum := newLineSum()
		sum.add(line)
		s.tiers[o.tier.Tier] = sum
		return
	case o.end != nil:
		s.close(*o.end)
		return
	case o.record != nil:
		tier = o.record.Tier
	case o.metrics != nil:
		tier = o.metrics.Tier
	}
	sum := s.tiers[tier]
	if sum == nil {
		return // Scan refuses a line of an undeclared tier
	}
	if sum.closed {
		if s.state[tier] == Whole {
			s.breakTier(tier, "%s of it follows its closing line", lineKind(o))
		}
		return
	}
	sum.add(line)
	if o.record != nil {
		sum.records++
	}
}

// close compares the tier's lines so far with the seal of its closing line e.
func (s *Seals) close(e TierEnd) {
	sum := s.tiers[e.Tier]
	if sum == nil {
		return
	}
	sum.closed = true
	seal := e.Seal
	if seal == nil {
		return // Unsealed
	}
	s.state[e.Tier] = Whole
	switch {
	case sum.records != seal.Records:
		s.breakTier(e.Tier, "its closing line counts %d request lines, the file holds %d", seal.Records, sum.records)
	case sum.sum() != seal.Lines:
		s.breakTier(e.Tier, "its %d request lines are there, but a line of it (its tier line, a request line or its server metrics) is not as it was written (the digest of its lines differs)", seal.Records)
	case seal.Header != "" && seal.Header != s.header:
		s.breakTier(e.Tier, "the header (line 1) is not the one it was written under: it was edited")
	}
}

func lineKind(o object) string {
	if o.record != nil {
		return "a request line"
	}
	return "a server-metrics line"
}
