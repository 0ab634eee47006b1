package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	v1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	schedv1beta1 "k8s.io/api/scheduling/v1beta1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/apimachinery/pkg/watch"
	fakediscovery "k8s.io/client-go/discovery/fake"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/wasmsched/wasmsched/abi"
	"github.com/wasmsched/wasmsched/config"
	"github.com/wasmsched/wasmsched/host/policy"
)

const benchHelp = `usage: wasmsched bench [-nodes N] [-init-pods N] [-pods N] [-config FILE]
                       [-set key=value]... [-json] [-timeout D] [-log-level L]

bench measures what the scheduler itself costs: the pipeline of 'wasmsched
run' (informers, cache, queue, policy modules, scheduling cycles, binding),
in this process, against an in-memory cluster of N Ready nodes (4 cpu, 32Gi,
110 pods each, spread over zones) served by client-go's fake clientset. A
binding sets spec.nodeName on the fake's copy of the pod, so the informer
sees the pod bound and the cache confirms it, as in a real cluster; nothing
leaves the process. It creates the -init-pods and waits for them to be bound,
then creates the -pods as fast as the fake takes them and samples the number
bound every second until all are bound.

It reports the pods bound in each one-second sample (the first is dropped, as
scheduler_perf does, since creating and sampling start independently), the
average pods/s (pods / elapsed, from the first create to the last bind), the
p50/p90/p99 of scheduler_scheduling_attempt_duration_seconds over the
measured pods, the CPU time of the process and its peak resident memory.
Use it to compare policy modules on a synthetic cluster, with no cluster:
-set policies.<slot>.module=FILE for a module of yours, =native for the
reference policy compiled into the binary, unset for the built-in Wasm one.
Run it on a quiet machine and more than once: it is a wall-clock measure.

What it does not measure: the apiserver, etcd, the network, TLS, and the
encoding and decoding of objects (the fake hands Go objects to the informers),
nor client-side rate limits. The CPU time and peak memory are the whole
process's, so they include the fake's object store, its deep copies and the
creating of pods: an upper bound on the scheduler's own. The peak memory is
the process's lifetime peak, setup included.

flags:
`

// Shape of the synthetic cluster.
const (
	benchNamespace = "bench"
	benchZones     = 10
	benchPodCPU    = 100 // millicores per pod
	benchNodeCPU   = 4000
	benchNodePods  = 110
)

// benchResult is the -json output.
type benchResult struct {
	Nodes          int     `json:"nodes"`
	InitPods       int     `json:"initPods"`
	Pods           int     `json:"pods"`
	ElapsedSeconds float64 `json:"elapsedSeconds"`
	// Throughput is the pods bound in each one-second sample after the
	// first; FirstSample is the dropped first one, so that
	// FirstSample + sum(Throughput) = Pods.
	Throughput       []int             `json:"throughput"`
	FirstSample      int               `json:"firstSample"`
	AvgPodsPerSecond float64           `json:"avgPodsPerSecond"`
	Latency          benchLatency      `json:"latency"`
	CPUSeconds       float64           `json:"cpuSeconds"`
	PeakRSSBytes     int64             `json:"peakRSSBytes"`
	Policies         map[string]string `json:"policies"`
}

// benchLatency holds the scheduling attempt duration, seconds: quantiles
// interpolated within the histogram's buckets (the first ends at 1ms), and
// the exact mean.
type benchLatency struct {
	P50  float64 `json:"p50"`
	P90  float64 `json:"p90"`
	P99  float64 `json:"p99"`
	Mean float64 `json:"mean"`
}

