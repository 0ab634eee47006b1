// Package logs makes the one log handler of the run command and routes
// the process's other loggers into it: klog, through which client-go, the
// k8s.io/apiserver libraries of delegated authentication and the other
// Kubernetes packages log, and the standard library's log package (net/http
// servers' errors). Every line of the process then comes out of one
// handler, in one format, as kube-scheduler's libraries log through
// component-base's logging.
//
// The JSON format is slog's JSONHandler with component-base's field names
// (k8s.io/component-base/logs/json): ts in Unix milliseconds as a float,
// caller as dir/file.go:line, msg, v (the verbosity of a Kubernetes
// library's info line), err, logger (a logr name) and the structured fields;
// slog's level is kept, since wasmsched's own lines have warn and debug
// levels that v cannot say.
//
// # Notes
//
//   - klog's logger and the slog default are global: Route is for a
//     command's main path, called once before the clients start.
//   - klog hands its Warning lines to the logger as info lines: they come
//     out at info with v 0, as under component-base.
package logs

import (
	"context"
	"flag"
	"io"
	"log/slog"
	"path/filepath"
	"strconv"

	"k8s.io/klog/v2"
)

// NewText returns slog's text handler on w, as the command has always
// logged.
func NewText(w io.Writer, level slog.Leveler) slog.Handler {
	return slog.NewTextHandler(w, &slog.HandlerOptions{Level: level})
}

// NewJSON returns a handler of one JSON object a line on w, with
// component-base's field names (see the package documentation).
func NewJSON(w io.Writer, level slog.Leveler) slog.Handler {
	return slog.NewJSONHandler(w, &slog.HandlerOptions{Level: level, AddSource: true, ReplaceAttr: componentBase})
}

// componentBase renames slog's built-in time and source attributes to
// component-base's ts and caller.
func componentBase(groups []string, a slog.Attr) slog.Attr {
	if len(groups) > 0 {
		return a
	}
	switch a.Key {
	case slog.TimeKey:
		if a.Value.Kind() == slog.KindTime {
			return slog.Float64("ts", float64(a.Value.Time().UnixNano())/1e6)
		}
	case slog.SourceKey:
		if s, ok := a.Value.Any().(*slog.Source); ok && s.File != "" {
			// zap's ShortCallerEncoder: the file's directory and name.
			dir := filepath.Base(filepath.Dir(s.File))
			return slog.String("caller", dir+"/"+filepath.Base(s.File)+":"+strconv.Itoa(s.Line))
		}
	}
	return a
}

// Route makes klog and the standard library's log package log through h
// for the rest of the process. verbosity is klog's -v (set without
// registering klog's flags): the Kubernetes libraries' V(n) lines with n up
// to verbosity reach h, V(0) to V(3) at info and V(4) and above at debug,
// each with its n as v; their error lines are errors.
func Route(h slog.Handler, verbosity int) {
	var fs flag.FlagSet
	klog.InitFlags(&fs)
	// -v takes any integer: Set cannot fail on one.
	_ = fs.Set("v", strconv.Itoa(verbosity))
	klog.SetSlogLogger(slog.New(klogLevels{h: h, verbosity: verbosity}))
	slog.SetDefault(slog.New(h))
}

// debugFrom is the first klog verbosity whose lines are debug lines: V(4)
// is where client-go and kube-scheduler put their detail (the Kubernetes
// logging conventions: "--v=4 Debug level verbosity").
const debugFrom = 4

// klogLevels turns the slog levels that logr gives klog's lines into
// wasmsched's. logr.FromSlogHandler, which klog.SetSlogLogger uses, logs
// V(n) at slog level -n, so V(1) to V(3) would fall between info and
// debug and be dropped at level info; errors are slog.LevelError.
type klogLevels struct {
	h         slog.Handler
	verbosity int
}

var _ slog.Handler = klogLevels{}

// level maps a record level from logr: V(n), n = -l, for l <= 0.
func (k klogLevels) level(l slog.Level) (lvl slog.Level, v int, isV bool) {
	if l > 0 {
		return l, 0, false
	}
	v = int(-l)
	if v >= debugFrom {
		return slog.LevelDebug, v, true
	}
	return slog.LevelInfo, v, true
}

// Enabled also holds the verbosity for the contextual loggers
// (klog.FromContext, klog.Background), which call logr without klog's own
// -v check.
func (k klogLevels) Enabled(ctx context.Context, l slog.Level) bool {
	lvl, v, isV := k.level(l)
	if isV && v > k.verbosity {
		return false
	}
	return k.h.Enabled(ctx, lvl)
}

func (k klogLevels) Handle(ctx context.Context, r slog.Record) error {
	lvl, v, isV := k.level(r.Level)
	if !isV {
		return k.h.Handle(ctx, r)
	}
	// v leads the line's own fields, as in component-base's lines.
	out := slog.NewRecord(r.Time, lvl, r.Message, r.PC)
	out.AddAttrs(slog.Int("v", v))
	r.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(a)
		return true
	})
	return k.h.Handle(ctx, out)
}

func (k klogLevels) WithAttrs(attrs []slog.Attr) slog.Handler {
	return klogLevels{h: k.h.WithAttrs(attrs), verbosity: k.verbosity}
}

func (k klogLevels) WithGroup(name string) slog.Handler {
	return klogLevels{h: k.h.WithGroup(name), verbosity: k.verbosity}
}
