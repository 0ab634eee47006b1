package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"sync"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/wasmsched/wasmsched/config"
	"github.com/wasmsched/wasmsched/host/app"
)

// TestRunPassesOptions: the options of Run's caller reach app.New, after
// the command's own, so a binary built around Run can add to the scheduler.
func TestRunPassesOptions(t *testing.T) {
	kubeconfig := writeKubeconfig(t, "https://127.0.0.1:1")
	stop := errors.New("stop here")
	var got []app.Option
	stubNewApp(t, func(_ context.Context, _ *config.Config, _ kubernetes.Interface, opts ...app.Option) (*app.App, error) {
		got = opts
		return nil, stop
	})
	args := []string{"run", "-kubeconfig", kubeconfig}
	if code, _, errOut := runCLI(args...); code != 1 {
		t.Fatalf("run: code %d, stderr %q; want 1 from the stubbed app.New", code, errOut)
	}
	own := len(got)
	// WithRegistry is one the command does not pass itself: the last
	// option must be the caller's.
	mine := app.WithRegistry(nil)
	var out, errOut bytes.Buffer
	if code := Run(context.Background(), args, &out, &errOut, app.WithIdentity("test"), mine); code != 1 {
		t.Fatalf("run with options: code %d, stderr %q", code, errOut.String())
	}
	if len(got) != own+2 {
		t.Fatalf("app.New got %d options; want the command's %d and the caller's 2", len(got), own)
	}
	if reflect.ValueOf(got[len(got)-1]).Pointer() != reflect.ValueOf(mine).Pointer() {
		t.Errorf("the last option of app.New is not the caller's last")
	}
}

// TestRunAsksNoCompression: the scheduler's requests do not accept gzip,
// as kube-scheduler's (the apiserver compresses watch events and large
// responses for clients that do).
func TestRunAsksNoCompression(t *testing.T) {
	var mu sync.Mutex
	var encodings []string
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		encodings = append(encodings, r.Header.Get("Accept-Encoding"))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"kind":"PodList","apiVersion":"v1","metadata":{},"items":[]}`)
	}))
	defer srv.Close()
	kubeconfig := writeKubeconfig(t, srv.URL)
	var listErr error
	stubNewApp(t, func(ctx context.Context, _ *config.Config, c kubernetes.Interface, _ ...app.Option) (*app.App, error) {
		_, listErr = c.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
		return nil, errors.New("stop here")
	})
	if code, _, errOut := runCLI("run", "-kubeconfig", kubeconfig); code != 1 {
		t.Fatalf("run: code %d, stderr %q; want 1 from the stubbed app.New", code, errOut)
	}
	if listErr != nil {
		t.Fatalf("list pods through the command's client: %v", listErr)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(encodings) == 0 {
		t.Fatal("the server saw no request")
	}
	for _, e := range encodings {
		if e != "" {
			t.Errorf("request with Accept-Encoding %q, want none (no compression, as kube-scheduler)", e)
		}
	}
}

// writeKubeconfig writes a kubeconfig for server (its certificate not
// verified, no credentials) and returns its path.
func writeKubeconfig(t *testing.T, server string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(path, fmt.Appendf(nil, `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: %q, insecure-skip-tls-verify: true}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
users: [{name: u, user: {}}]
current-context: c
`, server), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// stubNewApp makes the run command call f in place of app.New until the
// test ends.
func stubNewApp(t *testing.T, f func(context.Context, *config.Config, kubernetes.Interface, ...app.Option) (*app.App, error)) {
	orig := newApp
	t.Cleanup(func() { newApp = orig })
	newApp = f
}
