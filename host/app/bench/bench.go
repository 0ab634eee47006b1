// Package bench measures what the scheduler itself costs: the scheduler of
// host/app, built by app.New as `wasmsched run` builds it, runs in this
// process against an in-memory cluster of Ready nodes served by client-go's
// fake clientset, while the benchmark creates pods and counts the bindings.
// `wasmsched-bench` (package host/app/cli/benchcli) is its command line.
//
// A binding sets spec.nodeName on the fake's copy of the pod, so the
// informer sees the pod bound and the cache confirms it, as in a real
// cluster; nothing leaves the process.
//
// # Notes
//
//   - The fake's watches are channels sized for every event of the run
//     (see tracker), per clientset: no process global changes.
//   - What it does not measure: the apiserver, etcd, the network, TLS, the
//     encoding and decoding of objects, client-side rate limits.
package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"runtime/metrics"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/wasmsched/wasmsched/config"
	"github.com/wasmsched/wasmsched/host/app"
)

// Shape of the synthetic cluster.
const (
	namespace = "bench"
	zones     = 10
	podCPU    = 100 // millicores per pod
	nodeCPU   = 4000
	nodePods  = 110
)

// PodsPerNode is how many of the benchmark's pods fit on one node.
const PodsPerNode = min(nodeCPU/podCPU, nodePods)

// Size is the synthetic cluster of a run and its pods: InitPods are bound
// before the measured phase, Pods are measured. Mix makes the pods the
// constraint mix of e2e/perf's ConstraintMix (MixPod) instead of plain.
type Size struct {
	Nodes, InitPods, Pods int
	Mix                   bool
}

// Result is a run's measure (the -json output of `wasmsched-bench`).
type Result struct {
	Nodes          int     `json:"nodes"`
	InitPods       int     `json:"initPods"`
	Pods           int     `json:"pods"`
	ElapsedSeconds float64 `json:"elapsedSeconds"`
	// Throughput is the pods bound in each one-second sample after the
	// first; FirstSample is the dropped first one, so that
	// FirstSample + sum(Throughput) = Pods.
	Throughput       []int   `json:"throughput"`
	FirstSample      int     `json:"firstSample"`
	AvgPodsPerSecond float64 `json:"avgPodsPerSecond"`
	Latency          Latency `json:"latency"`
	CPUSeconds       float64 `json:"cpuSeconds"`
	PeakRSSBytes     int64   `json:"peakRSSBytes"`
	// PeakHeapBytes is the largest heap in use (live and not yet swept
	// objects) seen at the measured phase's one-second samples: the
	// scheduler's own memory, without the Wasm instances' linear memories
	// and the Go runtime's reserve that RSS also holds.
	PeakHeapBytes int64             `json:"peakHeapBytes"`
	Policies      map[string]string `json:"policies"`
}

// Latency holds the scheduling attempt duration, seconds: quantiles
// interpolated within the histogram's buckets (the first ends at 1ms), and
// the exact mean.
type Latency struct {
	P50  float64 `json:"p50"`
	P90  float64 `json:"p90"`
	P99  float64 `json:"p99"`
	Mean float64 `json:"mean"`
}

// Run builds the fake cluster of size, builds the scheduler of cfg on it
// with app.New (opts added to the benchmark's own: its clients and
// registry), runs it until the measured pods are bound, and stops it. It
// creates the init pods and waits for them to be bound, then creates the
// measured pods as fast as the fake takes them and samples the number
// bound every second, printing progress to progress.
func Run(ctx context.Context, cfg *config.Config, size Size, progress io.Writer, opts ...app.Option) (*Result, error) {
	b := &runner{nodes: size.Nodes, initPods: size.InitPods, pods: size.Pods, mix: size.Mix, progress: progress}
	podsWatched := b.newClient()
	b.events = newEventSink()

	reg := prometheus.NewRegistry()
	opts = append(opts, app.WithEventClient(b.events), app.WithRegistry(reg))
	a, err := app.New(ctx, cfg, b.client, opts...)
	if err != nil {
		return nil, fmt.Errorf("start the scheduler: %w", err)
	}
	policies := map[string]string{}
	for slot, m := range a.Policies(cfg.SchedulerName) {
		policies[slot.String()] = m.Name
	}
	sctx, stop := context.WithCancel(ctx)
	defer stop()
	served := make(chan struct{})
	var runErr error
	go func() {
		defer close(served)
		runErr = a.Run(sctx)
	}()

	res, err := b.measure(ctx, cfg.SchedulerName, podsWatched, served, func() error { return runErr }, reg)
	stop()
	<-served
	if err != nil {
		return nil, err
	}
	if runErr != nil {
		return nil, fmt.Errorf("scheduler: %w", runErr)
	}
	res.Policies = policies
	return res, nil
}

// runner is one run: a fake cluster and the measuring driver.
type runner struct {
	nodes, initPods, pods int
	mix                   bool
	progress              io.Writer

	client   *fake.Clientset
	events   *fake.Clientset
	binds    atomic.Int64 // pods bound by the fake
	lastBind atomic.Int64 // time of the latest bind, Unix nanoseconds
	goal     atomic.Pointer[goal]
	peakHeap int64 // PeakHeapBytes, sampled by the measured phase's ticks
}

// goal is a number of binds to be told of.
type goal struct {
	binds   int64
	reached chan struct{} // closed by the bind that reaches binds
}

