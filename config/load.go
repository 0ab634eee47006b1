package config

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/knadh/koanf/parsers/yaml"
	"github.com/knadh/koanf/providers/confmap"
	"github.com/knadh/koanf/providers/env/v2"
	"github.com/knadh/koanf/providers/file"
	"github.com/knadh/koanf/v2"
	kschedv1 "k8s.io/kube-scheduler/config/v1"
)

// Source says where configuration comes from besides the defaults.
type Source struct {
	// File is a YAML file; empty for none.
	File string
	// Environ is the environment (os.Environ() in the command); only
	// WASMSCHED_* variables are read.
	Environ []string
	// Overrides are key=value settings from the command line, applied last.
	// Profile keys (profiles.<name>.policies.<slot>.module) are allowed.
	Overrides map[string]string
	// Plugins checks a KubeSchedulerConfiguration profile's plugins and
	// pluginConfig when the file is one (host/framework's Registry does,
	// with the plugins of the binary); nil leaves them to the scheduler,
	// which refuses them when it builds the profiles.
	Plugins PluginChecker
}

// PluginChecker checks one profile's plugin sets and plugin args as the
// scheduler would build them, without building anything.
type PluginChecker interface {
	Check(plugins *kschedv1.Plugins, pluginConfig []kschedv1.PluginConfig) error
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
	profiles := profileValues{}
	var ks *kubeSchedulerLayer
	if src.File != "" {
		data, err := os.ReadFile(src.File)
		if err != nil {
			return nil, fmt.Errorf("config file: %w", err)
		}
		upstream, err := isKubeSchedulerFile(data)
		if err != nil {
			return nil, fmt.Errorf("config file %s: %w", src.File, err)
		}
		if upstream {
			where := "config file " + src.File + " (" + KubeSchedulerKind + ")"
			var kerrs []error
			if ks, kerrs = loadKubeScheduler(data, where, profiles, src.Plugins); len(kerrs) > 0 {
				return nil, errors.Join(kerrs...)
			}
			if err := k.Load(confmap.Provider(ks.values, "."), nil); err != nil {
				return nil, err
			}
		}
	}
	if src.File != "" && ks == nil {
		fk := koanf.New(".")
		if err := fk.Load(file.Provider(src.File), yaml.Parser()); err != nil {
			return nil, fmt.Errorf("config file %s: not valid YAML: %w", src.File, err)
		}
		// Profile names may contain the key delimiter, so the profiles
		// subtree is read as the YAML nests it rather than from flattened keys.
		if raw, ok := fk.Raw()[profilesKey]; ok {
			errs = append(errs, profiles.addFile(raw, "config file "+src.File)...)
			fk.Delete(profilesKey)
		}
		// A null or empty mapping sets nothing: `policies: {}` or a key
		// with no value keeps the defaults below it.
		for _, name := range fk.Keys() {
			if v := fk.Get(name); v == nil && isKnown(name) || isEmpty(v) && isSection(name) {
				fk.Delete(name)
			}
		}
		errs = append(errs, unknownKeys(fk.Keys(), "config file "+src.File)...)
		if err := k.Merge(fk); err != nil {
			return nil, err
		}
	}
	envKeys := map[string]string{}
	envNames := make([]string, len(keys))
	for i, key := range keys {
		envNames[i] = EnvName(key.name)
		envKeys[envNames[i]] = key.name
	}
	profilesEnv := EnvName(profilesKey) + "_"
	ek := koanf.New(".")
	if err := ek.Load(env.Provider(".", env.Opt{
		Prefix:      EnvPrefix,
		EnvironFunc: func() []string { return src.Environ },
		TransformFunc: func(name, value string) (string, any) {
			if key, ok := envKeys[name]; ok {
				return key, value
			}
			if strings.HasPrefix(name, profilesEnv) {
				errs = append(errs, fmt.Errorf("environment variable %s: profiles cannot be set from the environment "+
					"(a scheduler name may contain '-' and '.', which a variable name cannot carry): set %s in the config file or on the command line",
					name, profileKeyPattern))
				return "", nil
			}
			errs = append(errs, fmt.Errorf("environment variable %s: unknown%s (wasmsched help config lists every variable)",
				name, didYouMean(name, envNames)))
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
			if name == profilesKey || strings.HasPrefix(name, profilesKey+".") {
				if err := profiles.addOverride(name, v); err != nil {
					errs = append(errs, fmt.Errorf("command line: %w", err))
				}
				continue
			}
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
	return build(k, profiles, ks)
}

// unknownKeys are the errors for the names that are no key, each with the
// nearest key when one is near.
func unknownKeys(names []string, where string) []error {
	var errs []error
	for _, n := range slices.Sorted(slices.Values(names)) {
		if !isKnown(n) {
			errs = append(errs, fmt.Errorf("%s: unknown key %q%s (wasmsched help config lists every key; an additional profile's keys are %s)",
				where, n, didYouMean(n, KeyNames()), profileKeyPattern))
		}
	}
	return errs
}

// isEmpty reports whether a YAML value is null or an empty mapping.
func isEmpty(v any) bool {
	m, ok := v.(map[string]any)
	return v == nil || ok && len(m) == 0
}

// build converts and checks every key, stores each in its field through
// the key's binding, then checks what involves several keys and builds the
// profiles, with their plugins when the file was a KubeSchedulerConfiguration
// (ks not nil).
func build(k *koanf.Koanf, profiles profileValues, ks *kubeSchedulerLayer) (*Config, error) {
	var t target
	var errs []error
	for _, key := range keys {
		store, err := key.set(k.Get(key.name))
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", key.name, err))
			continue
		}
		store(&t)
	}
	// Profile values are checked as the policies.* key they repeat.
	profileSlots := map[string]slotValues{}
	for _, name := range slices.Sorted(maps.Keys(profiles)) {
		slots, perrs := profiles.bind(name)
		errs = append(errs, perrs...)
		profileSlots[name] = slots
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	c := &t.cfg
	errs = append(errs, crossChecks(c)...)

	var perrs []error
	c.Policies, perrs = policies("", &t.slots)
	errs = append(errs, perrs...)
	c.Profiles = []Profile{{SchedulerName: c.SchedulerName, Policies: maps.Clone(c.Policies)}}
	if ks != nil {
		ks.defaultProfile.apply(&c.Profiles[0])
		if ks.lock != "" && c.LeaderElection.Enabled {
			errs = append(errs, fmt.Errorf("leaderElection.enabled: leader election is on, but the %s sets leaderElection.resourceLock %q: wasmsched holds a Lease only; set resourceLock to %s",
				KubeSchedulerKind, ks.lock, leasesLock))
		}
	}
	for _, name := range slices.Sorted(maps.Keys(profileSlots)) {
		full := profilesKey + "." + name
		if err := checkSchedulerName(name); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", full, err))
			continue
		}
		if name == c.SchedulerName {
			errs = append(errs, fmt.Errorf("%s: duplicate scheduler name %q: schedulerName already names the default profile (the policies.* keys); "+
				"rename the profile, or move its policies to the top-level policies key", full, name))
			continue
		}
		slots := profileSlots[name]
		pol, perrs := policies(full+".", &slots)
		errs = append(errs, perrs...)
		p := Profile{SchedulerName: name, Policies: pol}
		if ks != nil {
			ks.others[name].apply(&p)
		}
		c.Profiles = append(c.Profiles, p)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return c, nil
}
