package config

import (
	"fmt"
	"strings"
)

// Help describes every key with its environment variable and default.
func Help() string {
	nameW, envW := 0, 0
	for _, k := range keys {
		nameW, envW = max(nameW, len(k.name)), max(envW, len(EnvName(k.name)))
	}
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "  %-*s %-*s default %v\n      %s\n", nameW, k.name, envW, EnvName(k.name), fmtDefault(k.def), k.help)
	}
	fmt.Fprintf(&b, "  %-*s %-*s default none\n      %s\n", nameW, profileKeyPattern, envW, "(file and command line only)",
		"an additional profile: pods whose spec.schedulerName is <name> are scheduled with these slots, whose values are as the policies.<slot>.* keys' (a profile with none set: the built-in policies)")
	return b.String()
}

func fmtDefault(v any) string {
	if s, ok := v.(string); ok && s == "" {
		return `""`
	}
	return fmt.Sprint(v)
}
