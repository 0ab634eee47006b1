package e2e

import (
	"bytes"
	"context"
	"crypto/tls"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/wasmsched/wasmsched/e2e/testenv"
)

// TestSecurePort: the scheduler's HTTPS listener asks the real apiserver
// (RBAC) who its callers are and what they may read, as kube-scheduler's
// secure port does. Anonymous callers get the probes only (401 elsewhere);
// a ServiceAccount token is reviewed and authorized per non-resource URL
// (403 without a binding, 200 with one); a system:masters client
// certificate of the apiserver's client CA reads everything; and no
// caller, however privileged, can upload a module there, while the plain
// loopback listener with policies.adminEndpoint still takes one.
func TestSecurePort(t *testing.T) {
	env := testenv.Start(t)
	c := env.Client
	ctx := context.Background()
	ns := env.Namespace(t)

	// A reader of /metrics, a reader of /policies and an account with no
	// rights, each a ServiceAccount bound to a ClusterRole as a scraper's
	// would be.
	grant := func(sa, url string) {
		t.Helper()
		name := ns + "-" + sa
		role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name},
			Rules: []rbacv1.PolicyRule{{NonResourceURLs: []string{url}, Verbs: []string{"get"}}}}
		if _, err := c.RbacV1().ClusterRoles().Create(ctx, role, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		binding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: sa}}}
		if _, err := c.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	grant("metrics-reader", "/metrics")
	grant("policy-reader", "/policies")
	token := func(sa string) string {
		t.Helper()
		tok, err := env.ServiceAccountToken(ctx, ns, sa)
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
	metricsReader, policyReader, nobody := token("metrics-reader"), token("policy-reader"), token("nobody")

	// The admin endpoint is on (the plain listener is on loopback): the
	// secure listener must not serve it all the same.
	sched := startScheduler(t, env.Kubeconfig, "-set", "policies.adminEndpoint=true")
	if sched.SecureAddr == "" {
		t.Fatal("testenv did not give the scheduler a secure address")
	}

	admin, err := tls.X509KeyPair(env.Config.TLSClientConfig.CertData, env.Config.TLSClientConfig.KeyData)
	if err != nil {
		t.Fatal(err)
	}
	anonymous := secureClient(nil)
	masters := secureClient(&admin)
	defer anonymous.CloseIdleConnections()
	defer masters.CloseIdleConnections()
	do := func(hc *http.Client, method, path, token string, body ...byte) (int, string) {
		t.Helper()
		req, err := http.NewRequestWithContext(ctx, method, "https://"+sched.SecureAddr+path, bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		res, err := hc.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", method, path, err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	// eventually waits for an answer: RoleBindings reach the apiserver's
	// RBAC cache, and the client CA the scheduler's, a moment after they
	// are written; a denial is cached for 10 s.
	eventually := func(hc *http.Client, path, token string, want int, contains string) {
		t.Helper()
		var code int
		var body string
		waitFor(t, 30*time.Second, "GET "+path+" to answer "+http.StatusText(want), func() (bool, error) {
			code, body = do(hc, http.MethodGet, path, token)
			return code == want && strings.Contains(body, contains), nil
		})
	}

	for _, p := range []string{"/healthz", "/livez", "/readyz"} {
		if code, body := do(anonymous, http.MethodGet, p, ""); code != http.StatusOK || body != "ok" {
			t.Errorf("GET %s without credentials: %d %q, want 200 ok", p, code, body)
		}
	}
	for _, p := range []string{"/metrics", "/policies"} {
		if code, _ := do(anonymous, http.MethodGet, p, ""); code != http.StatusUnauthorized {
			t.Errorf("GET %s without credentials: %d, want 401", p, code)
		}
	}
	if code, _ := do(anonymous, http.MethodGet, "/metrics", "not-a-token"); code != http.StatusUnauthorized {
		t.Errorf("GET /metrics with a token the apiserver does not know: %d, want 401", code)
	}
	if code, body := do(anonymous, http.MethodGet, "/metrics", nobody); code != http.StatusForbidden {
		t.Errorf("GET /metrics as a ServiceAccount without rights: %d %.200q, want 403", code, body)
	}

	eventually(anonymous, "/metrics", metricsReader, http.StatusOK, "scheduler_pending_pods")
	if code, _ := do(anonymous, http.MethodGet, "/policies", metricsReader); code != http.StatusForbidden {
		t.Errorf("GET /policies as the reader of /metrics only: %d, want 403", code)
	}
	eventually(anonymous, "/policies", policyReader, http.StatusOK, `"queueSort"`)

	// system:masters needs no SubjectAccessReview, once the client CA of
	// kube-system/extension-apiserver-authentication is loaded.
	eventually(masters, "/metrics", "", http.StatusOK, "scheduler_")
	fifo, err := os.ReadFile(filepath.Join("..", "guest-sdk", "examples", "fifosort", "fifosort.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	before := sched.policiesState(t)["wasmsched"]["queueSort"]
	for _, p := range []string{"/policies/queueSort", "/policies"} {
		if code, body := do(masters, http.MethodPost, p, "", fifo...); code != http.StatusNotFound && code != http.StatusMethodNotAllowed {
			t.Errorf("POST %s on the secure listener as system:masters: %d %.200q, want 404 or 405 (no upload there)", p, code, body)
		}
	}
	if after := sched.policiesState(t)["wasmsched"]["queueSort"]; after != before {
		t.Errorf("queueSort changed from %+v to %+v by a POST on the secure listener", before, after)
	}
	// The upload is the plain loopback listener's alone.
	if code, res := sched.postModule(t, "queueSort", fifo); code != http.StatusOK {
		t.Errorf("POST /policies/queueSort on the plain listener with the admin endpoint on: %d %s, want 200", code, res.Error)
	}
}

// secureClient talks to the scheduler's self-signed HTTPS listener, with a
// client certificate if one is given.
func secureClient(cert *tls.Certificate) *http.Client {
	tc := &tls.Config{InsecureSkipVerify: true} //nolint:gosec // the scheduler's self-signed loopback certificate
	if cert != nil {
		tc.Certificates = []tls.Certificate{*cert}
	}
	return &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{TLSClientConfig: tc}}
}
