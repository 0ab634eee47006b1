package e2e

import (
	"context"
	"crypto/tls"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/wasmsched/wasmsched/e2e/testenv"
	"github.com/wasmsched/wasmsched/host/policyapi"
)

// TestDeployManifests: deploy/'s RBAC and config, applied to a real
// apiserver, are enough for the scheduler to run as its ServiceAccount
// (not as an admin): it elects itself leader, watches what it needs and
// binds a pod, and its secure port authenticates and authorizes callers
// through the apiserver (a scraper bound to wasmsched-metrics-reader reads
// /metrics; the client CA is read from kube-system). The Deployment and the
// NetworkPolicy are applied too (nothing runs them: no kubelet, no network
// plugin), which checks they are valid for the apiserver.
func TestDeployManifests(t *testing.T) {
	t.Setenv("POD_NAME", "") // the replicas are named host_pid (see everyReplica), wherever the test runs
	env := testenv.Start(t)
	c := env.Client
	ctx := context.Background()
	installPolicyAPI(t, env) // the CRD, served before the scheduler looks for it
	var files []string
	for _, f := range []string{"namespace", "serviceaccount", "clusterrole", "clusterrolebinding", "role", "rolebinding",
		"auth-delegator", "authentication-reader", "metrics-reader", "networkpolicy", "policy-rbac", "configmap", "deployment"} {
		files = append(files, filepath.Join("..", "deploy", f+".yaml"))
	}
	if err := env.Apply(ctx, files...); err != nil {
		t.Fatalf("apply deploy/: %v", err)
	}
	dep, err := c.AppsV1().Deployments("wasmsched").Get(ctx, "wasmsched", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the Deployment was not created: %v", err)
	}
	if sa := dep.Spec.Template.Spec.ServiceAccountName; sa != "wasmsched" {
		t.Fatalf("Deployment runs as ServiceAccount %q, want wasmsched", sa)
	}
	kubeconfig, err := env.ServiceAccountKubeconfig(ctx, "wasmsched", "wasmsched")
	if err != nil {
		t.Fatal(err)
	}
	ns := env.Namespace(t)
	createNode(t, c, nodeSpec{name: "n1", cpu: "4"})
	// A SchedulingPolicy whose module is in a ConfigMap of the scheduler's
	// namespace: reading both and writing the status need their own
	// permissions.
	fifo, err := os.ReadFile(filepath.Join("..", "guest-sdk", "examples", "fifosort", "fifosort.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	cm := &v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "wasmsched", Name: "policies"}, BinaryData: map[string][]byte{"fifo.wasm": fifo}}
	if _, err := c.CoreV1().ConfigMaps("wasmsched").Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pol, err := policyapi.ToUnstructured(policyapi.New("fifo", policyapi.Spec{Slot: "queueSort",
		Module: policyapi.Module{ConfigMapRef: &policyapi.ConfigMapKeyRef{Name: "policies", Key: "fifo.wasm"}}}))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := env.Dynamic().Resource(policyapi.GVR).Create(ctx, pol, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Dynamic().Resource(policyapi.GVR).Delete(ctx, "fifo", metav1.DeleteOptions{}) })
	sched := startScheduler(t, kubeconfig, "-config", filepath.Join("..", "deploy", "config.yaml"), "-leader-elect")
	waitFor(t, 30*time.Second, "the ServiceAccount's scheduler to lead", func() (bool, error) {
		return strings.Contains(sched.Log(), "became leader"), nil
	})
	createPod(t, c, makePod(ns, "p", "wasmsched", "1"))
	unsched := makePod(ns, "too-big", "wasmsched", "64")
	createPod(t, c, unsched)
	if node := waitBound(t, c, ns, "p", 30*time.Second); node != "n1" {
		t.Fatalf("bound to %q, want n1", node)
	}
	// Status patches and events need their own permissions.
	waitFor(t, 30*time.Second, "too-big's condition and event", func() (bool, error) {
		cond := scheduledCondition(getPod(t, c, ns, "too-big"))
		evs := eventsFor(t, c, ns, "too-big")
		return cond != nil && len(evs) > 0, nil
	})

	// A scraper's ServiceAccount bound to wasmsched-metrics-reader: the
	// scheduler, as its own ServiceAccount, reviews the token and the access.
	scraper := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "scraper-" + ns},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "wasmsched-metrics-reader"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: "scraper"}}}
	if _, err := c.RbacV1().ClusterRoleBindings().Create(ctx, scraper, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	token, err := env.ServiceAccountToken(ctx, ns, "scraper")
	if err != nil {
		t.Fatal(err)
	}
	admin, err := tls.X509KeyPair(env.Config.TLSClientConfig.CertData, env.Config.TLSClientConfig.KeyData)
	if err != nil {
		t.Fatal(err)
	}
	for _, who := range []struct {
		name  string
		hc    *http.Client
		token string
	}{{"the scraper's token", secureClient(nil), token}, {"a client certificate of the apiserver's CA", secureClient(&admin), ""}} {
		waitFor(t, 30*time.Second, "GET /metrics with "+who.name, func() (bool, error) {
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, "https://"+sched.SecureAddr+"/metrics", nil)
			if err != nil {
				return false, err
			}
			if who.token != "" {
				req.Header.Set("Authorization", "Bearer "+who.token)
			}
			res, err := who.hc.Do(req)
			if err != nil {
				return false, err
			}
			_ = res.Body.Close()
			return res.StatusCode == http.StatusOK, nil
		})
		who.hc.CloseIdleConnections()
	}

	waitStatus(t, env, "fifo", "the replica to serve the ConfigMap's module", func(p *policyapi.SchedulingPolicy) bool {
		s, _ := accepted(p)
		return s == metav1.ConditionTrue && everyReplica(p, []*proc{sched}, func(r policyapi.ReplicaStatus) bool {
			return r.State == policyapi.StateServing && r.Digest == digestHex(fifo) && r.Leader
		})
	})
	if log := sched.Log(); strings.Contains(log, "forbidden") {
		t.Errorf("the scheduler was refused something with the ServiceAccount's permissions:\n%s", grep(log, "forbidden"))
	}
}

func grep(s, substr string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, substr) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
