package queue

import (
	"testing"

	"k8s.io/apimachinery/pkg/types"

	"github.com/wasmsched/wasmsched/abi"
	"github.com/wasmsched/wasmsched/host/podview"
)

// The Wasm filter's rejections are requeued by the queue itself
// (SetPluginEvents), on the events its module declared, whatever the
// QueueingHint slot knows; a change of the filter moves them all
// (MovePlugin), including a pod in flight at the time.

const wasmFilter = abi.PluginWasmFilter

func TestPluginEventsRequeue(t *testing.T) {
	e := newEnv(t)
	e.q.SetQueueingHint(fitHint())
	e.q.SetPluginEvents(wasmFilter, []abi.FilterEvent{{Resource: abi.ResourceNode, Actions: abi.ActionAdd | abi.ActionUpdateNodeLabel}})
	byFilter := makePod("by-filter").obj()
	byFit := makePod("by-fit").obj()
	e.failOnce(t, byFilter, rejectedBy(wasmFilter))
	e.failOnce(t, byFit, rejectedBy(fit))
	e.check(t)

	// A node deletion is not a declared event: nothing moves.
	e.q.MoveOnEvent(podview.NodeEvent(abi.ActionDelete, makeNode("gone", 4000), nil, nil, 0))
	if w := e.where(byFilter.UID); w != "unschedulable" {
		t.Fatalf("after an undeclared event the filter's pod is %s, want unschedulable", w)
	}
	// A node add the slot's hint skips (not fit-*) still moves the
	// filter's pod, and only it: its hint is the queue's.
	e.q.MoveOnEvent(nodeAdd(makeNode("other", 4000)))
	if w := e.where(byFilter.UID); w != "backoff" && w != "active" {
		t.Errorf("after a declared event the filter's pod is %s, want backoff or active", w)
	}
	if w := e.where(byFit.UID); w != "unschedulable" {
		t.Errorf("the fit-rejected pod is %s after a node its hint skips, want unschedulable", w)
	}
	e.check(t)

	// Without events (the slot emptied), the filter's rejections are the
	// slot's again, which registered nothing for them: as upstream's
	// plugins without EnqueueExtensions, every event moves them, the
	// undeclared node deletion included, and the slot is not asked.
	e.q.SetPluginEvents(wasmFilter, nil)
	again := makePod("again").obj()
	e.failOnce(t, again, rejectedBy(wasmFilter))
	if w := e.where(again.UID); w != "unschedulable" {
		t.Fatalf("after its failure the filter's pod is %s, want unschedulable", w)
	}
	e.q.MoveOnEvent(podview.NodeEvent(abi.ActionDelete, makeNode("gone-2", 4000), nil, nil, 0))
	if w := e.where(again.UID); w != "backoff" && w != "active" {
		t.Errorf("with no events declared the filter's pod is %s after a node deletion, want backoff or active", w)
	}
}

func TestMovePlugin(t *testing.T) {
	e := newEnv(t)
	e.q.SetQueueingHint(fitHint())
	a, b := makePod("a").obj(), makePod("b").obj()
	e.failOnce(t, a, rejectedBy(wasmFilter))
	e.failOnce(t, b, rejectedBy(fit))
	// c is in flight when the filter changes: it must not sleep through it.
	c := makePod("c").obj()
	e.q.Add(c)
	pc := e.popPod(t)
	if n := e.q.MovePlugin(wasmFilter, "WasmFilterSwap"); n != 1 {
		t.Errorf("MovePlugin moved %d entities, want 1 (a)", n)
	}
	if err := e.q.AddUnschedulableIfNotPresent(pc, rejectedBy(wasmFilter)); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, uid string
		want      []string
	}{
		{"a", string(a.UID), []string{"backoff", "active"}},
		{"b", string(b.UID), []string{"unschedulable"}},
		{"c (in flight)", string(c.UID), []string{"backoff", "active"}},
	} {
		w := e.where(types.UID(c.uid))
		if w != c.want[0] && (len(c.want) < 2 || w != c.want[1]) {
			t.Errorf("%s is %s, want %v", c.name, w, c.want)
		}
	}
	if got := e.rec.incomingOf("backoff", "WasmFilterSwap") + e.rec.incomingOf("active", "WasmFilterSwap"); got < 1 {
		t.Errorf("no move counted under the event WasmFilterSwap")
	}
	e.check(t)
}
