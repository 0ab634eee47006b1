package e2e

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/wasmsched/wasmsched/e2e/testenv"
	"github.com/wasmsched/wasmsched/host/policyapi"
)

// installPolicyAPI applies deploy/'s namespace, CRD and policy RBAC as the
// admin and waits until discovery serves SchedulingPolicies (a scheduler
// started earlier would find no API and leave it off).
func installPolicyAPI(t *testing.T, env *testenv.Env) {
	t.Helper()
	ctx := context.Background()
	var files []string
	for _, f := range []string{"namespace", "crd", "policy-rbac"} {
		files = append(files, filepath.Join("..", "deploy", f+".yaml"))
	}
	if err := env.Apply(ctx, files...); err != nil {
		t.Fatalf("apply deploy/'s policy API: %v", err)
	}
	waitFor(t, 30*time.Second, "the SchedulingPolicy API to be served", func() (bool, error) {
		list, err := env.Client.Discovery().ServerResourcesForGroupVersion(policyapi.GroupVersion.String())
		if err != nil {
			return false, nil
		}
		for _, r := range list.APIResources {
			if r.Name == policyapi.Resource {
				return true, nil
			}
		}
		return false, nil
	})
}

// userClient is a dynamic client authenticated as the ServiceAccount
// namespace/name, with what RBAC grants it.
func userClient(t *testing.T, env *testenv.Env, namespace, name string) dynamic.Interface {
	t.Helper()
	path, err := env.ServiceAccountKubeconfig(context.Background(), namespace, name)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		t.Fatal(err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return dyn
}

// manifest runs `wasmsched policy manifest` and decodes the object it prints.
func manifest(t *testing.T, args ...string) *unstructured.Unstructured {
	t.Helper()
	cmd := exec.Command(schedulerBinary(t), append([]string{"policy", "manifest"}, args...)...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("wasmsched policy manifest %q: %v: %s", args, err, stderr.String())
	}
	var m map[string]any
	if err := utilyaml.Unmarshal(out, &m); err != nil {
		t.Fatalf("policy manifest printed no object: %v\n%s", err, out)
	}
	return &unstructured.Unstructured{Object: m}
}

// getPolicy reads a SchedulingPolicy as the admin.
func getPolicy(t *testing.T, env *testenv.Env, name string) *policyapi.SchedulingPolicy {
	t.Helper()
	u, err := env.Dynamic().Resource(policyapi.GVR).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get SchedulingPolicy %s: %v", name, err)
	}
	p, err := policyapi.FromUnstructured(u)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// waitStatus waits until the object's status satisfies ok for its current
// generation, and returns it; the last status is in the failure.
func waitStatus(t *testing.T, env *testenv.Env, name, what string, ok func(*policyapi.SchedulingPolicy) bool) *policyapi.SchedulingPolicy {
	t.Helper()
	var p *policyapi.SchedulingPolicy
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for {
		p = getPolicy(t, env, name)
		if p.Status.ObservedGeneration == p.Generation && ok(p) {
			return p
		}
		select {
		case <-ctx.Done():
			t.Fatalf("SchedulingPolicy %s: %s: not within 60s; status %+v", name, what, p.Status)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// accepted reports the Accepted condition's status and reason.
func accepted(p *policyapi.SchedulingPolicy) (metav1.ConditionStatus, string) {
	c := policyapi.Condition(p.Status.Conditions)
	if c == nil {
		return "", ""
	}
	return c.Status, c.Reason
}

// everyReplica reports whether the status has an entry for each of procs
// (named host_pid: no POD_NAME here) for the current generation, each
// satisfying ok.
func everyReplica(p *policyapi.SchedulingPolicy, procs []*proc, ok func(policyapi.ReplicaStatus) bool) bool {
	for _, pr := range procs {
		found := false
		for _, r := range p.Status.Replicas {
			if strings.HasSuffix(r.Name, "_"+strconv.Itoa(pr.Pid())) && r.ObservedGeneration == p.Generation && ok(r) {
				found = true
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// queueSort is the module serving the default profile's queueSort on p
// (GET /policies), and the object holding the slot.
func (p *proc) queueSort(t *testing.T) (module, sha256, heldBy string) {
	t.Helper()
	body, err := p.Get(context.Background(), "/policies")
	if err != nil {
		t.Fatalf("GET /policies: %v", err)
	}
	var out map[string]map[string]struct {
		Module string `json:"module"`
		SHA256 string `json:"sha256"`
		HeldBy string `json:"heldBy"`
	}
	if err := json.Unmarshal(body, &out); err != nil {
		t.Fatalf("GET /policies: %v", err)
	}
	s := out["wasmsched"]["queueSort"]
	return s.Module, s.SHA256, s.HeldBy
}

// TestPolicyAPI drives a queue-sort swap through the API on two replicas
// with leader election. Four groups of ten pods are created a second apart,
// each group in a higher priority class than the one before, on a node with
// room for none, so FIFO and priority order are opposite; room is then
// opened ten pods at a time, and the pods bound show which order the
// leader used. The configuration names prioritysort.
//
// A ServiceAccount without the editor role is refused; an editor applies
// the object printed by `wasmsched policy manifest`; both replicas load it
// and say so in status; the admin endpoint refuses the held slot; the
// leader binds the oldest group. A module with a forbidden import and a
// sha256 that does not match are refused in status with their reasons while
// FIFO keeps serving (the next group binds). The leader is killed: the
// standby already serves FIFO, becomes leader and binds the next group in
// FIFO order. A configuration change with SIGHUP leaves the slot to the
// object; deleting the object gives the slot back to the configured module;
// every pod is bound exactly once.
func TestPolicyAPI(t *testing.T) {
	t.Setenv("POD_NAME", "") // the replicas are named host_pid (see everyReplica), wherever the test runs
	env := testenv.Start(t)
	c := env.Client
	ctx := context.Background()
	installPolicyAPI(t, env)
	ns := env.Namespace(t)
	gvr := policyapi.GVR

	nobody := userClient(t, env, ns, "nobody")
	editor := userClient(t, env, ns, "editor")
	crb := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "policyapi-editor-" + ns},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "wasmsched-policy-editor"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: "editor", Namespace: ns}},
	}
	if _, err := c.RbacV1().ClusterRoleBindings().Create(ctx, crb, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	read := func(parts ...string) []byte {
		b, err := os.ReadFile(filepath.Join(parts...))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	fifoPath := filepath.Join("..", "guest-sdk", "examples", "fifosort", "fifosort.wasm")
	fifo := read(fifoPath)
	prio := read("..", "guest-sdk", "examples", "prioritysort", "prioritysort.wasm")
	dir := t.TempDir()
	write := func(path string, b []byte) {
		tmp := path + ".tmp"
		if err := os.WriteFile(tmp, b, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, path); err != nil {
			t.Fatal(err)
		}
	}
	configured, other := filepath.Join(dir, "prio.wasm"), filepath.Join(dir, "other.wasm")
	write(configured, prio)
	write(other, prio)
	cfg := filepath.Join(dir, "config.yaml")
	writeConfig := func(module string) { write(cfg, []byte("policies:\n  queueSort:\n    module: "+module+"\n")) }
	writeConfig(configured)

	createNode(t, c, nodeSpec{name: "n1", cpu: "64", pods: "0"})
	const groups, per = 4, 10
	newPriorityClasses(t, c, "papi", groups)
	leader, standby := electedPair(t, env, ns,
		"-config", cfg, "-set", "queue.initialBackoff=1ms", "-set", "queue.maxBackoff=1ms", "-set", "policies.adminEndpoint=true")
	g := createPriorityGroups(t, c, ns, "papi", groups, per)
	openRoom, wantGroup := g.openRoom, g.all

	// 403 without the editor role.
	obj := manifest(t, fifoPath, "--slot", "queueSort", "--name", "fifo")
	if _, err := nobody.Resource(gvr).Create(ctx, obj.DeepCopy(), metav1.CreateOptions{}); !apierrors.IsForbidden(err) {
		t.Fatalf("a user without the editor role created a SchedulingPolicy: %v, want 403", err)
	}
	if _, err := editor.Resource(gvr).Create(ctx, obj, metav1.CreateOptions{}); err != nil {
		t.Fatalf("the editor could not create the SchedulingPolicy: %v", err)
	}
	if err := nobody.Resource(gvr).Delete(ctx, "fifo", metav1.DeleteOptions{}); !apierrors.IsForbidden(err) {
		t.Fatalf("a user without the editor role deleted a SchedulingPolicy: %v, want 403", err)
	}
	procs := []*proc{leader, standby}
	st := waitStatus(t, env, "fifo", "Accepted on both replicas", func(p *policyapi.SchedulingPolicy) bool {
		s, _ := accepted(p)
		return s == metav1.ConditionTrue && everyReplica(p, procs, func(r policyapi.ReplicaStatus) bool {
			return r.State == policyapi.StateServing && r.Digest == digestHex(fifo)
		})
	})
	if st.Status.Digest != digestHex(fifo) || st.Status.ShortDigest != digestHex(fifo)[:12] {
		t.Errorf("status digest %q (short %q), want fifosort's %s", st.Status.Digest, st.Status.ShortDigest, digestHex(fifo))
	}
	for _, r := range st.Status.Replicas {
		if wantLeader := strings.HasSuffix(r.Name, "_"+strconv.Itoa(leader.Pid())); r.Leader != wantLeader {
			t.Errorf("replica %s reports leader=%v", r.Name, r.Leader)
		}
	}
	for _, pr := range procs {
		if m, _, held := pr.queueSort(t); m != "schedulingpolicy/fifo" || held != "fifo" {
			t.Errorf("replica %d: queueSort serves %s held by %q, want schedulingpolicy/fifo held by fifo", pr.Pid(), m, held)
		}
	}
	if code, res := leader.postModule(t, "queueSort", prio); code != http.StatusConflict || !strings.Contains(res.Error, `SchedulingPolicy "fifo"`) {
		t.Errorf("POST /policies/queueSort on a held slot: %d %q, want 409 naming the object", code, res.Error)
	}
	if got := openRoom(leader, per); !slices.Equal(got, wantGroup(0)) {
		t.Errorf("with FIFO applied the leader bound pods of groups %v, want the oldest group 0", got)
	}

	// Refused modules: the reason in status, FIFO keeps serving.
	update := func(mutate func(*policyapi.SchedulingPolicy)) {
		t.Helper()
		u, err := editor.Resource(gvr).Get(ctx, "fifo", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		p, err := policyapi.FromUnstructured(u)
		if err != nil {
			t.Fatal(err)
		}
		mutate(p)
		if u, err = policyapi.ToUnstructured(p); err != nil {
			t.Fatal(err)
		}
		if _, err := editor.Resource(gvr).Update(ctx, u, metav1.UpdateOptions{}); err != nil {
			t.Fatalf("update the SchedulingPolicy: %v", err)
		}
	}
	for _, bad := range []struct {
		name, reason, msg string
		mutate            func(*policyapi.SchedulingPolicy)
	}{
		{"forbidden import", policyapi.ReasonForbiddenImport, "forbidden imports wasi_snapshot_preview1.path_open",
			func(p *policyapi.SchedulingPolicy) {
				p.Spec.Module.Inline, p.Spec.SHA256 = fixture(t, "queueSort-fs"), ""
			}},
		{"sha256 mismatch", policyapi.ReasonSHA256Mismatch, "not the expected " + digestHex(prio),
			func(p *policyapi.SchedulingPolicy) { p.Spec.Module.Inline, p.Spec.SHA256 = fifo, digestHex(prio) }},
	} {
		update(bad.mutate)
		st := waitStatus(t, env, "fifo", bad.name+" refused on both replicas", func(p *policyapi.SchedulingPolicy) bool {
			s, reason := accepted(p)
			return s == metav1.ConditionFalse && reason == bad.reason && everyReplica(p, procs, func(r policyapi.ReplicaStatus) bool {
				return r.State == policyapi.StateRefused && r.Digest == digestHex(fifo)
			})
		})
		if msg := policyapi.Condition(st.Status.Conditions).Message; !strings.Contains(msg, bad.msg) || !strings.Contains(msg, "keeps module \"schedulingpolicy/fifo\"") {
			t.Errorf("%s: condition message %q, want %q and what keeps serving", bad.name, msg, bad.msg)
		}
		if st.Status.Digest != "" {
			t.Errorf("%s: status digest %q while refused, want none", bad.name, st.Status.Digest)
		}
		for _, pr := range procs {
			if _, sha, _ := pr.queueSort(t); sha != digestHex(fifo) {
				t.Errorf("%s: replica %d serves %s, want fifosort still", bad.name, pr.Pid(), sha)
			}
		}
	}
	if got := openRoom(leader, 2*per); !slices.Equal(got, wantGroup(1)) {
		t.Errorf("after the refusals the leader bound pods of groups %v, want group 1 (FIFO still)", got)
	}
	update(func(p *policyapi.SchedulingPolicy) { p.Spec.Module.Inline, p.Spec.SHA256 = fifo, digestHex(fifo) })
	waitStatus(t, env, "fifo", "Accepted again", func(p *policyapi.SchedulingPolicy) bool {
		s, _ := accepted(p)
		return s == metav1.ConditionTrue
	})

	// Failover: the standby serves FIFO before it leads.
	if m, sha, _ := standby.queueSort(t); m != "schedulingpolicy/fifo" || sha != digestHex(fifo) {
		t.Fatalf("the standby serves %s (%s) before the failover, want schedulingpolicy/fifo", m, sha)
	}
	if err := leader.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 60*time.Second, "the standby to take the lease over", func() (bool, error) {
		return strings.Contains(standby.Log(), "became leader"), nil
	})
	if got := openRoom(standby, 3*per); !slices.Equal(got, wantGroup(2)) {
		t.Errorf("the new leader bound pods of groups %v, want group 2 (FIFO)", got)
	}
	waitStatus(t, env, "fifo", "the new leader to say it leads", func(p *policyapi.SchedulingPolicy) bool {
		return everyReplica(p, []*proc{standby}, func(r policyapi.ReplicaStatus) bool { return r.Leader })
	})

	// A configuration change and SIGHUP leave the held slot alone.
	before := strings.Count(standby.Log(), "the slot is held by a SchedulingPolicy")
	writeConfig(other)
	if err := standby.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, "the reload to pass the held slot over", func() (bool, error) {
		return strings.Count(standby.Log(), "the slot is held by a SchedulingPolicy") > before, nil
	})
	if m, _, _ := standby.queueSort(t); m != "schedulingpolicy/fifo" {
		t.Errorf("after SIGHUP with another configured module queueSort serves %s, want schedulingpolicy/fifo", m)
	}

	// Deleting the object gives the slot back to the configured module.
	if err := editor.Resource(gvr).Delete(ctx, "fifo", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, "the configured module to serve again", func() (bool, error) {
		m, sha, held := standby.queueSort(t)
		return m == other && sha == digestHex(prio) && held == "", nil
	})
	if got := openRoom(standby, groups*per); !slices.Equal(got, wantGroup(3)) {
		t.Errorf("the last round bound pods of groups %v, want group 3", got)
	}
	scheduledOnce(t, c, ns, groups*per, 60*time.Second)
}

// TestPolicyAPISchema round-trips a fully populated SchedulingPolicy, spec
// and status, through the apiserver, which prunes every field deploy/crd.yaml
// does not declare: what comes back equals what was sent, so the Go types
// and the schema agree. Invalid specs are refused by the schema.
func TestPolicyAPISchema(t *testing.T) {
	env := testenv.Start(t)
	ctx := context.Background()
	installPolicyAPI(t, env)
	ri := env.Dynamic().Resource(policyapi.GVR)

	pages := int32(64)
	// Bytes whose base64 has '+' and '/'.
	spec := policyapi.Spec{Profile: "wasmsched-fifo", Slot: "victimOrder", SHA256: strings.Repeat("0123456789abcdef", 4),
		Module:  policyapi.Module{Inline: []byte("\x00asm\x01\x00\x00\x00\xfb\xff\xfe")},
		Sandbox: &policyapi.Sandbox{MemoryPages: &pages, Deadline: &metav1.Duration{Duration: 50 * time.Millisecond}},
		Mode:    policyapi.ModeShadow, Shadow: &policyapi.ShadowSpec{SampleRate: "0.25"}}
	u, err := policyapi.ToUnstructured(policyapi.New("full", spec))
	if err != nil {
		t.Fatal(err)
	}
	created, err := ri.Create(ctx, u, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	p, err := policyapi.FromUnstructured(created)
	if err != nil {
		t.Fatal(err)
	}
	now := metav1.NewTime(time.Now().Truncate(time.Second))
	status := policyapi.Status{ObservedGeneration: p.Generation, Digest: strings.Repeat("a", 64), ShortDigest: "aaaaaaaaaaaa", Agreement: "97.5% of 400",
		Conditions: []metav1.Condition{{Type: policyapi.ConditionAccepted, Status: metav1.ConditionTrue, Reason: policyapi.ReasonLoaded,
			Message: "serves", ObservedGeneration: p.Generation, LastTransitionTime: now}},
		Replicas: []policyapi.ReplicaStatus{
			{Name: "a", Leader: true, Digest: "d1", State: policyapi.StateShadowing, BreakerOpen: true, Fallbacks: 3, ObservedGeneration: p.Generation, LastUpdateTime: now, Message: "m1",
				Shadow: &policyapi.ShadowStatus{Decisions: 400, Disagreements: 8, Errors: 2, Dropped: 1, Since: now,
					Kinds:   map[string]int64{"victimOrderDiffers": 8, "victimSetDiffers": 3},
					Samples: []policyapi.ShadowSample{{Pod: "ns/p", Event: "Preemption", Active: "most important first: ns/a ns/b", Shadow: "most important first: ns/b ns/a", Kind: "victimSetDiffers", Time: now, Case: `{"name":"x","victims":[{"name":"a"}],"want":["a"]}`}}}},
			{Name: "b", Digest: "d2", State: policyapi.StateRefused, ObservedGeneration: p.Generation, LastUpdateTime: now, Message: "m2"},
		}}
	p.Status = status
	if u, err = policyapi.ToUnstructured(p); err != nil {
		t.Fatal(err)
	}
	if _, err := ri.UpdateStatus(ctx, u, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("update status: %v", err)
	}
	back, err := ri.Get(ctx, "full", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got, err := policyapi.FromUnstructured(back)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(spec, got.Spec); diff != "" {
		t.Errorf("spec after the round trip (-sent, +stored):\n%s", diff)
	}
	if diff := cmp.Diff(status, got.Status); diff != "" {
		t.Errorf("status after the round trip (-sent, +stored):\n%s", diff)
	}

	// kubectl get schedulingpolicies: the printer columns, as the apiserver
	// renders them for kubectl.
	raw, err := env.Client.Discovery().RESTClient().Get().AbsPath("/apis", policyapi.Group, policyapi.Version, policyapi.Resource).
		SetHeader("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io").Do(ctx).Raw()
	if err != nil {
		t.Fatalf("get the table: %v", err)
	}
	var table metav1.Table
	if err := json.Unmarshal(raw, &table); err != nil {
		t.Fatal(err)
	}
	var cols []string
	for _, c := range table.ColumnDefinitions {
		if c.Priority == 0 {
			cols = append(cols, c.Name)
		}
	}
	if diff := cmp.Diff([]string{"Name", "Profile", "Slot", "Mode", "Agreement", "Digest", "Accepted", "Age"}, cols); diff != "" {
		t.Errorf("kubectl get columns (-want, +got):\n%s", diff)
	}
	if len(table.Rows) != 1 {
		t.Fatalf("%d rows, want 1", len(table.Rows))
	}
	if row := table.Rows[0].Cells; len(row) < 7 || row[0] != "full" || row[1] != "wasmsched-fifo" || row[2] != "victimOrder" || row[3] != "Shadow" ||
		row[4] != "97.5% of 400" || row[5] != "aaaaaaaaaaaa" || row[6] != "True" {
		t.Errorf("kubectl get row %v, want full, wasmsched-fifo, victimOrder, Shadow, 97.5%% of 400, aaaaaaaaaaaa, True, ...", row)
	}

	for _, bad := range []struct {
		name string
		mod  func(*policyapi.Spec)
		want string
	}{
		{"both sources", func(s *policyapi.Spec) { s.Module.ConfigMapRef = &policyapi.ConfigMapKeyRef{Name: "m", Key: "k"} }, "spec.module"},
		{"no source", func(s *policyapi.Spec) { s.Module = policyapi.Module{} }, "spec.module"},
		{"slot", func(s *policyapi.Spec) { s.Slot = "placement" }, "spec.slot"},
		{"failurePolicy", func(s *policyapi.Spec) { s.Slot, s.FailurePolicy = "filter", "Retry" }, "spec.failurePolicy"},
		{"sha256", func(s *policyapi.Spec) { s.SHA256 = strings.Repeat("A", 64) }, "spec.sha256"},
		{"deadline", func(s *policyapi.Spec) { s.Sandbox.Deadline = &metav1.Duration{Duration: 2 * time.Minute} }, "a duration from 1ms to 1m"},
		{"memory", func(s *policyapi.Spec) { n := int32(1); s.Sandbox.MemoryPages = &n }, "spec.sandbox.memoryPages"},
		{"mode", func(s *policyapi.Spec) { s.Mode = "Canary" }, "spec.mode"},
		{"sampleRate", func(s *policyapi.Spec) { s.Shadow.SampleRate = "2" }, "spec.shadow.sampleRate"},
	} {
		s := policyapi.Spec{}
		spec.DeepCopyInto(&s)
		bad.mod(&s)
		u, err := policyapi.ToUnstructured(policyapi.New("bad", s))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ri.Create(ctx, u, metav1.CreateOptions{}); !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%s: create: %v, want Invalid mentioning %q", bad.name, err, bad.want)
			_ = ri.Delete(ctx, "bad", metav1.DeleteOptions{})
		}
	}
}

// TestPolicyAPIStatus: one replica and the other states an object can be
// in. A module in a ConfigMap that does not exist yet is refused
// (ModuleNotFound) and loads once the ConfigMap is created; an update of the
// ConfigMap's bytes reloads it. A second object for the same slot is
// refused (Conflict) while the first holds it, and takes the slot when the
// first is deleted; an object for a profile the scheduler does not have is
// refused (UnknownProfile). The entry of a replica that stopped reporting is
// pruned; a fresh one is kept.
func TestPolicyAPIStatus(t *testing.T) {
	t.Setenv("POD_NAME", "")
	env := testenv.Start(t)
	c := env.Client
	ctx := context.Background()
	installPolicyAPI(t, env)
	ns := env.Namespace(t)
	ri := env.Dynamic().Resource(policyapi.GVR)
	fifo := fixtureFile(t, "guest-sdk", "examples", "fifosort", "fifosort.wasm")
	prio := fixtureFile(t, "guest-sdk", "examples", "prioritysort", "prioritysort.wasm")
	create := func(name string, spec policyapi.Spec) {
		t.Helper()
		u, err := policyapi.ToUnstructured(policyapi.New(name, spec))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ri.Create(ctx, u, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create %s: %v", name, err)
		}
		t.Cleanup(func() { _ = ri.Delete(ctx, name, metav1.DeleteOptions{}) })
		time.Sleep(1100 * time.Millisecond) // creation times have 1 s resolution: the order decides conflicts
	}
	reason := func(want string) func(*policyapi.SchedulingPolicy) bool {
		return func(p *policyapi.SchedulingPolicy) bool { _, r := accepted(p); return r == want }
	}

	sched := startScheduler(t, env.Kubeconfig, "-set", "policyAPI.namespace="+ns, "-set", "policyAPI.statusInterval=1s")
	procs := []*proc{sched}
	ref := &policyapi.ConfigMapKeyRef{Name: "modules", Key: "sort.wasm"}
	create("first", policyapi.Spec{Slot: "queueSort", Module: policyapi.Module{ConfigMapRef: ref}})
	st := waitStatus(t, env, "first", "ModuleNotFound", reason(policyapi.ReasonModuleNotFound))
	if msg := policyapi.Condition(st.Status.Conditions).Message; !strings.Contains(msg, "ConfigMap "+ns+"/modules not found") {
		t.Errorf("ModuleNotFound message %q does not name the ConfigMap", msg)
	}
	cm := &v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "modules"}, BinaryData: map[string][]byte{"sort.wasm": fifo}}
	if _, err := c.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitStatus(t, env, "first", "the ConfigMap's module to load", func(p *policyapi.SchedulingPolicy) bool {
		return reason(policyapi.ReasonLoaded)(p) && p.Status.Digest == digestHex(fifo)
	})
	cm.BinaryData["sort.wasm"] = prio
	if _, err := c.CoreV1().ConfigMaps(ns).Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitStatus(t, env, "first", "the ConfigMap's new bytes to load", func(p *policyapi.SchedulingPolicy) bool {
		return reason(policyapi.ReasonLoaded)(p) && p.Status.Digest == digestHex(prio) &&
			everyReplica(p, procs, func(r policyapi.ReplicaStatus) bool { return r.Digest == digestHex(prio) && r.Leader })
	})

	create("second", policyapi.Spec{Slot: "queueSort", Module: policyapi.Module{Inline: fifo}})
	st = waitStatus(t, env, "second", "Conflict", func(p *policyapi.SchedulingPolicy) bool {
		return reason(policyapi.ReasonConflict)(p) && everyReplica(p, procs, func(r policyapi.ReplicaStatus) bool { return r.State == policyapi.StateConflict })
	})
	if msg := policyapi.Condition(st.Status.Conditions).Message; !strings.Contains(msg, `held by SchedulingPolicy "first"`) {
		t.Errorf("Conflict message %q does not name the holder", msg)
	}
	create("nowhere", policyapi.Spec{Profile: "no-such-profile", Slot: "queueSort", Module: policyapi.Module{Inline: fifo}})
	waitStatus(t, env, "nowhere", "UnknownProfile", reason(policyapi.ReasonUnknownProfile))

	if err := ri.Delete(ctx, "first", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitStatus(t, env, "second", "the second object to take the slot", func(p *policyapi.SchedulingPolicy) bool {
		return reason(policyapi.ReasonLoaded)(p) && p.Status.Digest == digestHex(fifo)
	})
	if m, _, held := sched.queueSort(t); m != "schedulingpolicy/second" || held != "second" {
		t.Errorf("queueSort serves %s held by %q, want schedulingpolicy/second", m, held)
	}

	// Entries of other replicas: one gone for an hour, one that reports.
	p := getPolicy(t, env, "second")
	p.Status.Replicas = append(p.Status.Replicas,
		policyapi.ReplicaStatus{Name: "gone", State: policyapi.StateServing, LastUpdateTime: metav1.NewTime(time.Now().Add(-time.Hour))},
		policyapi.ReplicaStatus{Name: "alive", State: policyapi.StateServing, LastUpdateTime: metav1.NewTime(time.Now().Add(time.Hour))})
	u, err := policyapi.ToUnstructured(p)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ri.UpdateStatus(ctx, u, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitStatus(t, env, "second", "the gone replica's entry to be pruned", func(p *policyapi.SchedulingPolicy) bool {
		var names []string
		for _, r := range p.Status.Replicas {
			names = append(names, r.Name)
		}
		return !slices.Contains(names, "gone") && slices.Contains(names, "alive") && everyReplica(p, procs, func(policyapi.ReplicaStatus) bool { return true })
	})
}

// fixtureFile reads a file of the repository.
func fixtureFile(t *testing.T, parts ...string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(append([]string{".."}, parts...)...))
	if err != nil {
		t.Fatal(err)
	}
	return b
}
