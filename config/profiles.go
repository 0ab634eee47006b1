package config

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/wasmsched/wasmsched/abi"
)

// profilesKey is the one key whose sub-keys are not fixed.
const profilesKey = "profiles"

// profileKeyPattern names the keys of an additional profile.
const profileKeyPattern = profilesKey + ".<name>.policies.<slot>.{module,sha256}"

// profileValues are the profile keys set by the file and the command line:
// scheduler name -> policy key (policies.<slot>.<field>) -> raw value. A
// profile present with no keys runs the built-in policies.
type profileValues map[string]map[string]any

func (p profileValues) set(name, sub string, v any) {
	if p[name] == nil {
		p[name] = map[string]any{}
	}
	if sub != "" {
		p[name][sub] = v
	}
}

// unknownProfileKey is the error for a key under profiles.<name> that is not
// policies.<slot>.<field>.
func unknownProfileKey(full string) error {
	return fmt.Errorf("unknown key %q: a profile's keys are %s, with <slot> one of %s",
		full, profileKeyPattern, abi.SlotNames())
}

// addFile adds the profiles subtree of the YAML file.
func (p profileValues) addFile(raw any, where string) []error {
	if raw == nil {
		return nil
	}
	byName, ok := raw.(map[string]any)
	if !ok {
		return []error{fmt.Errorf("%s: %s: want a mapping from scheduler name to profile, got %v", where, profilesKey, raw)}
	}
	var errs []error
	for _, name := range slices.Sorted(maps.Keys(byName)) {
		p.set(name, "", nil)
		var walk func(sub string, v any)
		walk = func(sub string, v any) {
			full := profilesKey + "." + name
			if sub != "" {
				full += "." + sub
			}
			switch m, isMap := v.(map[string]any); {
			case isMap && len(m) > 0:
				for _, kk := range slices.Sorted(maps.Keys(m)) {
					walk(strings.TrimPrefix(sub+"."+kk, "."), m[kk])
				}
			case isProfileField(sub):
				if v != nil { // a key with no value sets nothing
					p.set(name, sub, v)
				}
			case isPolicyPrefix(sub) && isEmpty(v):
				// An empty or null profile, policies or slot sets nothing.
			case isPolicyPrefix(sub):
				errs = append(errs, fmt.Errorf("%s: %s: %v is not a mapping: want %s", where, full, v, profileKeyPattern))
			default:
				errs = append(errs, fmt.Errorf("%s: %w", where, unknownProfileKey(full)))
			}
		}
		walk("", byName[name])
	}
	return errs
}

// isProfileField reports whether sub is a key a profile repeats,
// policies.<slot>.<field> (not policies.adminEndpoint, which is global).
func isProfileField(sub string) bool { return slices.Contains(profileFieldKeys(), sub) }

// isPolicyPrefix reports whether sub is "", "policies" or "policies.<slot>".
func isPolicyPrefix(sub string) bool {
	if sub == "" || sub == "policies" {
		return true
	}
	slot, ok := strings.CutPrefix(sub, "policies.")
	if !ok {
		return false
	}
	_, ok = abi.ParseSlot(slot)
	return ok
}

// addOverride adds one command-line key profiles.<name>.policies.<slot>.<field>.
// The name is everything between "profiles." and the last three segments,
// so it may contain dots.
func (p profileValues) addOverride(full string, v string) error {
	segs := strings.Split(strings.TrimPrefix(full, profilesKey+"."), ".")
	if full == profilesKey || len(segs) < 4 || segs[len(segs)-3] != "policies" {
		return unknownProfileKey(full)
	}
	name := strings.Join(segs[:len(segs)-3], ".")
	sub := strings.Join(segs[len(segs)-3:], ".")
	if !isProfileField(sub) {
		return unknownProfileKey(full)
	}
	p.set(name, sub, v)
	return nil
}

// bind checks the values of profile name as the policies.* keys they
// repeat, defaults where unset, and stores them in a slotValues.
func (p profileValues) bind(name string) (slotValues, []error) {
	var t target
	var errs []error
	for _, field := range profileFieldKeys() {
		key, _ := lookup(field)
		raw, ok := p[name][field]
		if !ok {
			raw = key.def
		}
		store, err := key.set(raw)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s.%s.%s: %w", profilesKey, name, field, err))
			continue
		}
		store(&t)
	}
	return t.slots, errs
}

// profileFieldKeys are the policies.<slot>.<field> keys, which every profile
// repeats.
func profileFieldKeys() []string {
	var out []string
	for _, s := range abi.Slots {
		for _, f := range policyFields(s) {
			out = append(out, "policies."+s.String()+"."+f)
		}
	}
	return out
}

// policies builds one profile's slots from its policies.<slot>.* values;
// prefix is what precedes "policies." in the key names of its errors.
func policies(prefix string, slots *slotValues) (map[abi.Slot]Module, []error) {
	out := map[abi.Slot]Module{}
	var errs []error
	for i, s := range abi.Slots {
		m := slots[i]
		switch {
		case m.Path == NativeModule && s.Placement():
			errs = append(errs, fmt.Errorf("%spolicies.%s.module: the %s slot has no policy compiled into the binary: set a module file, or leave it empty for no %s policy",
				prefix, s, s, s))
		case m.Path == "" && m.FailurePolicy != "":
			errs = append(errs, fmt.Errorf("%[1]spolicies.%[2]s.failurePolicy: set without %[1]spolicies.%[2]s.module: set the module file, or remove the failurePolicy (a SchedulingPolicy object carries its own)", prefix, s))
		case m.Path == NativeModule && m.SHA256 != "":
			errs = append(errs, fmt.Errorf("%[1]spolicies.%[2]s.sha256: set with %[1]spolicies.%[2]s.module %[3]s, the policy compiled into the binary, which has no file to pin: "+
				"remove the sha256, or set the module to a file (a file named %[3]s is ./%[3]s)", prefix, s, NativeModule))
		case m.Path == NativeModule:
			out[s] = Module{Native: true}
		case m.Path != "":
			out[s] = m
		case m.SHA256 != "":
			errs = append(errs, fmt.Errorf("%[1]spolicies.%[2]s.sha256: set without %[1]spolicies.%[2]s.module: pin a module file or remove the sha256", prefix, s))
		}
	}
	return out, errs
}
