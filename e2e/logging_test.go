package e2e

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wasmsched/wasmsched/e2e/testenv"
)

// TestJSONLogs: `wasmsched run --logging-format=json` writes nothing but
// JSON lines, from start to SIGTERM, for a run that schedules a pod:
// wasmsched's own lines, client-go's and those of the k8s.io/apiserver
// libraries behind the secure listener (delegated authentication), which
// log through klog, all with component-base's fields.
func TestJSONLogs(t *testing.T) {
	env := testenv.Start(t)
	c := env.Client
	ns := env.Namespace(t)
	createNode(t, c, nodeSpec{name: "n1", cpu: "4"})
	// -v 2: client-go's V(1) and V(2) lines too. startScheduler also
	// enables the secure listener, whose client-CA controllers log.
	sched := startScheduler(t, env.Kubeconfig, "--logging-format=json", "-v", "2")
	createPod(t, c, makePod(ns, "p", "wasmsched", "1"))
	if got := waitBound(t, c, ns, "p", 30*time.Second); got != "n1" {
		t.Fatalf("pod bound to %q, want n1", got)
	}
	sched.stop() // the whole log, shutdown included

	log := strings.TrimSuffix(sched.Log(), "\n")
	// testenv heads the file with the command line.
	if first, rest, ok := strings.Cut(log, "\n"); ok && strings.HasPrefix(first, "# ") {
		log = rest
	}
	callers := map[string]bool{} // the libraries' files, of lines with v
	bound := false
	for i, l := range strings.Split(log, "\n") {
		var obj map[string]any
		if err := json.Unmarshal([]byte(l), &obj); err != nil {
			t.Errorf("line %d is not a JSON object: %q", i+1, l)
			continue
		}
		_, ts := obj["ts"].(float64)
		_, level := obj["level"].(string)
		_, msg := obj["msg"].(string)
		if !ts || !level || !msg {
			t.Errorf("line %d lacks ts (a number), level or msg: %s", i+1, l)
		}
		if caller, ok := obj["caller"].(string); ok && obj["v"] != nil {
			callers[strings.Split(caller, ":")[0]] = true
		}
		bound = bound || obj["msg"] == "bound" && obj["pod"] == ns+"/p" && obj["node"] == "n1"
	}
	if !bound {
		t.Errorf(`no line {"msg":"bound","pod":%q,"node":"n1"}`, ns+"/p")
	}
	// Library lines such a run always has: client-go's feature gates
	// (V(1)) and reflectors (V(2)), and the client-CA and serving
	// certificate controllers of k8s.io/apiserver behind the secure
	// listener.
	for _, want := range []string{"features/envvar.go", "cache/reflector.go", "dynamiccertificates/configmap_cafile_content.go", "dynamiccertificates/tlsconfig.go"} {
		if !callers[want] {
			t.Errorf("no line with v from %s; files of lines with v: %v", want, slices.Sorted(maps.Keys(callers)))
		}
	}
}
