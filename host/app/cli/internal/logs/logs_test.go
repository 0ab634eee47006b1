package logs

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"log"
	"log/slog"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/klog/v2"
)

// route is Route for one test: klog, its verbosity, the slog default and
// the log package are put back at the end.
func route(t *testing.T, h slog.Handler, verbosity int) {
	t.Helper()
	def, w, flags := slog.Default(), log.Writer(), log.Flags()
	Route(h, verbosity)
	t.Cleanup(func() {
		klog.ClearLogger()
		var fs flag.FlagSet
		klog.InitFlags(&fs)
		_ = fs.Set("v", "0")
		slog.SetDefault(def)
		log.SetOutput(w)
		log.SetFlags(flags)
	})
}

// lines decodes out as JSON lines, failing t on a line that is not one
// JSON object.
func lines(t *testing.T, out string) []map[string]any {
	t.Helper()
	var objs []map[string]any
	for _, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		if l == "" {
			continue
		}
		var obj map[string]any
		if err := json.Unmarshal([]byte(l), &obj); err != nil {
			t.Errorf("not a JSON object: %q: %v", l, err)
			continue
		}
		objs = append(objs, obj)
	}
	return objs
}

// TestKlogJSON: klog's lines, structured and printf-style, global and
// contextual, and the log package's come out of the JSON handler as JSON
// objects with component-base's fields, V(4) and above at debug, errors at
// error, lines above the verbosity not at all.
func TestKlogJSON(t *testing.T) {
	var buf bytes.Buffer
	route(t, NewJSON(&buf, slog.LevelDebug), 5)
	cases := []struct {
		name string
		log  func()
		want map[string]any // without ts and caller; nil: no line
	}{
		{"InfoS", func() { klog.InfoS("pod bound", "pod", klog.KRef("ns", "p"), "node", "n1") },
			map[string]any{"level": "INFO", "v": 0.0, "msg": "pod bound", "pod": map[string]any{"namespace": "ns", "name": "p"}, "node": "n1"}},
		{"ErrorS", func() { klog.ErrorS(errors.New("boom"), "watch failed", "node", "n1") },
			map[string]any{"level": "ERROR", "msg": "watch failed", "err": "boom", "node": "n1"}},
		{"V(2).InfoS", func() { klog.V(2).InfoS("steady state", "pods", 3) },
			map[string]any{"level": "INFO", "v": 2.0, "msg": "steady state", "pods": 3.0}},
		{"V(5).InfoS", func() { klog.V(5).InfoS("trace", "pod", klog.KRef("", "p")) },
			map[string]any{"level": "DEBUG", "v": 5.0, "msg": "trace", "pod": map[string]any{"name": "p"}}},
		{"V(6).InfoS above the verbosity", func() { klog.V(6).InfoS("too detailed") }, nil},
		{"Infof", func() { klog.Infof("plain %d", 7) },
			map[string]any{"level": "INFO", "v": 0.0, "msg": "plain 7"}},
		{"Errorf", func() { klog.Errorf("plain error %q", "x") },
			map[string]any{"level": "ERROR", "msg": `plain error "x"`}},
		{"V(4).Infof", func() { klog.V(4).Infof("detail %s", "d") },
			map[string]any{"level": "DEBUG", "v": 4.0, "msg": "detail d"}},
		{"contextual V(5)", func() { klog.Background().WithName("reflector").V(5).Info("listed", "items", 2) },
			map[string]any{"level": "DEBUG", "v": 5.0, "msg": "listed", "logger": "reflector", "items": 2.0}},
		{"contextual V(6) above the verbosity", func() { klog.Background().V(6).Info("too detailed") }, nil},
		{"log package", func() { log.Printf("http: TLS handshake error from %s", "127.0.0.1:1") },
			map[string]any{"level": "INFO", "msg": "http: TLS handshake error from 127.0.0.1:1"}},
		{"wasmsched's own", func() { slog.Warn("policy swap refused", "slot", "queueSort", "err", errors.New("trap")) },
			map[string]any{"level": "WARN", "msg": "policy swap refused", "slot": "queueSort", "err": "trap"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			buf.Reset()
			c.log()
			klog.Flush()
			objs := lines(t, buf.String())
			if c.want == nil {
				if len(objs) != 0 {
					t.Errorf("logged %v, want nothing", objs)
				}
				return
			}
			if len(objs) != 1 {
				t.Fatalf("%d lines, want 1:\n%s", len(objs), buf.String())
			}
			got := objs[0]
			ts, ok := got["ts"].(float64)
			if !ok || ts < 1e12 {
				t.Errorf("ts = %v, want Unix milliseconds as a number", got["ts"])
			}
			// The log package gives its handler no caller.
			if caller, _ := got["caller"].(string); c.name != "log package" && !strings.HasPrefix(caller, "logs/logs_test.go:") {
				t.Errorf("caller = %v, want logs/logs_test.go:<line>, the line that logged", got["caller"])
			}
			delete(got, "ts")
			delete(got, "caller")
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("line (-want, +got):\n%s", diff)
			}
		})
	}
}

// TestKlogLevels: at level info, the libraries' V(4) and above are
// dropped (and not even asked for), V(0) to V(3) stay; at warn, only
// errors stay; the text handler gets the same lines.
func TestKlogLevels(t *testing.T) {
	var buf bytes.Buffer
	route(t, NewText(&buf, slog.LevelInfo), 10)
	klog.V(3).InfoS("extended")
	klog.V(4).InfoS("debug")
	if klog.Background().V(4).Enabled() {
		t.Errorf("contextual V(4) enabled at level info")
	}
	klog.ErrorS(errors.New("boom"), "failed")
	got := buf.String()
	for _, want := range []string{`level=INFO msg=extended v=3`, `level=ERROR msg=failed err=boom`} {
		if !strings.Contains(got, want) {
			t.Errorf("text log lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "msg=debug") {
		t.Errorf("V(4) logged at level info:\n%s", got)
	}

	buf.Reset()
	route(t, NewText(&buf, slog.LevelWarn), 10)
	klog.InfoS("info")
	klog.ErrorS(nil, "error")
	if got := buf.String(); strings.Contains(got, "msg=info") || !strings.Contains(got, "msg=error") {
		t.Errorf("at level warn, want the error line only:\n%s", got)
	}
}