// benchCmd is `wasmsched bench`.
func benchCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), benchHelp)
		fs.PrintDefaults()
	}
	nodes := fs.Int("nodes", 5000, "nodes of the synthetic cluster")
	initPods := fs.Int("init-pods", 500, "pods bound before the measured phase")
	pods := fs.Int("pods", 5000, "pods created and bound in the measured phase")
	cfgFile := fs.String("config", "", "configuration file (YAML); 'wasmsched help config' lists the keys")
	asJSON := fs.Bool("json", false, "print one JSON object on stdout instead of a summary")
	timeout := fs.Duration("timeout", 5*time.Minute, "give up if the pods are not all bound within this time")
	logLevel := fs.String("log-level", "warn", "log level of the scheduler (on stderr): debug, info, warn or error")
	var sets setFlags
	fs.Var(&sets, "set", "override a configuration key, key=value (repeatable), e.g. -set policies.queueSort.module=FILE")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	switch {
	case fs.NArg() != 0:
		return fmt.Errorf("%w: bench takes no arguments, got %q", errUsage, fs.Args())
	case *nodes < 1:
		return fmt.Errorf("%w: -nodes %d: want at least 1", errUsage, *nodes)
	case *initPods < 0:
		return fmt.Errorf("%w: -init-pods %d: want 0 or more", errUsage, *initPods)
	case *pods < 1:
		return fmt.Errorf("%w: -pods %d: want at least 1", errUsage, *pods)
	case *timeout <= 0:
		return fmt.Errorf("%w: -timeout %v: want a positive duration", errUsage, *timeout)
	}
	if perNode := min(benchNodeCPU/benchPodCPU, benchNodePods); *initPods+*pods > *nodes*perNode {
		return fmt.Errorf("%w: %d pods do not fit on %d nodes (%d pods each): raise -nodes or lower -pods",
			errUsage, *initPods+*pods, *nodes, perNode)
	}
	level, err := parseLogLevel(*logLevel)
	if err != nil {
		return err
	}
	overrides := sets.overrides()
	// Nothing listens and nothing is elected: the process is alone with its
	// fake cluster.
	overrides["metrics.bindAddress"] = ""
	overrides["leaderElection.enabled"] = "false"
	src := config.Source{File: *cfgFile, Environ: os.Environ(), Overrides: overrides}
	cfg, err := config.Load(src)
	if err != nil {
		return fmt.Errorf("configuration: %w", err)
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))
	b := bench{nodes: *nodes, initPods: *initPods, pods: *pods, progress: stderr}
	ctx, cancel := context.WithTimeoutCause(ctx, *timeout, fmt.Errorf("-timeout %v reached", *timeout))
	defer cancel()
	res, err := b.run(ctx, cfg, src, log)
	if err != nil {
		return err
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(res)
	}
	return res.write(stdout)
}

// bench is one run: a fake cluster, serve on it, and the measuring driver.
type bench struct {
	nodes, initPods, pods int
	progress              io.Writer

	client   *fake.Clientset
	events   *fake.Clientset
	binds    atomic.Int64 // pods bound by the fake
	lastBind atomic.Int64 // time of the latest bind, Unix nanoseconds
	goal     atomic.Pointer[benchGoal]
}

// benchGoal is a number of binds to be told of.
type benchGoal struct {
	binds   int64
	reached chan struct{} // closed by the bind that reaches binds
}

// run sets up the fake cluster, runs serve on it until the measured pods
// are bound, and stops it.
func (b *bench) run(ctx context.Context, cfg *config.Config, src config.Source, log *slog.Logger) (*benchResult, error) {
	// The fake's watches are channels of watch.DefaultChanSize events that
	// panic when full, where an apiserver's watch would just lag: size them
	// for every event of the run, so that a slow informer cannot bring the
	// benchmark down. Restored when serve has stopped.
	events := b.nodes + 2*(b.initPods+b.pods) + 1024
	if old := watch.DefaultChanSize; int64(old) < int64(events) {
		watch.DefaultChanSize = int32(min(events, math.MaxInt32))
		defer func() { watch.DefaultChanSize = old }()
	}
	podsWatched := b.newClient()
	b.events = newEventSink()

	reg := prometheus.NewRegistry()
	// Written by serve's goroutine, read once it has returned.
	policies := map[string]string{}
	opts := serveOptions{
		registry: reg,
		loaded: func(profile string, modules map[abi.Slot]policy.ModuleInfo) {
			if profile != cfg.SchedulerName {
				return
			}
			for slot, m := range modules {
				policies[slot.String()] = m.Name
			}
		},
	}
	sctx, stop := context.WithCancel(ctx)
	defer stop()
	served := make(chan struct{})
	var serveErr error
	go func() {
		defer close(served)
		serveErr = serveWith(sctx, cfg, src, b.client, b.events, log, opts)
	}()

	res, err := b.measure(ctx, cfg.SchedulerName, podsWatched, served, func() error { return serveErr }, reg)
	stop()
	<-served
	if err != nil {
		return nil, err
	}
	if serveErr != nil {
		return nil, fmt.Errorf("scheduler: %w", serveErr)
	}
	res.Policies = policies
	return res, nil
}

