package cli

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"k8s.io/client-go/kubernetes"

	"github.com/wasmsched/wasmsched/config"
	"github.com/wasmsched/wasmsched/host/app"
)

// TestRunPassesOptions: the options of Run's caller reach app.New, after
// the command's own, so a binary built around Run can add to the scheduler.
func TestRunPassesOptions(t *testing.T) {
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(kubeconfig, []byte(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
users: [{name: u, user: {}}]
current-context: c
`), 0o600); err != nil {
		t.Fatal(err)
	}
	stop := errors.New("stop here")
	var got []app.Option
	defer func(orig func(context.Context, *config.Config, kubernetes.Interface, ...app.Option) (*app.App, error)) {
		newApp = orig
	}(newApp)
	newApp = func(_ context.Context, _ *config.Config, _ kubernetes.Interface, opts ...app.Option) (*app.App, error) {
		got = opts
		return nil, stop
	}
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
