package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/wasmsched/wasmsched/e2e/perf/report"
	"github.com/wasmsched/wasmsched/e2e/testenv"
)

// runLabel marks the nodes of one run, so that cleanup finds them.
const runLabel = "wasmsched-perf/run"

// run is one workload under one scheduler: its own namespace and nodes on
// the shared control plane, deleted afterwards.
type run struct {
	h          *harness
	env        *testenv.Env
	c          kubernetes.Interface
	kind       string
	id         string
	ns         string
	nodePrefix string
	nodeNames  []string
	pods       *podWatch
	// allSchedulable is the workload's: see workload.allSchedulable.
	allSchedulable bool
}

func (r *run) logf(format string, args ...any) { r.h.logf("["+r.id+"] "+format, args...) }

// create creates n pods of phase named <phase>-<i>.
func (r *run) create(ctx context.Context, phase string, n int, spec func(i int) podSpec) error {
	return createPods(ctx, r.c, n, func(i int) *v1.Pod {
		return makePod(r.ns, phase+"-"+strconv.Itoa(i), phase, spec(i))
	})
}

// createAndBind creates n pods of phase and waits until all are bound.
func (r *run) createAndBind(ctx context.Context, phase string, n int, spec func(i int) podSpec) error {
	if err := r.create(ctx, phase, n, spec); err != nil {
		return err
	}
	return waitOrFail(ctx, 5*time.Minute, "the "+phase+" pods to be bound", func() (bool, string, error) {
		b := r.pods.boundCount(phase)
		return b >= n, fmt.Sprintf("%d/%d bound", b, n), r.refused(phase)
	})
}

// refused is, when the run's workload has every pod fit at once, an error
// for the first pod of phase the scheduler reported unschedulable.
func (r *run) refused(phase string) error {
	if !r.allSchedulable {
		return nil
	}
	if msg, ok := r.pods.unschedulable(phase); ok {
		return fmt.Errorf("the scheduler found no node for a pod that fits: %s", msg)
	}
	return nil
}

// measure runs w under the scheduler kind and returns its measurements. A
// failure is returned as a Run with Err set, so that one bad run does not
// lose the others.
func (h *harness) measure(ctx context.Context, w *workload, kind string, round int) report.Run {
	out := report.Run{Workload: w.name, Scheduler: kind, Round: round}
	err := h.measureInto(ctx, w, kind, round, &out)
	if err != nil {
		out.Err = err.Error()
		h.logf("%s/%s round %d FAILED: %v", w.name, kind, round, err)
	}
	return out
}

