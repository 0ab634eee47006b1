// Package config loads wasmsched's configuration into plain typed structs:
// defaults, then a YAML file, then WASMSCHED_* environment variables, then
// command-line overrides, each layer replacing the one before. Every key is
// known in advance: an unknown key, a value of the wrong type or one out of
// range is an error that names the key, what was wrong and what is allowed.
//
// Only this package imports koanf; subsystems receive the typed values.
package config

import (
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/knadh/koanf/parsers/yaml"
	"github.com/knadh/koanf/providers/confmap"
	"github.com/knadh/koanf/providers/env/v2"
	"github.com/knadh/koanf/providers/file"
	"github.com/knadh/koanf/v2"

	"github.com/wasmsched/wasmsched/abi"
)

// Config is the validated configuration.
type Config struct {
	Sandbox Sandbox
	// Policies holds the slots whose module comes from a file; a slot not
	// listed uses the policy built into the binary.
	Policies map[abi.Slot]Module
}

// Sandbox are the limits every policy module runs under.
type Sandbox struct {
	// MemoryPages caps a module's linear memory in 64 KiB pages.
	MemoryPages uint32
	// Deadline bounds one call into a module.
	Deadline time.Duration
	// PoolSize is how many idle instances of a module are kept for reuse.
	PoolSize int
	// WatchdogTick is how often the watchdog checks for overrunning calls; a
	// call is stopped within Deadline plus two ticks.
	WatchdogTick time.Duration
}

// Module is a policy module loaded from a file.
type Module struct {
	Path string
	// SHA256, when set, pins the file's content (lowercase hex): a file that
	// does not match is refused.
	SHA256 string
}

// EnvPrefix starts every environment variable the configuration reads.
const EnvPrefix = "WASMSCHED_"

// maxMemoryPages matches the runtime's bound: an output pointer must stay
// below 2 GiB.
const maxMemoryPages = 32768

type kind int

const (
	kindInt kind = iota
	kindDuration
	kindString
)

// key describes one configuration key.
type key struct {
	name  string
	kind  kind
	def   any
	help  string
	check func(v any) error // nil: any value of the kind
}

func intRange(lo, hi int64) func(any) error {
	return func(v any) error {
		if n := v.(int64); n < lo || n > hi {
			return fmt.Errorf("%d is out of range: allowed %d to %d", n, lo, hi)
		}
		return nil
	}
}

func durationRange(lo, hi time.Duration) func(any) error {
	return func(v any) error {
		if d := v.(time.Duration); d < lo || d > hi {
			return fmt.Errorf("%v is out of range: allowed %v to %v", d, lo, hi)
		}
		return nil
	}
}

func checkSHA256(v any) error {
	s := v.(string)
	if s == "" {
		return nil
	}
	if b, err := hex.DecodeString(s); err != nil || len(b) != 32 || strings.ToLower(s) != s {
		return fmt.Errorf("%q is not a sha256: want 64 lowercase hex digits (sha256sum FILE prints it)", s)
	}
	return nil
}

// keys is every key the configuration knows, in documentation order.
var keys = func() []key {
	ks := []key{
		{name: "sandbox.memoryPages", kind: kindInt, def: int64(256), check: intRange(2, maxMemoryPages),
			help: "memory limit of a policy module, in 64 KiB pages"},
		{name: "sandbox.deadline", kind: kindDuration, def: 100 * time.Millisecond, check: durationRange(time.Millisecond, time.Minute),
			help: "deadline of one call into a policy module"},
		{name: "sandbox.poolSize", kind: kindInt, def: int64(4), check: intRange(0, 1024),
			help: "idle instances kept per policy module"},
		{name: "sandbox.watchdogTick", kind: kindDuration, def: time.Millisecond, check: durationRange(100*time.Microsecond, time.Second),
			help: "how often the watchdog looks for calls past their deadline"},
	}
	for _, s := range abi.Slots {
		ks = append(ks,
			key{name: "policies." + s.String() + ".module", kind: kindString, def: "",
				help: "file of the " + s.String() + " policy module (empty: the built-in policy)"},
			key{name: "policies." + s.String() + ".sha256", kind: kindString, def: "", check: checkSHA256,
				help: "sha256 the " + s.String() + " module file must have (empty: not pinned)"},
		)
	}
	return ks
}()

func lookup(name string) (key, bool) {
	for _, k := range keys {
		if k.name == name {
			return k, true
		}
	}
	return key{}, false
}

// EnvName is the environment variable of a key: sandbox.memoryPages is
// WASMSCHED_SANDBOX_MEMORY_PAGES.
func EnvName(name string) string {
	var b strings.Builder
	b.WriteString(EnvPrefix)
	for i, r := range name {
		switch {
		case r == '.':
			b.WriteByte('_')
		case r >= 'A' && r <= 'Z':
			if i > 0 && name[i-1] != '.' {
				b.WriteByte('_')
			}
			b.WriteRune(r)
		default:
			b.WriteString(strings.ToUpper(string(r)))
		}
	}
	return b.String()
}

// Source says where configuration comes from besides the defaults.
type Source struct {
	// File is a YAML file; empty for none.
	File string
	// Environ is the environment (os.Environ() in the command); only
	// WASMSCHED_* variables are read.
	Environ []string
	// Overrides are key=value settings from the command line, applied last.
	Overrides map[string]string
}

