package app_test

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/wasmsched/wasmsched/config"
	"github.com/wasmsched/wasmsched/host/app"
	"github.com/wasmsched/wasmsched/host/cache"
	"github.com/wasmsched/wasmsched/host/framework"
)

// poolName and poolLabel are the out-of-tree plugin's: a filter that
// keeps a pod labelled poolLabel on nodes with the same label value, the
// kind of rule a platform team writes without forking the scheduler.
const (
	poolName  = "example.com/Pool"
	poolLabel = "example.com/pool"
)

type pool struct{}

func (pool) Name() string { return poolName }

// PreFilter skips pods without the label: they pay nothing for the plugin.
func (pool) PreFilter(pod *cache.PodInfo, _ *cache.Snapshot) (framework.PodFilter, []string, *framework.Status) {
	want, ok := pod.Pod.Labels[poolLabel]
	if !ok {
		return nil, nil, nil
	}
	return poolFilter(want), nil, nil
}

type poolFilter string

func (f poolFilter) Filter(ni *cache.NodeInfo) *framework.Status {
	if ni.Node().Labels[poolLabel] != string(f) {
		return &framework.Status{Code: framework.UnschedulableAndUnresolvable, Plugin: poolName,
			Reasons: []string{"node(s) not in the pod's pool"}}
	}
	return nil
}

// poolRow is all a Go program adds to wasmsched to have the plugin: off by
// default, enabled by a KubeSchedulerConfiguration.
func poolRow() framework.Row {
	return framework.Row{Name: poolName, Points: framework.PointsOf(framework.PointPreFilter, framework.PointFilter),
		New: func(framework.Handle, any) (framework.Plugin, error) { return pool{}, nil }}
}

const poolConfig = `apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
leaderElection: {leaderElect: false}
profiles:
- schedulerName: wasmsched
  plugins:
    multiPoint:
      enabled: [{name: example.com/Pool}]
`

// TestOutOfTreePlugin builds wasmsched with a plugin of its own, as a Go
// program does (app.WithPlugin), enables it with a KubeSchedulerConfiguration,
// and checks that it decides where a pod goes; without the row, the same
// configuration is refused at load.
func TestOutOfTreePlugin(t *testing.T) {
	file := filepath.Join(t.TempDir(), "scheduler.yaml")
	if err := os.WriteFile(file, []byte(poolConfig), 0o644); err != nil {
		t.Fatal(err)
	}
	over := map[string]string{"metrics.bindAddress": "", "secureServing.bindAddress": "", "sandbox.deadline": "10s"}

	inTree, err := app.Registry()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := config.Load(config.Source{File: file, Overrides: over, Plugins: inTree}); err == nil ||
		!strings.Contains(err.Error(), `unknown plugin "example.com/Pool"`) {
		t.Fatalf("load without the plugin: %v, want the plugin refused by name", err)
	}

	withPool := app.WithPlugin(poolRow())
	reg, err := app.Registry(withPool)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(config.Source{File: file, Overrides: over, Plugins: reg})
	if err != nil {
		t.Fatalf("load with the plugin: %v", err)
	}

	client := fake.NewClientset()
	var mu sync.Mutex
	bound := map[string]string{}
	client.PrependReactor("create", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if a.GetSubresource() != "binding" {
			return false, nil, nil
		}
		b := a.(k8stesting.CreateAction).GetObject().(*v1.Binding)
		mu.Lock()
		bound[b.Name] = b.Target.Name
		mu.Unlock()
		return true, b, nil
	})
	a, err := app.New(context.Background(), cfg, client, withPool, app.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Close)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })

	ctxAPI := context.Background()
	for _, n := range []struct{ name, pool string }{{"red-1", "red"}, {"blue-1", "blue"}, {"red-2", "red"}} {
		node := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: n.name, Labels: map[string]string{poolLabel: n.pool}},
			Status: v1.NodeStatus{Allocatable: v1.ResourceList{v1.ResourceCPU: resource.MustParse("4"), v1.ResourcePods: resource.MustParse("10")}}}
		if _, err := client.CoreV1().Nodes().Create(ctxAPI, node, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"blue-a", "blue-b", "blue-c", "blue-d"} {
		pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, UID: types.UID(name), Labels: map[string]string{poolLabel: "blue"}},
			Spec: v1.PodSpec{SchedulerName: "wasmsched", Containers: []v1.Container{{Name: "c"}}}}
		if _, err := client.CoreV1().Pods("default").Create(ctxAPI, pod, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		mu.Lock()
		n := len(bound)
		got := map[string]string{}
		for k, v := range bound {
			got[k] = v
		}
		mu.Unlock()
		if n == 4 {
			for pod, node := range got {
				if node != "blue-1" {
					t.Errorf("pod %s bound to %s, want blue-1 (the only node of its pool)", pod, node)
				}
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("bound %v within 30s, want every pod on blue-1", got)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