func (h *harness) measureInto(ctx context.Context, w *workload, kind string, round int, out *report.Run) (err error) {
	h.seq++
	r := &run{h: h, env: h.env, c: h.env.Client, kind: kind, id: fmt.Sprintf("%s-%s-%d", w.name, kind, round), allSchedulable: w.allSchedulable}
	r.nodePrefix = fmt.Sprintf("perf%d", h.seq)
	if r.ns, err = h.env.CreateNamespace(ctx, "perf"); err != nil {
		return err
	}
	defer func() {
		cerr := h.cleanup(context.WithoutCancel(ctx), r)
		if w.cleanup != nil {
			cerr = errors.Join(cerr, w.cleanup(context.WithoutCancel(ctx), r))
		}
		if cerr != nil {
			err = errors.Join(err, fmt.Errorf("cleanup: %w", cerr))
		}
	}()
	if r.nodeNames, err = createNodes(ctx, h.env, w, r); err != nil {
		return err
	}
	if len(w.controllers) > 0 {
		cm, err := startControllers(ctx, h.env, w.controllers)
		if err != nil {
			return err
		}
		defer cm.Stop(10 * time.Second)
	}
	if r.pods, err = watchPods(ctx, r.c, r.ns); err != nil {
		return err
	}
	defer r.pods.close()

	sched, err := h.startScheduler(ctx, kind)
	if err != nil {
		return err
	}
	defer sched.stop()
	fail := func(err error) error {
		return fmt.Errorf("%w\n--- scheduler log tail ---\n%s", err, sched.tail(30))
	}
	r.logf("%d nodes, scheduler ready; initial phase", w.nodes)
	if err := w.init(ctx, r); err != nil {
		return fail(err)
	}

	page, err := sched.metrics(ctx)
	if err != nil {
		return fail(err)
	}
	before, err := parseMetrics(page)
	if err != nil {
		return err
	}
	cpu0, err := readProc(sched.pid())
	if err != nil {
		return err
	}
	// The control plane's CPU, read at the same two moments: what the
	// scheduler's requests and watches cost kube-apiserver and etcd (the
	// harness's own, creating the pods, is the same for every scheduler).
	// The harness's etcd is its own: nothing else is stored in it.
	cpPIDs := h.env.ControlPlanePIDs()
	if len(cpPIDs) != 2 {
		return fmt.Errorf("kube-apiserver and etcd: %d of them running (pids %v)", len(cpPIDs), cpPIDs)
	}
	cp0, err := cpuSeconds(cpPIDs)
	if err != nil {
		return fmt.Errorf("control plane: %w", err)
	}
	r.logf("measured phase: %d pods", w.measured)
	mctx, stopMeasured := context.WithCancel(ctx)
	defer stopMeasured()
	var wg sync.WaitGroup
	createErr := make(chan error, 1)
	start := time.Now()
	wg.Add(1)
	go func() {
		defer wg.Done()
		createErr <- w.create(mctx, r)
	}()
	if w.churn != nil {
		wg.Add(1)
		go func() { defer wg.Done(); w.churn(mctx, r) }()
	}
	samples := make(chan []float64, 1)
	wg.Add(1)
	go func() { defer wg.Done(); samples <- r.sample(mctx) }()
	if h.profileDir != "" {
		wg.Add(1)
		go func() { defer wg.Done(); h.profile(mctx, sched, r.id) }()
	}

	err = waitOrFail(ctx, w.timeout, "the measured pods to be bound", func() (bool, string, error) {
		select {
		case err := <-createErr:
			if err != nil {
				return false, "", fmt.Errorf("create: %w", err)
			}
		default:
		}
		b := r.pods.boundCount(phaseMeasured)
		return b >= w.measured, fmt.Sprintf("%d/%d bound", b, w.measured), r.refused(phaseMeasured)
	})
	elapsed := time.Since(start)
	cpu1, perr := readProc(sched.pid())
	cp1, cperr := cpuSeconds(cpPIDs)
	var merr error
	if err == nil {
		page, merr = countedMetrics(ctx, sched, before, r.pods.boundCount(phaseMeasured))
	}
	stopMeasured()
	wg.Wait()
	if err != nil {
		return fail(err)
	}
	if cperr != nil {
		cperr = fmt.Errorf("control plane: %w", cperr)
	}
	if perr != nil || cperr != nil || merr != nil {
		return errors.Join(perr, cperr, merr)
	}
	after, err := parseMetrics(page)
	if err != nil {
		return err
	}
	lat := after.histogram(attemptDuration).minus(before.histogram(attemptDuration))
	out.Pods = r.pods.boundCount(phaseMeasured)
	out.Elapsed = elapsed
	out.Throughput = <-samples
	out.Latency = report.Quantiles{P50: lat.quantile(0.5), P90: lat.quantile(0.9), P99: lat.quantile(0.99)}
	out.CPUSeconds = cpu1.cpuSeconds - cpu0.cpuSeconds
	out.ControlPlaneCPUSeconds = cp1 - cp0
	out.PeakRSS = cpu1.peakRSS
	out.Attempts = after.sum(scheduleAttempts) - before.sum(scheduleAttempts)
	out.Fallbacks = after.sum(policyFallbacks) - before.sum(policyFallbacks)
	r.logf("%d pods in %.1fs (%.0f pods/s), attempt p50 %.1fms p99 %.1fms, cpu %.1fs, control plane cpu %.1fs, peak RSS %d MiB; %.0f attempts, %.0f policy fallbacks",
		out.Pods, elapsed.Seconds(), float64(out.Pods)/elapsed.Seconds(), out.Latency.P50*1e3, out.Latency.P99*1e3,
		out.CPUSeconds, out.ControlPlaneCPUSeconds, out.PeakRSS>>20, out.Attempts, out.Fallbacks)
	if n, sec := after.seriesSum(policyCallDuration, "slot", "queueingHint"); n > 0 {
		n0, sec0 := before.seriesSum(policyCallDuration, "slot", "queueingHint")
		// Wall time inside the calls: on a loaded machine more than
		// their CPU (a profile tells the CPU apart).
		r.logf("%.0f QueueingHint calls (one per event with candidates): %.3fs of wall time inside them, beside %.1fs of CPU in the phase", n-n0, sec-sec0, out.CPUSeconds)
	}
	if w.verify != nil && kind != schedCeiling { // the ceiling honours no constraint
		if err := w.verify(ctx, r); err != nil {
			return fmt.Errorf("the placements break the pods' constraints: %w", err)
		}
	}
	return nil
}