// measure creates the pods of both phases and measures the second. served
// closes when serve returns, with serveErr.
func (b *bench) measure(ctx context.Context, schedulerName string, podsWatched, served <-chan struct{}, serveErr func() error, reg *prometheus.Registry) (*benchResult, error) {
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

	res := &benchResult{
		Nodes: b.nodes, InitPods: b.initPods, Pods: b.pods,
		ElapsedSeconds: end.Sub(start).Seconds(),
		Throughput:     []int{},
		CPUSeconds:     cpuAfter - cpuBefore,
		PeakRSSBytes:   peak,
	}
	if len(samples) > 0 {
		res.FirstSample = samples[0]
		res.Throughput = samples[1:]
	}
	if res.ElapsedSeconds > 0 {
		res.AvgPodsPerSecond = float64(b.pods) / res.ElapsedSeconds
	}
	diff := after.sub(before)
	res.Latency = benchLatency{P50: quantile(0.5, diff.buckets), P90: quantile(0.9, diff.buckets), P99: quantile(0.99, diff.buckets)}
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
func (b *bench) phase(ctx context.Context, label, prefix string, n int, schedulerName string,
	served <-chan struct{}, serveErr func() error, done func()) ([]int, error) {
	base := b.binds.Load()
	goal := &benchGoal{binds: base + int64(n), reached: make(chan struct{})}
	b.goal.Store(goal)
	created := make(chan error, 1)
	go func() { created <- b.createPods(ctx, prefix, n, schedulerName) }()

	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	reached := goal.reached
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
func (b *bench) createPods(ctx context.Context, prefix string, n int, schedulerName string) error {
	for i := range n {
		if ctx.Err() != nil {
			return nil
		}
		p := benchPod(fmt.Sprintf("%s-%d", prefix, i), schedulerName)
		if _, err := b.client.CoreV1().Pods(benchNamespace).Create(ctx, p, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("create pod %s: %w", p.Name, err)
		}
	}
	return nil
}

var podsGVR = v1.SchemeGroupVersion.WithResource("pods")

// newClient builds the fake cluster: the nodes, discovery, the binding
// reactor. The returned channel closes once the pods are watched.
func (b *bench) newClient() <-chan struct{} {
	objs := make([]runtime.Object, 0, b.nodes)
	for i := range b.nodes {
		objs = append(objs, benchNode(i))
	}
	c := fake.NewSimpleClientset(objs...)
	b.client = c
	// Discovery says what a v1.37 cluster with GenericWorkload says: the
	// fake serves PodGroups and Workloads like any other type, so gangs are
	// on and their informers run, as they would in production.
	c.Discovery().(*fakediscovery.FakeDiscovery).Resources = []*metav1.APIResourceList{
		{GroupVersion: v1.SchemeGroupVersion.String(), APIResources: []metav1.APIResource{
			{Name: "pods", Namespaced: true, Kind: "Pod"},
			{Name: "pods/binding", Namespaced: true, Kind: "Binding"},
			{Name: "pods/status", Namespaced: true, Kind: "Pod"},
			{Name: "nodes", Kind: "Node"},
		}},
		{GroupVersion: schedv1beta1.SchemeGroupVersion.String(), APIResources: []metav1.APIResource{
			{Name: "podgroups", Namespaced: true, Kind: "PodGroup"},
			{Name: "podgroups/status", Namespaced: true, Kind: "PodGroup"},
			{Name: "workloads", Namespaced: true, Kind: "Workload"},
		}},
	}

	// create pods/binding: what the apiserver's binding does, on the
	// fake's copy of the pod.
	c.PrependReactor("create", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		ca, ok := a.(k8stesting.CreateAction)
		if !ok || ca.GetSubresource() != "binding" {
			return false, nil, nil
		}
		binding := ca.GetObject().(*v1.Binding)
		obj, err := c.Tracker().Get(podsGVR, a.GetNamespace(), binding.Name)
		if err != nil {
			return true, nil, err
		}
		pod := obj.(*v1.Pod)
		switch {
		case binding.UID != "" && binding.UID != pod.UID:
			return true, nil, apierrors.NewConflict(podsGVR.GroupResource(), binding.Name, fmt.Errorf("the UID in the binding does not match the pod's"))
		case pod.Spec.NodeName != "":
			return true, nil, apierrors.NewConflict(podsGVR.GroupResource(), binding.Name,
				fmt.Errorf("pod %s is already assigned to node %q", binding.Name, pod.Spec.NodeName))
		}
		pod.Spec.NodeName = binding.Target.Name
		pod.Status.Conditions = append(pod.Status.Conditions, v1.PodCondition{
			Type: v1.PodScheduled, Status: v1.ConditionTrue, LastTransitionTime: metav1.Now(),
		})
		if err := c.Tracker().Update(podsGVR, pod, a.GetNamespace()); err != nil {
			return true, nil, err
		}
		b.lastBind.Store(time.Now().UnixNano())
		if g := b.goal.Load(); b.binds.Add(1) == g.binds {
			close(g.reached)
		}
		return true, binding, nil
	})

	watched := make(chan struct{})
	var once sync.Once
	c.PrependWatchReactor("pods", func(a k8stesting.Action) (bool, watch.Interface, error) {
		w, err := c.Tracker().Watch(a.GetResource(), a.GetNamespace())
		if err != nil {
			return true, nil, err
		}
		once.Do(func() { close(watched) })
		return true, w, nil
	})
	return watched
}

// newEventSink is the client that events go to: discovery offers
// events.k8s.io/v1, as a real cluster does, and every write is accepted and
// forgotten.
func newEventSink() *fake.Clientset {
	c := fake.NewSimpleClientset()
	c.Discovery().(*fakediscovery.FakeDiscovery).Resources = []*metav1.APIResourceList{
		{GroupVersion: eventsv1.SchemeGroupVersion.String(), APIResources: []metav1.APIResource{
			{Name: "events", Namespaced: true, Kind: "Event"},
		}},
	}
	c.PrependReactor("*", "*", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if ca, ok := a.(k8stesting.CreateAction); ok {
			return true, ca.GetObject(), nil
		}
		return true, &eventsv1.Event{ObjectMeta: metav1.ObjectMeta{Namespace: a.GetNamespace()}}, nil
	})
	return c
}

