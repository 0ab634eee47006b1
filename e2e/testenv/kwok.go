package testenv

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// KWOK's node selection: StartKWOK manages only Nodes annotated
// KWOKNodeAnnotation=KWOKNodeAnnotationValue, which CreateFakeNodes sets;
// Pods bound to those Nodes follow KWOK's "fast" stages (Running at once;
// deleted pods are removed at once).
const (
	KWOKNodeAnnotation      = "kwok.x-k8s.io/node"
	KWOKNodeAnnotationValue = "fake"
	// FakeNodeLabel=FakeNodeLabelValue is on every node CreateFakeNodes makes.
	FakeNodeLabel      = "type"
	FakeNodeLabelValue = "kwok"
)

// KWOKOptions configures StartKWOK.
type KWOKOptions struct {
	// StagesFile is kwok's --config; empty means the kwok-stages.yaml that
	// hack/cluster.sh writes next to the binary (KWOK's node and pod "fast"
	// stages).
	StagesFile string
	// Args are appended to kwok's command line.
	Args []string
}

// KWOK is a running kwok controller: fake kubelets for annotated nodes.
type KWOK struct {
	proc     *Process
	stopOnce sync.Once
}

// StartKWOK runs kwok against the apiserver as the admin. It serves nothing:
// kwok opens a port only with --server-address or --node-port, neither of
// which is given. Env.Stop stops it too.
func (e *Env) StartKWOK(ctx context.Context, o KWOKOptions) (*KWOK, error) {
	stages := o.StagesFile
	if stages == "" {
		stages = filepath.Join(e.binDir, kwokStages)
	}
	// kwok also reads ~/.kwok/kwok.yaml when it exists; a private HOME
	// keeps a developer's configuration out of the tests.
	home := filepath.Join(e.dir, e.nextName("kwok-home"))
	if err := os.MkdirAll(home, 0o700); err != nil {
		return nil, err
	}
	args := append([]string{
		"--kubeconfig=" + e.Kubeconfig,
		"--config=" + stages,
		"--manage-all-nodes=false",
		"--manage-nodes-with-annotation-selector=" + KWOKNodeAnnotation + "=" + KWOKNodeAnnotationValue,
		"--node-ip=10.0.0.2",
		"--cidr=10.1.0.0/16",
	}, o.Args...)
	env := append(os.Environ(), "HOME="+home, "KWOK_WORKDIR="+home)
	proc, err := StartProcess(ctx, filepath.Join(e.binDir, binKWOK), ProcessOptions{
		Name: "kwok", Args: args, Env: env, Dir: home, LogPath: filepath.Join(home, "kwok.log"),
	})
	if err != nil {
		return nil, err
	}
	k := &KWOK{proc: proc}
	e.mu.Lock()
	e.kwoks = append(e.kwoks, k)
	e.mu.Unlock()
	// kwok logs "Watch nodes" once it has the apiserver and its stages;
	// wait for that so that a quick exit (a bad flag or stage) is an error
	// here rather than nodes that never get Ready.
	deadline := time.Now().Add(30 * time.Second)
	for {
		if ok, err := proc.Exited(); ok {
			return nil, fmt.Errorf("kwok %w (%v)\n--- tail of %s ---\n%s", errExited, err, proc.logPath, proc.Tail(30))
		}
		if strings.Contains(proc.Tail(200), "Watch nodes") {
			return k, nil
		}
		if time.Now().After(deadline) {
			k.Stop()
			return nil, fmt.Errorf("kwok did not start watching nodes within 30 s\n--- tail of %s ---\n%s", proc.logPath, proc.Tail(30))
		}
		select {
		case <-ctx.Done():
			k.Stop()
			return nil, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// Stop stops kwok. It is idempotent.
func (k *KWOK) Stop() { k.stopOnce.Do(func() { k.proc.Stop(0) }) }

// LogPath is the file kwok logs to.
func (k *KWOK) LogPath() string { return k.proc.logPath }

// NodeSpec describes fake nodes. Zero fields take the defaults below.
type NodeSpec struct {
	// NamePrefix defaults to "kwok-node"; nodes are named NamePrefix-N with
	// N counting up per Env.
	NamePrefix string
	// CPU, Memory: capacity and allocatable, as resource quantities
	// ("32", "500m", "64Gi"); default "32" and "256Gi".
	CPU, Memory string
	// Pods is the pod capacity; default 110.
	Pods int
	// Labels are added to kubernetes.io/hostname, kubernetes.io/os,
	// kubernetes.io/arch and FakeNodeLabel.
	Labels map[string]string
	Taints []corev1.Taint
}

var nodeSeq atomic.Int64

// CreateFakeNodes creates n Nodes annotated for KWOK, with capacity and
// allocatable from spec and no conditions: a running KWOK (StartKWOK) marks
// them Ready. The scheduler does not need that: with TaintNodesByCondition
// off no not-ready taint is added either way.
func (e *Env) CreateFakeNodes(ctx context.Context, n int, spec NodeSpec) ([]*corev1.Node, error) {
	if spec.NamePrefix == "" {
		spec.NamePrefix = "kwok-node"
	}
	if spec.CPU == "" {
		spec.CPU = "32"
	}
	if spec.Memory == "" {
		spec.Memory = "256Gi"
	}
	if spec.Pods == 0 {
		spec.Pods = 110
	}
	cpu, err := resource.ParseQuantity(spec.CPU)
	if err != nil {
		return nil, fmt.Errorf("fake node CPU %q: %w", spec.CPU, err)
	}
	mem, err := resource.ParseQuantity(spec.Memory)
	if err != nil {
		return nil, fmt.Errorf("fake node memory %q: %w", spec.Memory, err)
	}
	capacity := corev1.ResourceList{
		corev1.ResourceCPU:    cpu,
		corev1.ResourceMemory: mem,
		corev1.ResourcePods:   *resource.NewQuantity(int64(spec.Pods), resource.DecimalSI),
	}
	nodes := make([]*corev1.Node, n)
	for i := range nodes {
		name := fmt.Sprintf("%s-%d", spec.NamePrefix, nodeSeq.Add(1))
		l := map[string]string{
			corev1.LabelHostname:   name,
			corev1.LabelOSStable:   "linux",
			corev1.LabelArchStable: "amd64",
			FakeNodeLabel:          FakeNodeLabelValue,
		}
		maps.Copy(l, spec.Labels)
		nodes[i] = &corev1.Node{
			ObjectMeta: metav1.ObjectMeta{
				Name:        name,
				Labels:      l,
				Annotations: map[string]string{KWOKNodeAnnotation: KWOKNodeAnnotationValue},
			},
			Spec: corev1.NodeSpec{Taints: append([]corev1.Taint(nil), spec.Taints...)},
			Status: corev1.NodeStatus{
				Capacity:    capacity.DeepCopy(),
				Allocatable: capacity.DeepCopy(),
				NodeInfo:    corev1.NodeSystemInfo{OperatingSystem: "linux", Architecture: "amd64", KubeletVersion: "fake"},
			},
		}
	}
	out := make([]*corev1.Node, n)
	err = parallel(ctx, n, 16, func(ctx context.Context, i int) error {
		created, err := e.Client.CoreV1().Nodes().Create(ctx, nodes[i], metav1.CreateOptions{})
		if err != nil {
			return fmt.Errorf("create fake node %s: %w", nodes[i].Name, err)
		}
		out[i] = created
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// WaitNodesReady waits until every named Node has condition Ready=True
// (KWOK must be running for fake nodes to get there).
func (e *Env) WaitNodesReady(ctx context.Context, names ...string) error {
	want := make(map[string]bool, len(names))
	for _, n := range names {
		want[n] = true
	}
	for {
		list, err := e.Client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		if err != nil {
			return fmt.Errorf("wait for nodes Ready: %w", err)
		}
		ready := 0
		for i := range list.Items {
			if want[list.Items[i].Name] && nodeReady(&list.Items[i]) {
				ready++
			}
		}
		notReady := len(want) - ready
		if notReady == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%d of %d nodes not Ready: %w", notReady, len(want), ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func nodeReady(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// parallel runs f(0..n-1) on up to workers goroutines and returns the first
// error; it stops starting new calls after an error or when ctx ends.
func parallel(ctx context.Context, n, workers int, f func(context.Context, int) error) error {
	inner, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		next     atomic.Int64
		wg       sync.WaitGroup
		once     sync.Once
		firstErr error
	)
	for range min(workers, n) {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= n || inner.Err() != nil {
					return
				}
				if err := f(inner, i); err != nil {
					once.Do(func() { firstErr = err; cancel() })
					return
				}
			}
		})
	}
	wg.Wait()
	if firstErr != nil {
		return firstErr
	}
	return ctx.Err()
}