// measure creates the pods of both phases and measures the second. served
// closes when the scheduler's Run returns, with serveErr.
func (b *runner) measure(ctx context.Context, schedulerName string, podsWatched, served <-chan struct{}, serveErr func() error, reg *prometheus.Registry) (*Result, error) {
	// Pods may only be created once the pod informer watches: the fake
	// does not replay what was created between its list and its watch.
	select {
	case <-podsWatched:
	case <-served:
		return nil, fmt.Errorf("start the scheduler: %w", stopped(serveErr()))
	case <-ctx.Done():
		return nil, fmt.Errorf("waiting for the scheduler to watch pods: %w", context.Cause(ctx))
	}

	if b.initPods > 0 {
		if _, err := b.phase(ctx, "init", "init", b.initPods, schedulerName, served, serveErr, nil); err != nil {
			return nil, err
		}
	}

	before, err := attemptBuckets(reg)
	if err != nil {
		return nil, err
	}
	cpuBefore, _ := processUsage()
	start := time.Now()
	var cpuAfter float64
	var end time.Time
	samples, err := b.phase(ctx, "", "pod", b.pods, schedulerName, served, serveErr, func() {
		end = time.Unix(0, b.lastBind.Load())
		cpuAfter, _ = processUsage()
	})
	if err != nil {
		return nil, err
	}
	_, peak := processUsage()
	// Gathered at the sample after the last bind, not at the bind: an
	// attempt is observed once its binding has returned. Nothing is
	// scheduled in between.
	after, err := attemptBuckets(reg)
	if err != nil {
		return nil, err
	}

	res := &Result{
		Nodes: b.nodes, InitPods: b.initPods, Pods: b.pods,
		ElapsedSeconds: end.Sub(start).Seconds(),
		Throughput:     []int{},
		CPUSeconds:     cpuAfter - cpuBefore,
		PeakRSSBytes:   peak,
		PeakHeapBytes:  max(b.peakHeap, heapInUse()),
	}
	if len(samples) > 0 {
		res.FirstSample = samples[0]
		res.Throughput = samples[1:]
	}
	if res.ElapsedSeconds > 0 {
		res.AvgPodsPerSecond = float64(b.pods) / res.ElapsedSeconds
	}
	diff := after.sub(before)
	res.Latency = Latency{P50: quantile(0.5, diff.buckets), P90: quantile(0.9, diff.buckets), P99: quantile(0.99, diff.buckets)}
	if n := diff.buckets[len(diff.buckets)-1].count; n > 0 {
		res.Latency.Mean = diff.sum / float64(n)
	}
	if math.IsNaN(res.Latency.P50) {
		return nil, fmt.Errorf("%s observed no attempt while %d pods were bound", attemptDuration, b.pods)
	}
	return res, nil
}

// phase creates n pods named prefix-i and samples, every second, how many
// of them are bound, until all are. done, if not nil, runs at the moment
// the last one is bound (before the sample that counts it). It returns the
// number bound in each sample.
func (b *runner) phase(ctx context.Context, label, prefix string, n int, schedulerName string,
	served <-chan struct{}, serveErr func() error, done func()) ([]int, error) {
	base := b.binds.Load()
	g := &goal{binds: base + int64(n), reached: make(chan struct{})}
	b.goal.Store(g)
	created := make(chan error, 1)
	go func() { created <- b.createPods(ctx, prefix, n, schedulerName) }()

	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	reached := g.reached
	var samples []int
	last := 0
	for {
		select {
		case err := <-created:
			if err != nil {
				return nil, err
			}
			created = nil
		case <-reached:
			reached = nil
			if done != nil {
				done()
			}
		case <-served:
			return nil, fmt.Errorf("the scheduler stopped with %d of %d pods bound: %w", b.binds.Load()-base, n, stopped(serveErr()))
		case <-ctx.Done():
			what := "pods"
			if label != "" {
				what = label + " pods"
			}
			return nil, fmt.Errorf("%d of %d %s bound: %w", b.binds.Load()-base, n, what, context.Cause(ctx))
		case <-tick.C:
			bound := int(b.binds.Load() - base)
			if label != "" {
				fmt.Fprintf(b.progress, "%s: bound %d/%d\n", label, bound, n)
			} else {
				fmt.Fprintf(b.progress, "bound %d/%d\n", bound, n)
			}
			samples = append(samples, bound-last)
			last = bound
			if label == "" {
				b.peakHeap = max(b.peakHeap, heapInUse())
			}
			// The fakes record every call they serve; nobody reads them.
			b.client.ClearActions()
			b.events.ClearActions()
			if bound >= n && reached == nil {
				return samples, nil
			}
		}
	}
}

// createPods creates n pods named prefix-i, one after the other, as fast
// as the fake takes them.
func (b *runner) createPods(ctx context.Context, prefix string, n int, schedulerName string) error {
	for i := range n {
		if ctx.Err() != nil {
			return nil
		}
		p := pod(fmt.Sprintf("%s-%d", prefix, i), schedulerName)
		if b.mix {
			MixPod(p, i)
		}
		if _, err := b.client.CoreV1().Pods(namespace).Create(ctx, p, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("create pod %s: %w", p.Name, err)
		}
	}
	return nil
}

// stopped is the scheduler's error, or says that it returned without one.
func stopped(err error) error {
	if err == nil {
		return errors.New("the scheduler returned")
	}
	return err
}

// heapInUse is the bytes of heap objects, live or not yet swept.
func heapInUse() int64 {
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(sample)
	if sample[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return int64(sample[0].Value.Uint64())
}