func benchNode(i int) *v1.Node {
	name := fmt.Sprintf("node-%05d", i)
	res := v1.ResourceList{
		v1.ResourceCPU:    *resource.NewMilliQuantity(benchNodeCPU, resource.DecimalSI),
		v1.ResourceMemory: resource.MustParse("32Gi"),
		v1.ResourcePods:   *resource.NewQuantity(benchNodePods, resource.DecimalSI),
	}
	return &v1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name: name, UID: uuid.NewUUID(), CreationTimestamp: metav1.Now(),
			Labels: map[string]string{
				v1.LabelHostname:       name,
				v1.LabelTopologyZone:   fmt.Sprintf("zone-%d", i%benchZones),
				v1.LabelTopologyRegion: "bench",
				v1.LabelOSStable:       "linux",
			},
		},
		Status: v1.NodeStatus{
			Capacity: res, Allocatable: res,
			Conditions: []v1.NodeCondition{{Type: v1.NodeReady, Status: v1.ConditionTrue, Reason: "KubeletReady"}},
		},
	}
}

func benchPod(name, schedulerName string) *v1.Pod {
	return &v1.Pod{
		// The apiserver would set UID and creation time.
		ObjectMeta: metav1.ObjectMeta{Namespace: benchNamespace, Name: name, UID: uuid.NewUUID(), CreationTimestamp: metav1.Now()},
		Spec: v1.PodSpec{
			SchedulerName: schedulerName,
			Containers: []v1.Container{{
				Name: "app", Image: "registry.k8s.io/pause:3.10",
				Resources: v1.ResourceRequirements{Requests: v1.ResourceList{
					v1.ResourceCPU:    *resource.NewMilliQuantity(benchPodCPU, resource.DecimalSI),
					v1.ResourceMemory: resource.MustParse("100Mi"),
				}},
			}},
		},
		Status: v1.PodStatus{Phase: v1.PodPending},
	}
}

// stopped is serve's error, or says that it returned without one.
func stopped(err error) error {
	if err == nil {
		return errors.New("serve returned")
	}
	return err
}

// bucket is one cumulative histogram bucket.
type bucket struct {
	upper float64
	count uint64
}

const attemptDuration = "scheduler_scheduling_attempt_duration_seconds"

// histogram is a gathered histogram: its cumulative buckets, +Inf last,
// and the sum of its observations.
type histogram struct {
	buckets []bucket
	sum     float64
}

