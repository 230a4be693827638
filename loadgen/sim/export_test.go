package sim

import "time"

// The real-time plateau test (package sim_test) and the virtual-engine
// check of the same configuration share these.
const (
	plateauIn  = 64
	plateauOut = 32
	PlateauIn  = plateauIn
	PlateauOut = plateauOut
)

// PlateauConfig is a small deployment whose plateau is reached in well
// under a second: 8 sequences, steps of about 7 ms.
func PlateauConfig() Config { return plateauConfig() }

func plateauConfig() Config {
	c := mediumProfile()
	c.MaxNumSeqs = 8
	c.KVCacheTokens = 8192
	c.MaxBatchedTokens = 256
	c.MaxModelLen = 1024
	c.StepBase = 4 * time.Millisecond
	c.StepPerSeq = 250 * time.Microsecond
	c.StepPerKVToken = time.Microsecond
	c.PrefillRate = 50000
	c.PrefixCacheBlocks = 0
	return c
}

// LatenessLogged reports whether the engine has logged the lateness of
// every step it has applied. It logs a step's lateness only after handing
// out the step's tokens, so a client that holds its last token may read
// Stats before that step's lateness is in StepLatenessMax.
func (s *Server) LatenessLogged() bool {
	steps := s.eng.steps.Load()
	s.eng.lateness.mu.Lock()
	defer s.eng.lateness.mu.Unlock()
	return int64(s.eng.lateness.n) >= steps
}

// GeneratedText is the text of generated tokens [from, to), as the
// simulator sends it whichever field carries it (every token but the first
// of the response preceded by a space).
func GeneratedText(from, to int) string { return string(appendTokens(nil, from, to)) }