// createNodes creates w's nodes for r and returns their names. With zones,
// each zone gets as many nodes as scheduler_perf's round-robin labelling
// gives it (the first w.nodes mod len(zones) zones one more), created by
// one call per zone.
func createNodes(ctx context.Context, env *testenv.Env, w *workload, r *run) ([]string, error) {
	zones := w.zones
	if len(zones) == 0 {
		zones = []string{""}
	}
	var names []string
	for z, zone := range zones {
		spec := w.node
		spec.NamePrefix = r.nodePrefix
		spec.Labels = map[string]string{runLabel: r.id}
		if zone != "" {
			spec.Labels[v1.LabelTopologyZone] = zone
		}
		n := w.nodes / len(zones)
		if z < w.nodes%len(zones) {
			n++
		}
		if n == 0 {
			continue
		}
		nodes, err := env.CreateFakeNodes(ctx, n, spec)
		if err != nil {
			return nil, err
		}
		for _, node := range nodes {
			names = append(names, node.Name)
		}
	}
	return names, nil
}

// sample counts the measured pods bound in each second until ctx ends, as
// scheduler_perf's throughput collector does: each sample is the pods bound
// since the last one divided by the time since, the first sample (pods
// still being created) is dropped, and so is the last, partial one.
func (r *run) sample(ctx context.Context) []float64 {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	var out []float64
	last, lastAt := r.pods.boundCount(phaseMeasured), time.Now()
	first := true
	for {
		select {
		case <-ctx.Done():
			return out
		case now := <-t.C:
			n := r.pods.boundCount(phaseMeasured)
			v := float64(n-last) / now.Sub(lastAt).Seconds()
			last, lastAt = n, now
			if first {
				first = false
				continue
			}
			out = append(out, v)
			r.h.progress("%s: %d bound, %.0f pods/s", r.id, n, v)
		}
	}
}

// cleanup deletes the run's pods (grace period 0: no kubelet would finish a
// graceful deletion), PodGroups, namespace and nodes, and waits until the
// pods are gone, so that the next run's scheduler starts on an empty
// cluster.
func (h *harness) cleanup(ctx context.Context, r *run) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	zero := int64(0)
	var errs []error
	if err := r.c.CoreV1().Pods(r.ns).DeleteCollection(ctx, metav1.DeleteOptions{GracePeriodSeconds: &zero}, metav1.ListOptions{}); err != nil {
		errs = append(errs, fmt.Errorf("delete pods: %w", err))
	}
	if err := h.env.DeleteNamespace(ctx, r.ns); err != nil {
		errs = append(errs, err)
	}
	if err := r.c.CoreV1().Nodes().DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{LabelSelector: runLabel + "=" + r.id}); err != nil {
		errs = append(errs, fmt.Errorf("delete nodes: %w", err))
	}
	err := waitFor(ctx, 4*time.Minute, "the run's pods and nodes to be deleted", func() (bool, string) {
		pods, err := r.c.CoreV1().Pods(r.ns).List(ctx, metav1.ListOptions{Limit: 1})
		if err != nil {
			return false, err.Error()
		}
		nodes, err := r.c.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: runLabel + "=" + r.id, Limit: 1})
		if err != nil {
			return false, err.Error()
		}
		return len(pods.Items) == 0 && len(nodes.Items) == 0, fmt.Sprintf("pods left: %v, nodes left: %v", len(pods.Items) > 0, len(nodes.Items) > 0)
	})
	return errors.Join(append(errs, err)...)
}

// profileLength is the length of the CPU profile taken from the start of
// a measured phase (shorter phases end it early: the profile covers what
// ran).
const profileLength = 15 * time.Second

// profile records the scheduler's CPU profile over the measured phase into
// profileDir/<run>.pprof; a failure is logged, not fatal: the figures do
// not depend on it.
func (h *harness) profile(ctx context.Context, sched running, id string) {
	b, err := sched.cpuProfile(context.WithoutCancel(ctx), profileLength)
	if err == nil {
		err = os.WriteFile(filepath.Join(h.profileDir, id+".pprof"), b, 0o644)
	}
	if err != nil {
		h.logf("[%s] CPU profile: %v", id, err)
	}
}

// attemptsCounted bounds countedMetrics' wait.
const attemptsCounted = 5 * time.Second

// countedMetrics scrapes sched's metrics once its scheduled attempts have
// grown by bound since before, or after attemptsCounted. A scheduler
// counts a pod's attempt when its binding call returns (upstream,
// wasmsched and the ceiling alike), and the harness's watch can see the pod
// bound first: the page scraped at once could miss the last pods' attempts
// (TestChurnHints saw 99 attempts for 100 pods).
func countedMetrics(ctx context.Context, sched running, before scrape, bound int) ([]byte, error) {
	want := before.counterWhere(scheduleAttempts, "result", "scheduled") + float64(bound)
	deadline := time.Now().Add(attemptsCounted)
	for {
		page, err := sched.metrics(ctx)
		if err != nil {
			return nil, err
		}
		s, err := parseMetrics(page)
		if err != nil || s.counterWhere(scheduleAttempts, "result", "scheduled") >= want || time.Now().After(deadline) {
			return page, nil // a page that does not parse fails where it is parsed
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}
