package sim

import "github.com/loadcurve/loadcurve/internal/field"

// FieldProfile names the profile in ConfigFrom's errors; the parameters are named as in Params.
const FieldProfile = "profile"

// ConfigFrom builds a Config from the named profile and the parameters lookup finds (by Params
// name, as text), validated. An unknown profile is the only problem returned; otherwise the
// first parameter that cannot be read is; otherwise every problem of the result is (Validate's).
// A problem of one setting is a field.Error named by it (FieldProfile, or the parameter), whose
// message leaves the name out; the fault rates' sum, which concerns three, is a plain error.
func ConfigFrom(profile string, lookup func(name string) (string, bool)) (Config, []error) {
	cfg, err := Profile(profile)
	if err != nil {
		return cfg, []error{field.Errorf(FieldProfile, "%v", err)}
	}
	ps := cfg.Params()
	for i := range ps {
		if v, ok := lookup(ps[i].Field); ok {
			if err := ps[i].Set(v); err != nil {
				return cfg, []error{err}
			}
		}
	}
	return cfg, cfg.problems()
}
