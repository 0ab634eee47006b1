package e2e

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/wasmsched/wasmsched/abi"
	"github.com/wasmsched/wasmsched/e2e/testenv"
	"github.com/wasmsched/wasmsched/policies"
)

// swap loads a module into a slot through the admin endpoint and returns
// how long the swap took, failing the test if it is refused.
func (p *proc) swap(t *testing.T, slot string, module []byte) float64 {
	t.Helper()
	code, res := p.postModule(t, slot, module)
	if code != http.StatusOK {
		t.Fatalf("POST /policies/%s: %d: %s", slot, code, res.Error)
	}
	return res.TookMS
}

// TestHotSwapQueueSort: 1000 pods wait for room on a node; the room is
// opened 100 pods at a time, and between the rounds the queue-sort policy
// is swapped, priority-first -> FIFO -> priority-first, through the admin
// endpoint while the scheduler runs. Each round binds the pods the policy
// of the moment puts first; no pod is lost or bound twice.
//
// Pods are created in ten priority classes of a hundred, the newest in the
// highest, so the two orders are opposite: priority-first binds the newest
// pods, FIFO the oldest. Backoff is 1 ms so
// that a pod moved by the node update goes straight to activeQ, where only
// the queue sort orders it.
func TestHotSwapQueueSort(t *testing.T) {
	const pods, round = 1000, 100
	env := testenv.Start(t)
	c := env.Client
	ns := env.Namespace(t)
	ctx := context.Background()
	createNode(t, c, nodeSpec{name: "n1", cpu: "64", pods: "0"})
	sched := startScheduler(t, env.Kubeconfig, "-set", "queue.initialBackoff=1ms", "-set", "queue.maxBackoff=1ms", "-set", "policies.adminEndpoint=true")

	// Ten priority classes, a hundred pods each, the newest pods in the
	// highest class (the priority admission plugin sets spec.priority), none
	// preempting (the pods FIFO binds have the lowest priority).
	const classes = 10
	for k := range classes {
		// Never preempt: the lower-priority pods FIFO binds must stay put.
		never := v1.PreemptNever
		pc := &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("swap-%d", k)}, Value: int32(k),
			PreemptionPolicy: &never}
		if _, err := c.SchedulingV1().PriorityClasses().Create(ctx, pc, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	created := make(map[string]time.Time, pods)
	priority := make(map[string]int32, pods)
	for i := range pods {
		p := makePod(ns, fmt.Sprintf("p%04d", i), "wasmsched", "")
		p.Spec.PriorityClassName = fmt.Sprintf("swap-%d", i*classes/pods)
		out := createPod(t, c, p)
		created[out.Name], priority[out.Name] = out.CreationTimestamp.Time, *out.Spec.Priority
	}
	waitFor(t, 120*time.Second, "every pod to be reported unschedulable", func() (bool, error) {
		return sched.metric(t, "scheduler_pending_pods", `queue="unschedulable"`) == pods, nil
	})

	bound := map[string]bool{}
	openRoom := func(total int) []string {
		t.Helper()
		// Every pod still waiting must have failed its last attempt and be
		// out of backoff, so that the node update moves every one of them
		// to activeQ, where only the queue sort orders them.
		waitBackoffOver(t, sched, pods-len(bound))
		return raisePodCapacity(t, c, ns, "n1", total, bound)
	}
	pending := func() []string {
		var out []string
		for name := range created {
			if !bound[name] {
				out = append(out, name)
			}
		}
		return out
	}
	// firstBy reports whether every pod of batch comes before every pending
	// pod by key (ties allowed: creation times have 1 s resolution).
	firstBy := func(batch []string, key func(string) int64) (bool, string) {
		var worst int64 = -1 << 63
		for _, n := range batch {
			worst = max(worst, key(n))
		}
		for _, n := range pending() {
			if key(n) < worst {
				return false, n
			}
		}
		return true, ""
	}
	byPriority := func(n string) int64 { return -int64(priority[n]) }
	byCreation := func(n string) int64 { return created[n].Unix() }

	// Round 1: the built-in priority order.
	b1 := openRoom(round)
	if ok, n := firstBy(b1, byPriority); !ok {
		t.Errorf("round 1 (priority-first) bound %v, but %s of higher priority waits", b1, n)
	}

	fifo, err := os.ReadFile(filepath.Join("..", "guest-sdk", "examples", "fifosort", "fifosort.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	took := sched.swap(t, "queueSort", fifo)
	t.Logf("swap to FIFO with %d pods queued took %.1f ms", pods-round, took)
	b2 := openRoom(2 * round)
	if ok, n := firstBy(b2, byCreation); !ok {
		t.Errorf("round 2 (FIFO) bound %v, but %s, created earlier, waits", b2, n)
	}

	took = sched.swap(t, "queueSort", policies.Builtin(abi.SlotQueueSort).Wasm)
	t.Logf("swap back to priority-first with %d pods queued took %.1f ms", pods-2*round, took)
	b3 := openRoom(3 * round)
	if ok, n := firstBy(b3, byPriority); !ok {
		t.Errorf("round 3 (priority-first again) bound %v, but %s of higher priority waits", b3, n)
	}

	// The rest, then: every pod bound exactly once.
	openRoom(pods)
	scheduledOnce(t, c, ns, pods, 60*time.Second)
	if n := sched.metric(t, "wasmsched_policy_swaps_total", `result="success"`, `slot="queueSort"`); n < 3 {
		t.Errorf("wasmsched_policy_swaps_total{slot=queueSort,result=success} = %v, want at least 3 (start-up and two swaps)", n)
	}
}

// waitBackoffOver waits until the scheduler reports n pods unschedulable
// (every one has failed its last attempt), then until their backoff is over.
// With queue.initialBackoff and queue.maxBackoff at 1 ms, a pod that failed
// at f is backing off until the end of the 1-second window that holds f+1ms:
// KEP-5142 aligns backoff expiries to whole seconds of the scheduler's clock,
// which is this machine's. They all failed before now, so theirs are over at
// the end of the window that holds now+1ms, at most a second away. That
// wait is on the clock, not on a state: no metric shows a backoff expiring
// (the pods stay in unschedulablePods until an event moves them).
func waitBackoffOver(t *testing.T, sched *proc, n int) {
	t.Helper()
	waitFor(t, 120*time.Second, fmt.Sprintf("%d pods reported unschedulable", n), func() (bool, error) {
		return sched.metric(t, "scheduler_pending_pods", `queue="unschedulable"`) == float64(n), nil
	})
	time.Sleep(time.Until(time.Now().Add(time.Millisecond).Truncate(time.Second).Add(time.Second)))
}

// swapResponse is the admin endpoint's answer.
type swapResponse struct {
	TookMS float64 `json:"tookMilliseconds"`
	Error  string  `json:"error"`
}

// postModule posts a module to the admin endpoint and returns the status
// code and the answer.
func (p *proc) postModule(t *testing.T, slot string, module []byte) (int, swapResponse) {
	t.Helper()
	resp, err := http.Post("http://"+p.Addr+"/policies/"+slot, "application/wasm", bytes.NewReader(module))
	if err != nil {
		t.Fatalf("POST /policies/%s: %v", slot, err)
	}
	defer resp.Body.Close()
	var res swapResponse
	if err := json.NewDecoder(resp.Body).Decode(&res); err != nil {
		t.Fatalf("POST /policies/%s: %s: %v", slot, resp.Status, err)
	}
	return resp.StatusCode, res
}

func fixture(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "host", "policy", "wasmslot", "testdata", "faults", name+".wasm"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestFaultyModulesKeepScheduling: modules that fail every call or are
// forbidden are refused when swapped in, and the module before them keeps
// serving; a module that spins on some inputs is accepted, its spinning
// calls are stopped and answered natively, and every pod is still bound
// exactly once, the failures counted by slot and reason.
func TestFaultyModulesKeepScheduling(t *testing.T) {
	env := testenv.Start(t)
	c := env.Client
	ns := env.Namespace(t)
	ctx := context.Background()
	createNode(t, c, nodeSpec{name: "n1", cpu: "64"})
	sched := startScheduler(t, env.Kubeconfig, "-set", "sandbox.deadline=50ms", "-set", "policies.adminEndpoint=true")

	for _, f := range []struct{ fixture, want string }{
		{"queueSort-loop", "deadline"},
		{"queueSort-trap", "trap"},
		{"queueSort-fs", "forbidden imports"},
		{"queueSort-abi2", "speaks ABI 2.0"},
		{"preEnqueue-garbage", "preEnqueue"},
	} {
		slot := f.fixture[:strings.IndexByte(f.fixture, '-')]
		code, res := sched.postModule(t, slot, fixture(t, f.fixture))
		if code != http.StatusUnprocessableEntity || !strings.Contains(res.Error, f.want) {
			t.Errorf("POST %s: %d %q, want 422 mentioning %q", f.fixture, code, res.Error, f.want)
		}
	}
	if n := sched.metric(t, "wasmsched_policy_swaps_total", `result="success"`); n != 5 {
		t.Errorf("successful swaps %v, want the 5 start-up loads only", n)
	}

	// The slow queue sort: fast (reverse priority) for even priorities,
	// spinning for odd ones, which the 50 ms deadline stops.
	sched.swap(t, "queueSort", fixture(t, "queueSort-slow"))
	for k := range 2 {
		pc := &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("fault-%d", k)}, Value: int32(k + 1)}
		if _, err := c.SchedulingV1().PriorityClasses().Create(ctx, pc, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	const pods = 20
	for i := range pods {
		p := makePod(ns, fmt.Sprintf("f%02d", i), "wasmsched", "100m")
		p.Spec.PriorityClassName = fmt.Sprintf("fault-%d", i%2)
		createPod(t, c, p)
	}
	for i := range pods {
		waitBound(t, c, ns, fmt.Sprintf("f%02d", i), 60*time.Second)
	}
	if n := sched.metric(t, "wasmsched_policy_errors_total", `slot="queueSort"`, `reason="deadline"`); n == 0 {
		t.Error("no queueSort deadline counted, want the odd-priority calls")
	}
	if n := sched.metric(t, "wasmsched_policy_fallbacks_total", `slot="queueSort"`); n == 0 {
		t.Error("no queueSort fallback counted")
	}
	scheduledOnce(t, c, ns, pods, 30*time.Second)
}

// policiesState reads GET /policies: profile -> slot -> module name and
// sha256.
func (p *proc) policiesState(t *testing.T) map[string]map[string]struct {
	Module string `json:"module"`
	SHA256 string `json:"sha256"`
} {
	t.Helper()
	resp, err := http.Get("http://" + p.Addr + "/policies")
	if err != nil {
		t.Fatalf("GET /policies: %v", err)
	}
	defer resp.Body.Close()
	var out map[string]map[string]struct {
		Module string `json:"module"`
		SHA256 string `json:"sha256"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatalf("GET /policies: %v", err)
	}
	return out
}

// TestReloadOnFileChangeAndSIGHUP: the queue-sort module named in the
// configuration file is swapped when the module file changes (fsnotify),
// and when the configuration names another file and the process gets
// SIGHUP; a configuration that names a forbidden module is refused and the
// running module stays.
func TestReloadOnFileChangeAndSIGHUP(t *testing.T) {
	env := testenv.Start(t)
	dir := t.TempDir()
	module := filepath.Join(dir, "sort.wasm")
	read := func(path string) []byte {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	prio := read(filepath.Join("..", "guest-sdk", "examples", "prioritysort", "prioritysort.wasm"))
	fifo := read(filepath.Join("..", "guest-sdk", "examples", "fifosort", "fifosort.wasm"))
	write := func(path string, b []byte) {
		// Write and rename, as editors and ConfigMap updates do.
		tmp := path + ".tmp"
		if err := os.WriteFile(tmp, b, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, path); err != nil {
			t.Fatal(err)
		}
	}
	write(module, prio)
	cfg := filepath.Join(dir, "config.yaml")
	writeConfig := func(path string) {
		write(cfg, []byte("policies:\n  queueSort:\n    module: "+path+"\n"))
	}
	writeConfig(module)
	sched := startScheduler(t, env.Kubeconfig, "-config", cfg)
	sortModule := func() (string, string) {
		s := sched.policiesState(t)["wasmsched"]["queueSort"]
		return s.Module, s.SHA256
	}
	if name, sha := sortModule(); name != module || sha != digestHex(prio) {
		t.Fatalf("queueSort serves %s (%s), want %s (prioritysort)", name, sha, module)
	}

	write(module, fifo)
	waitFor(t, 30*time.Second, "the changed module file to be loaded", func() (bool, error) {
		_, sha := sortModule()
		return sha == digestHex(fifo), nil
	})

	other := filepath.Join(dir, "other.wasm")
	write(other, prio)
	writeConfig(other) // also picked up by the watch; SIGHUP must work on its own too
	if err := sched.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, "the configuration naming other.wasm to be loaded", func() (bool, error) {
		name, sha := sortModule()
		return name == other && sha == digestHex(prio), nil
	})

	forbidden := filepath.Join(dir, "fs.wasm")
	write(forbidden, fixture(t, "queueSort-fs"))
	writeConfig(forbidden)
	if err := sched.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, "the refusal to be logged", func() (bool, error) {
		return strings.Contains(sched.Log(), "forbidden imports"), nil
	})
	if name, _ := sortModule(); name != other {
		t.Errorf("after a refused reload queueSort serves %s, want %s still", name, other)
	}
}

func digestHex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// TestAdminEndpointOffByDefault: with the default configuration no HTTP
// request changes scheduling policy: POST /policies/{slot} is not served
// (the read-only GET /policies is), and the slot keeps its module.
func TestAdminEndpointOffByDefault(t *testing.T) {
	env := testenv.Start(t)
	sched := startScheduler(t, env.Kubeconfig)
	before := sched.policiesState(t)["wasmsched"]["queueSort"]
	fifo, err := os.ReadFile(filepath.Join("..", "guest-sdk", "examples", "fifosort", "fifosort.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Post("http://"+sched.Addr+"/policies/queueSort", "application/wasm", bytes.NewReader(fifo))
	if err != nil {
		t.Fatalf("POST /policies/queueSort: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound && resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST /policies/queueSort with the admin endpoint off: %s, want 404 or 405", resp.Status)
	}
	if after := sched.policiesState(t)["wasmsched"]["queueSort"]; after != before {
		t.Errorf("queueSort changed from %+v to %+v with the admin endpoint off", before, after)
	}
}

// raisePodCapacity sets node's pod capacity to total and waits until total
// pods of ns are bound; it marks the newly bound ones in bound and returns
// their names, sorted. More than total bound is an error.
func raisePodCapacity(t *testing.T, c kubernetes.Interface, ns, node string, total int, bound map[string]bool) []string {
	t.Helper()
	ctx := context.Background()
	n, err := c.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	q := resource.MustParse(strconv.Itoa(total))
	n.Status.Allocatable[v1.ResourcePods], n.Status.Capacity[v1.ResourcePods] = q, q
	if _, err := c.CoreV1().Nodes().UpdateStatus(ctx, n, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	var batch []string
	waitFor(t, 120*time.Second, fmt.Sprintf("%d pods bound", total), func() (bool, error) {
		list, err := c.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		batch = batch[:0]
		count := 0
		for _, p := range list.Items {
			if p.Spec.NodeName != "" {
				count++
				if !bound[p.Name] {
					batch = append(batch, p.Name)
				}
			}
		}
		if count > total {
			return false, fmt.Errorf("%d pods bound on a node with room for %d", count, total)
		}
		return count == total, nil
	})
	for _, name := range batch {
		bound[name] = true
	}
	slices.Sort(batch)
	return batch
}