// attemptBuckets gathers the scheduling attempt histogram, its series (by
// result and profile) added up. Without a series, it is the +Inf bucket
// alone, empty.
func attemptBuckets(reg *prometheus.Registry) (histogram, error) {
	mfs, err := reg.Gather()
	if err != nil {
		return histogram{}, fmt.Errorf("gather metrics: %w", err)
	}
	counts := map[float64]uint64{math.Inf(1): 0}
	var sum float64
	for _, mf := range mfs {
		if mf.GetName() != attemptDuration {
			continue
		}
		for _, m := range mf.GetMetric() {
			h := m.GetHistogram()
			for _, bk := range h.GetBucket() {
				counts[bk.GetUpperBound()] += bk.GetCumulativeCount()
			}
			counts[math.Inf(1)] += h.GetSampleCount()
			sum += h.GetSampleSum()
		}
	}
	out := make([]bucket, 0, len(counts))
	for upper, n := range counts {
		out = append(out, bucket{upper, n})
	}
	slices.SortFunc(out, func(a, b bucket) int { return cmpFloat(a.upper, b.upper) })
	return histogram{out, sum}, nil
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// sub is what h observed since before, a gather of the same histogram.
func (h histogram) sub(before histogram) histogram {
	was := map[float64]uint64{}
	for _, b := range before.buckets {
		was[b.upper] = b.count
	}
	out := make([]bucket, len(h.buckets))
	for i, b := range h.buckets {
		out[i] = bucket{b.upper, b.count - was[b.upper]}
	}
	return histogram{out, h.sum - before.sum}
}

// quantile estimates the q-quantile of cumulative buckets (+Inf last) as
// Prometheus's histogram_quantile does: linear interpolation within the
// bucket the rank falls in, the lower bound of the first bucket taken as 0,
// and the highest finite bound when the rank falls in +Inf. NaN without
// observations.
func quantile(q float64, bs []bucket) float64 {
	if len(bs) == 0 || !math.IsInf(bs[len(bs)-1].upper, 1) {
		return math.NaN()
	}
	total := bs[len(bs)-1].count
	if total == 0 {
		return math.NaN()
	}
	rank := q * float64(total)
	i := sort.Search(len(bs), func(i int) bool { return float64(bs[i].count) >= rank })
	switch {
	case i == len(bs)-1:
		if len(bs) < 2 {
			return math.NaN()
		}
		return bs[len(bs)-2].upper
	case i == 0 && bs[0].upper <= 0:
		return bs[0].upper
	}
	var lower float64
	var below uint64
	if i > 0 {
		lower, below = bs[i-1].upper, bs[i-1].count
	}
	in := bs[i].count - below
	if in == 0 {
		return bs[i].upper
	}
	return lower + (bs[i].upper-lower)*(rank-float64(below))/float64(in)
}

// write prints the human-readable summary.
func (r *benchResult) write(w io.Writer) error {
	var slots []string
	for slot, name := range r.Policies {
		slots = append(slots, slot+"="+name)
	}
	sort.Strings(slots)
	samples := make([]string, len(r.Throughput))
	for i, n := range r.Throughput {
		samples[i] = fmt.Sprint(n)
	}
	per := fmt.Sprintf("none: all bound within the first second (dropped: %d)", r.FirstSample)
	if len(samples) > 0 {
		per = fmt.Sprintf("%s (first second dropped: %d)", strings.Join(samples, " "), r.FirstSample)
	}
	ms := func(s float64) string { return fmt.Sprintf("%.2fms", s*1000) }
	cores := 0.0
	if r.ElapsedSeconds > 0 {
		cores = r.CPUSeconds / r.ElapsedSeconds
	}
	_, err := fmt.Fprintf(w, `cluster      %d nodes, %d pods bound before, %d pods measured
policies     %s
elapsed      %.3fs
throughput   %.1f pods/s on average
per second   %s
latency      p50 %s  p90 %s  p99 %s  mean %s  (scheduling attempts)
cpu          %.2fs (%.2f cores)
peak RSS     %.1f MiB
`, r.Nodes, r.InitPods, r.Pods, strings.Join(slots, " "), r.ElapsedSeconds, r.AvgPodsPerSecond, per,
		ms(r.Latency.P50), ms(r.Latency.P90), ms(r.Latency.P99), ms(r.Latency.Mean), r.CPUSeconds, cores, float64(r.PeakRSSBytes)/(1<<20))
	return err
}
