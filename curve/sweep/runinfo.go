package sweep

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/loadcurve/loadcurve/curve/result"
	"github.com/loadcurve/loadcurve/measure/records"
)

// MaxName bounds a run's label and a metadata key, in bytes.
const MaxName = 256

// CheckName says what is wrong with a run's label or a metadata key, "" when nothing: at most
// MaxName bytes of valid UTF-8 without control characters.
func CheckName(s string) string {
	switch {
	case len(s) > MaxName:
		return fmt.Sprintf("is %d bytes long, more than %d", len(s), MaxName)
	case !utf8.ValidString(s):
		return "is not valid UTF-8"
	case strings.ContainsFunc(s, unicode.IsControl):
		return "has a control character"
	}
	return ""
}

// ParseMetadata reads a run's KEY=VALUE pairs (vLLM's --metadata), in order: the key and value
// without surrounding blanks, as vLLM takes them, each key given once, a name (CheckName), and
// not one of the result's own keys (ReservedKey), beside which the pairs are written. Each
// problem names its pair by position: "#2: …".
func ParseMetadata(pairs []string) (records.Metadata, []error) {
	var md records.Metadata
	var errs []error
	seen := map[string]int{}
	for i, kv := range pairs {
		k, v, ok := strings.Cut(kv, "=")
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		switch {
		case !ok:
			errs = append(errs, fmt.Errorf("#%d: no '=' in %q: want KEY=VALUE, e.g. tp=2", i+1, kv))
		case k == "":
			errs = append(errs, fmt.Errorf("#%d: empty key before '=': want KEY=VALUE, e.g. tp=2", i+1))
		case CheckName(k) != "":
			errs = append(errs, fmt.Errorf("#%d: the key %s", i+1, CheckName(k)))
		case seen[k] > 0:
			errs = append(errs, fmt.Errorf("#%d: key %q given twice (#%d and #%d): give each key once", i+1, k, seen[k], i+1))
		case result.ReservedKey(k) != "":
			errs = append(errs, fmt.Errorf("#%d: %s, beside which the metadata is written: choose another key", i+1, result.ReservedKey(k)))
		default:
			seen[k] = i + 1
			md = append(md, records.MetaPair{Key: k, Value: v})
		}
	}
	return md, errs
}