// Load reads the layers of src over the defaults and validates the result.
func Load(src Source) (*Config, error) {
	k := koanf.New(".")
	defaults := map[string]any{}
	for _, key := range keys {
		defaults[key.name] = key.def
	}
	if err := k.Load(confmap.Provider(defaults, "."), nil); err != nil {
		return nil, err
	}
	var errs []error
	if src.File != "" {
		if _, err := os.Stat(src.File); err != nil {
			return nil, fmt.Errorf("config file: %w", err)
		}
		fk := koanf.New(".")
		if err := fk.Load(file.Provider(src.File), yaml.Parser()); err != nil {
			return nil, fmt.Errorf("config file %s: not valid YAML: %w", src.File, err)
		}
		errs = append(errs, unknownKeys(fk.Keys(), "config file "+src.File)...)
		if err := k.Merge(fk); err != nil {
			return nil, err
		}
	}
	envKeys := map[string]string{}
	for _, key := range keys {
		envKeys[EnvName(key.name)] = key.name
	}
	ek := koanf.New(".")
	if err := ek.Load(env.Provider(".", env.Opt{
		Prefix:      EnvPrefix,
		EnvironFunc: func() []string { return src.Environ },
		TransformFunc: func(name, value string) (string, any) {
			if key, ok := envKeys[name]; ok {
				return key, value
			}
			errs = append(errs, fmt.Errorf("environment variable %s: unknown; known variables: %s",
				name, strings.Join(slices.Sorted(maps.Keys(envKeys)), ", ")))
			return "", nil
		},
	}), nil); err != nil {
		return nil, err
	}
	if err := k.Merge(ek); err != nil {
		return nil, err
	}
	if len(src.Overrides) > 0 {
		over := map[string]any{}
		for name, v := range src.Overrides {
			over[name] = v
		}
		errs = append(errs, unknownKeys(slices.Collect(maps.Keys(over)), "command line")...)
		ok := koanf.New(".")
		if err := ok.Load(confmap.Provider(over, "."), nil); err != nil {
			return nil, err
		}
		if err := k.Merge(ok); err != nil {
			return nil, err
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return build(k)
}

func unknownKeys(names []string, where string) []error {
	var errs []error
	for _, n := range names {
		if _, ok := lookup(n); !ok {
			errs = append(errs, fmt.Errorf("%s: unknown key %q; known keys: %s", where, n, strings.Join(KeyNames(), ", ")))
		}
	}
	return errs
}

// KeyNames lists every key, in documentation order.
func KeyNames() []string {
	names := make([]string, len(keys))
	for i, k := range keys {
		names[i] = k.name
	}
	return names
}

// build converts and validates every key.
func build(k *koanf.Koanf) (*Config, error) {
	vals := map[string]any{}
	var errs []error
	for _, key := range keys {
		v, err := convert(key, k.Get(key.name))
		if err == nil && key.check != nil {
			err = key.check(v)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", key.name, err))
			continue
		}
		vals[key.name] = v
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	c := &Config{
		Sandbox: Sandbox{
			MemoryPages:  uint32(vals["sandbox.memoryPages"].(int64)),
			Deadline:     vals["sandbox.deadline"].(time.Duration),
			PoolSize:     int(vals["sandbox.poolSize"].(int64)),
			WatchdogTick: vals["sandbox.watchdogTick"].(time.Duration),
		},
		Policies: map[abi.Slot]Module{},
	}
	if c.Sandbox.WatchdogTick*2 > c.Sandbox.Deadline {
		errs = append(errs, fmt.Errorf("sandbox.watchdogTick: %v is more than half of sandbox.deadline (%v): a call could overrun its deadline by more than the deadline itself; lower the tick or raise the deadline",
			c.Sandbox.WatchdogTick, c.Sandbox.Deadline))
	}
	for _, s := range abi.Slots {
		m := Module{Path: vals["policies."+s.String()+".module"].(string), SHA256: vals["policies."+s.String()+".sha256"].(string)}
		switch {
		case m.Path != "":
			c.Policies[s] = m
		case m.SHA256 != "":
			errs = append(errs, fmt.Errorf("policies.%s.sha256: set without policies.%s.module: pin a module file or remove the sha256", s, s))
		}
	}
	return c, errors.Join(errs...)
}

// convert turns a value from any layer (YAML types or strings from the
// environment and the command line) into the key's kind.
func convert(k key, v any) (any, error) {
	switch k.kind {
	case kindInt:
		switch x := v.(type) {
		case int64:
			return x, nil
		case int:
			return int64(x), nil
		case float64:
			if x == float64(int64(x)) {
				return int64(x), nil
			}
		case string:
			if n, err := strconv.ParseInt(strings.TrimSpace(x), 10, 64); err == nil {
				return n, nil
			}
		}
		return nil, fmt.Errorf("%v is not an integer", v)
	case kindDuration:
		switch x := v.(type) {
		case time.Duration:
			return x, nil
		case string:
			if d, err := time.ParseDuration(strings.TrimSpace(x)); err == nil {
				return d, nil
			}
		}
		return nil, fmt.Errorf("%v is not a duration: write it like 100ms, 2s or 1m", v)
	case kindString:
		if s, ok := v.(string); ok {
			return s, nil
		}
		return nil, fmt.Errorf("%v is not a string", v)
	}
	return nil, fmt.Errorf("unknown kind (bug)")
}

// Help describes every key with its environment variable and default.
func Help() string {
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "  %-28s %-42s default %v\n      %s\n", k.name, EnvName(k.name), fmtDefault(k.def), k.help)
	}
	return b.String()
}

func fmtDefault(v any) string {
	if s, ok := v.(string); ok && s == "" {
		return `""`
	}
	return fmt.Sprint(v)
}
