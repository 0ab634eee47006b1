package main

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/wasmsched/wasmsched/e2e/perf/report"
)

// The memory soak reproduces the two reports of kube-scheduler 1.28's
// QueueingHints memory growth (kubernetes#122725, #120622): in-flight
// events recorded while pods are being scheduled and never released, so
// that the scheduler's heap grows with every cycle of pod churn and with
// every node event seen while a pod stays unschedulable. After each cycle
// and a settle delay, the scheduler's heap in use and the sum of
// scheduler_inflight_events are scraped: when idle the latter must be 0,
// and the heap must not trend upwards.

// soakSettle is the pause before each scrape: long enough for binds, the
// informers and the queue's flush loops to go idle.
const soakSettle = 2 * time.Second

// soakPods is the size of the set scaled 0 <-> soakPods, as in #122725.
const soakPods = 60

// soak runs both phases under kind and returns a sample per cycle.
func (h *harness) soak(ctx context.Context, kind string, cycles int) (out []report.SoakSample, err error) {
	h.seq++
	r := &run{h: h, env: h.env, c: h.env.Client, kind: kind, id: fmt.Sprintf("soak-%s", kind), nodePrefix: fmt.Sprintf("perf%d", h.seq)}
	if r.ns, err = h.env.CreateNamespace(ctx, "soak"); err != nil {
		return nil, err
	}
	defer func() {
		if cerr := h.cleanup(context.WithoutCancel(ctx), r); cerr != nil {
			err = errors.Join(err, fmt.Errorf("cleanup: %w", cerr))
		}
	}()
	spec := node
	spec.NamePrefix = r.nodePrefix
	spec.Labels = map[string]string{runLabel: r.id}
	if _, err := h.env.CreateFakeNodes(ctx, 20, spec); err != nil {
		return nil, err
	}
	if r.pods, err = watchPods(ctx, r.c, r.ns); err != nil {
		return nil, err
	}
	defer r.pods.close()
	sched, err := h.startScheduler(ctx, kind)
	if err != nil {
		return nil, err
	}
	defer sched.stop()
	scrapeCycle := func(phase string, cycle int) error {
		if err := sleep(ctx, soakSettle); err != nil {
			return err
		}
		page, err := sched.metrics(ctx)
		if err != nil {
			return err
		}
		m, err := parseMetrics(page)
		if err != nil {
			return err
		}
		s := report.SoakSample{Scheduler: kind, Phase: phase, Cycle: cycle, HeapInuse: m.sum(heapInuse), Inflight: m.sum(inflightEvents)}
		out = append(out, s)
		h.logf("[%s] %s cycle %d: heap in use %.1f MiB, in-flight events %.0f", r.id, phase, cycle, s.HeapInuse/(1<<20), s.Inflight)
		return nil
	}

	// (1) a set of pods scaled 0 -> 60 -> 0 each cycle.
	zero := int64(0)
	for c := 1; c <= cycles; c++ {
		phase := "scale-" + strconv.Itoa(c)
		if err := r.createAndBind(ctx, phase, soakPods, func(int) podSpec { return small }); err != nil {
			return out, fmt.Errorf("scale cycle %d: %w", c, err)
		}
		if err := r.c.CoreV1().Pods(r.ns).DeleteCollection(ctx, metav1.DeleteOptions{GracePeriodSeconds: &zero},
			metav1.ListOptions{LabelSelector: phaseLabel + "=" + phase}); err != nil {
			return out, fmt.Errorf("scale cycle %d: delete pods: %w", c, err)
		}
		if err := waitFor(ctx, time.Minute, "the set's pods to be deleted", func() (bool, string) {
			l, err := r.c.CoreV1().Pods(r.ns).List(ctx, metav1.ListOptions{LabelSelector: phaseLabel + "=" + phase, Limit: 1})
			return err == nil && len(l.Items) == 0, fmt.Sprint(err)
		}); err != nil {
			return out, err
		}
		if err := scrapeCycle("scale", c); err != nil {
			return out, err
		}
	}

	// (2) a pod whose node affinity matches no node, then a node added (and
	// the previous one deleted) each cycle.
	stuck := makePod(r.ns, "unmatchable", "affinity", podSpec{cpu: "100m", memory: "500Mi", affinity: unmatchable})
	if _, err := r.c.CoreV1().Pods(r.ns).Create(ctx, stuck, metav1.CreateOptions{}); err != nil {
		return out, fmt.Errorf("create the unmatchable pod: %w", err)
	}
	if err := waitFor(ctx, time.Minute, "the unmatchable pod's first attempt", func() (bool, string) {
		return r.pods.unschedulableCount("affinity") == 1, "not reported unschedulable yet"
	}); err != nil {
		return out, err
	}
	var prev string
	for c := 1; c <= cycles; c++ {
		nodes, err := h.env.CreateFakeNodes(ctx, 1, spec)
		if err != nil {
			return out, err
		}
		if prev != "" {
			if err := r.c.CoreV1().Nodes().Delete(ctx, prev, metav1.DeleteOptions{}); err != nil {
				return out, fmt.Errorf("affinity cycle %d: delete node %s: %w", c, prev, err)
			}
		}
		prev = nodes[0].Name
		if err := scrapeCycle("affinity", c); err != nil {
			return out, err
		}
	}
	if r.pods.boundCount("affinity") != 0 {
		return out, errors.New("the unmatchable pod was bound: the scheduler ignored its required node affinity")
	}
	return out, nil
}

func sleep(ctx context.Context, d time.Duration) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d):
		return nil
	}
}
