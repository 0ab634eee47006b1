// Package flags holds what the wasmsched commands (package cli) and the
// wasmsched-bench command (package benchcli) parse alike: repeated -set
// key=value overrides, -log-level, and the usage error that maps to exit
// code 2. It is internal so that the two commands share it without
// benchcli importing cli or the other way round: the production binary must
// not link the benchmark's fake clientset.
package flags

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"strings"
)

// ErrUsage marks errors whose remedy is the usage text.
var ErrUsage = errors.New("usage")

// Exit maps a command's error to its exit code, printing it on stderr as
// "prog: err", followed by the usage text for an ErrUsage: 0, 1, or 2 for
// a usage error.
func Exit(err error, stderr io.Writer, prog, usage string) int {
	switch {
	case err == nil:
		return 0
	case errors.Is(err, ErrUsage):
		fmt.Fprintf(stderr, "%s: %v\n\n%s", prog, err, usage)
		return 2
	default:
		fmt.Fprintf(stderr, "%s: %v\n", prog, err)
		return 1
	}
}

// Sets collects repeated -set key=value flags.
type Sets map[string]string

// Overrides are the -set values as a fresh map, for the command's own
// flags to be added to.
func (s Sets) Overrides() map[string]string {
	out := make(map[string]string, len(s))
	maps.Copy(out, s)
	return out
}

func (s *Sets) String() string { return "" }

func (s *Sets) Set(v string) error {
	k, val, ok := strings.Cut(v, "=")
	if !ok || k == "" {
		return fmt.Errorf("want key=value, got %q", v)
	}
	if *s == nil {
		*s = Sets{}
	}
	(*s)[k] = val
	return nil
}

// LogLevel reads -log-level.
func LogLevel(s string) (slog.Level, error) {
	var level slog.Level
	if err := level.UnmarshalText([]byte(s)); err != nil {
		return 0, fmt.Errorf("%w: -log-level %q: want debug, info, warn or error", ErrUsage, s)
	}
	return level, nil
}
