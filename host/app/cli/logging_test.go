package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"log"
	"log/slog"
	"strings"
	"testing"

	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"

	"github.com/wasmsched/wasmsched/config"
	"github.com/wasmsched/wasmsched/host/app"
)

// TestRunLogsJSON: with -logging-format=json, what the run command writes
// to stderr once its configuration is loaded is JSON lines only: a
// library's klog line, at the verbosity of -v, and the error that stops
// the command, which is not printed a second time in plain text.
func TestRunLogsJSON(t *testing.T) {
	kubeconfig := writeKubeconfig(t, "https://127.0.0.1:1")
	def, w, flags := slog.Default(), log.Writer(), log.Flags()
	defer func(orig func(context.Context, *config.Config, kubernetes.Interface, ...app.Option) (*app.App, error)) {
		newApp = orig
		klog.ClearLogger()
		var fs flag.FlagSet
		klog.InitFlags(&fs)
		_ = fs.Set("v", "0")
		slog.SetDefault(def)
		log.SetOutput(w)
		log.SetFlags(flags)
	}(newApp)
	newApp = func(_ context.Context, cfg *config.Config, _ kubernetes.Interface, _ ...app.Option) (*app.App, error) {
		klog.InfoS("Starting reflector", "type", "*v1.Pod")
		klog.V(2).InfoS("Caches populated")
		klog.V(3).InfoS("above -v 2")
		return nil, errors.New("stop here")
	}
	code, out, errOut := runCLI("run", "-kubeconfig", kubeconfig, "-logging-format=json", "-v", "2")
	if code != 1 || out != "" {
		t.Fatalf("run: code %d, stdout %q; want 1 from the stubbed app.New and nothing on stdout", code, out)
	}
	var msgs []string
	for _, l := range strings.Split(strings.TrimSuffix(errOut, "\n"), "\n") {
		var obj map[string]any
		if err := json.Unmarshal([]byte(l), &obj); err != nil {
			t.Errorf("stderr line is not JSON: %q", l)
			continue
		}
		msgs = append(msgs, obj["msg"].(string))
		if obj["msg"] == "wasmsched run failed" && (obj["level"] != "ERROR" || obj["err"] != "stop here") {
			t.Errorf("failure line %v: want level ERROR and err \"stop here\"", obj)
		}
	}
	// client-go logs lines of its own (its feature gates, at V(1), once
	// per process): only the stub's are known.
	var got []string
	for _, m := range msgs {
		if m == "Starting reflector" || m == "Caches populated" || m == "above -v 2" || m == "wasmsched run failed" {
			got = append(got, m)
		}
	}
	want := []string{"Starting reflector", "Caches populated", "wasmsched run failed"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("messages %q, want %q:\n%s", got, want, errOut)
	}
}

// TestRunLoggingFlagErrors: a bad -log-level is a usage error, as before;
// a bad -logging-format is refused by the configuration, naming the key.
func TestRunLoggingFlagErrors(t *testing.T) {
	if code, _, errOut := runCLI("run", "-log-level", "loud"); code != 2 || !strings.Contains(errOut, "want debug, info, warn or error") {
		t.Errorf("-log-level loud: code %d, stderr %q; want 2 and the levels", code, errOut)
	}
	if code, _, errOut := runCLI("run", "-logging-format", "xml"); code != 1 || !strings.Contains(errOut, `logging.format`) || !strings.Contains(errOut, "want text or json") {
		t.Errorf("-logging-format xml: code %d, stderr %q; want 1, the key and the formats", code, errOut)
	}
}
