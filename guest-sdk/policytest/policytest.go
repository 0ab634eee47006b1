// Package policytest runs one test table against a policy twice: natively,
// calling the policy's Go logic through the SDK's decision functions, and
// against the compiled .wasm in the host's real runtime and slot adapters
// (after proxy-wasm-go-sdk's proxytest). A test writes its cases once:
//
//	func TestPolicy(t *testing.T) {
//		policytest.Run(t, policytest.Policy{WasmPath: "../prioritysort.wasm", QueueSort: &logic.Policy},
//			func(t *testing.T, s policytest.Slots) {
//				got := policytest.Sorted(t, s.QueueSort, low, high)
//				...
//			})
//	}
//
// Run runs the body as subtests "native" and "wasm". A passing "native" run
// says the logic is right; a passing "wasm" run says the module built from it
// behaves the same through the ABI, without the host falling back to its
// native defaults (a fallback fails the test), and exports exactly the slots
// the Policy lists.
//
// The package also has the builders of test objects (MakePod, MakeNode,
// MakeVictim, MakePodGroup, and events such as NodeAdd), helpers that ask a
// slot about plain objects (Sorted, Hints, Ordered), and the native adapters
// (NativeSort, ...) that the host's benchmarks reuse.
//
// # Case files
//
// A case file is a table of questions to one slot and the answers wanted, in
// YAML. RunCases runs one from `go test`, natively and against the module:
//
//	func TestCases(t *testing.T) {
//		policytest.RunCases(t, policytest.Policy{WasmPath: "../backoffpop.wasm",
//			QueueSort: &logic.QueueSort, BackoffSort: &logic.BackoffSort}, "testdata/queuesort.yaml")
//	}
//
// and `wasmsched policy test MODULE --cases FILE` runs the same file against
// a module loaded as the scheduler loads it (ReadCaseFile and Case.Run are
// what both use). The file names the slot and lists cases; each case asks
// one question:
//
//	slot: queueSort                      # or backoffSort, preEnqueue, queueingHint, victimOrder
//	cases:
//	- name: higher priority first
//	  less: {a: {name: a, priority: 10}, b: {name: b, priority: 1}}
//	  want: true
//	- name: pop order                    # sort slots: the order the heap pops them (as Sorted)
//	  sort: [{name: a, priority: 1}, {name: b, priority: 10}]
//	  want: [b, a]
//	- name: errors never pop early       # backoffSort
//	  mayPop: {name: p, lastFailureError: true}
//	  want: false
//	- name: gang member waits            # preEnqueue: admit or wait, plugin and reason (a substring) optional
//	  pod: {name: p, namespace: ns, group: {name: g, minCount: 3, members: 1}}
//	  want: wait
//	  plugin: GangScheduling
//	  reason: 1 of 3 pods exist
//	- name: a node that fits             # queueingHint: one answer per pod, queue, skip or error
//	  event: {resource: Node, action: Add, new: {node: {name: n, allocatable: {cpu: 4, pods: 110}}}}
//	  pods: [{name: p, requests: {cpu: 500m}, unschedulablePlugins: [NodeResourcesFit]}]
//	  want: [queue]
//	- name: the pod's claim appears      # storage events (ABI 1.1): old and new are {storage: {...}}
//	  event: {resource: PersistentVolumeClaim, action: Add, new: {storage: {namespace: ns, name: data}}}
//	  pods: [{name: p, namespace: ns, claims: [data], unschedulablePlugins: [VolumeBinding]}]
//	  want: [queue]
//	- name: low priority goes first      # victimOrder: names, most important first; preemptor optional
//	  victims: [{name: a, priority: 1}, {name: b, priority: 5}]
//	  want: [b, a]
//
// Pods, nodes, pod groups, storage objects, events and victims decode into
// the abi records (abi.Pod, abi.Node, abi.PodGroup, abi.StorageObject,
// abi.Event, abi.Victim) under the YAML
// names of their fields (see casefields.go and testdata/cases); enumerations
// take their names (NoSchedule, Exists, TCP, Add|UpdateNodeLabel). The
// format's conveniences: times are RFC 3339 strings or Unix seconds,
// quantities are Kubernetes quantities (cpu: 500m, memory: 1Gi), labels and
// node selectors are maps, a pod's uid defaults to namespace/name, and a
// victim with group: N is a pod group of N members.
//
// # Notes
//
// Case files are read with k8s.io/apimachinery's strict decoder
// (sigs.k8s.io/yaml): unknown and duplicate fields are errors. Syntax errors
// carry the YAML line; the others name the case (with the line where it
// starts, for block-style files) and the field.
//
// A QueueingHint is asked about every listed pod; the queue would only ask
// about pods rejected by a plugin that registered the event.
package policytest

import (
	"os"
	"slices"
	"testing"

	"github.com/wasmsched/wasmsched/abi"
	"github.com/wasmsched/wasmsched/guest-sdk/backoffsort"
	"github.com/wasmsched/wasmsched/guest-sdk/hint"
	"github.com/wasmsched/wasmsched/guest-sdk/preenqueue"
	"github.com/wasmsched/wasmsched/guest-sdk/queuesort"
	"github.com/wasmsched/wasmsched/guest-sdk/victim"
	"github.com/wasmsched/wasmsched/host/policy"
)

// Policy describes a policy module: the values its main.go registers, slot
// by slot (nil for a slot it does not implement), and its compiled module.
type Policy struct {
	// WasmPath is the module built from the policy (relative paths are
	// relative to the test's package directory). Empty skips the wasm run.
	WasmPath     string
	QueueSort    *queuesort.Policy
	BackoffSort  *backoffsort.Policy
	PreEnqueue   preenqueue.Func
	QueueingHint []hint.Plugin
	VictimOrder  victim.More
}

// Slots are a policy's slots as the host uses them; a slot the Policy does
// not implement is nil.
type Slots struct {
	QueueSort    Sort
	BackoffSort  BackoffSort
	PreEnqueue   policy.PreEnqueue
	QueueingHint policy.QueueingHint
	VictimOrder  policy.VictimOrder
}

// Run runs body as subtest "native" with p's native adapters, then as
// subtest "wasm" with p.WasmPath loaded into the host runtime.
// Without a WasmPath the "wasm" subtest is skipped, except under CI=true,
// where it fails: a module that was not built must not pass unnoticed.
func Run(t *testing.T, p Policy, body func(t *testing.T, s Slots)) {
	t.Helper()
	t.Run("native", func(t *testing.T) { body(t, p.native(t)) })
	t.Run("wasm", func(t *testing.T) {
		if p.WasmPath == "" {
			// A missing module must not pass as a skip in CI.
			const msg = "policytest.Policy.WasmPath is empty: build the policy's .wasm (`make policies`, which needs TinyGo: hack/tinygo.sh) and set WasmPath"
			if os.Getenv("CI") == "true" {
				t.Fatal(msg + " (CI=true: not skipped)")
			}
			t.Skip(msg)
		}
		body(t, p.wasm(t))
	})
}

// implements reports which slots p implements: policytest's hook of the slot
// table (host/policy's SpecOf), one Policy field per slot.
func (p Policy) implements(s abi.Slot) bool {
	has := [...]bool{
		abi.SlotQueueSort:    p.QueueSort != nil,
		abi.SlotBackoffSort:  p.BackoffSort != nil,
		abi.SlotPreEnqueue:   p.PreEnqueue != nil,
		abi.SlotQueueingHint: p.QueueingHint != nil,
		abi.SlotVictimOrder:  p.VictimOrder != nil,
	}
	return int(s) < len(has) && has[s]
}

// installer puts each slot's policy in its field of s: how the slot table's
// rows install into Slots.
func (s *Slots) installer() policy.Installer {
	return policy.Installer{
		Sort:         func(x policy.Sort) { s.QueueSort, _ = x.(Sort) },
		BackoffSort:  func(x policy.BackoffSort) { s.BackoffSort, _ = x.(BackoffSort) },
		PreEnqueue:   func(x policy.PreEnqueue) { s.PreEnqueue = x },
		QueueingHint: func(x policy.QueueingHint) { s.QueueingHint = x },
		VictimOrder:  func(x policy.VictimOrder) { s.VictimOrder = x },
	}
}

func (p Policy) native(t *testing.T) Slots {
	t.Helper()
	var s Slots
	if p.QueueSort != nil {
		if p.QueueSort.Less == nil {
			t.Fatal("policytest.Policy.QueueSort.Less is nil")
		}
		s.QueueSort = NativeSort(*p.QueueSort)
	}
	if p.BackoffSort != nil {
		if p.BackoffSort.Less == nil {
			t.Fatal("policytest.Policy.BackoffSort.Less is nil")
		}
		s.BackoffSort = NativeBackoffSort(*p.BackoffSort)
	}
	if p.PreEnqueue != nil {
		s.PreEnqueue = checkedGates{t, NativePreEnqueue(p.PreEnqueue)}
	}
	if p.QueueingHint != nil {
		if _, err := hint.Registrations(p.QueueingHint); err != nil {
			t.Fatalf("policytest.Policy.QueueingHint: hint.Register would panic: %v", err)
		}
		s.QueueingHint = NativeQueueingHint(p.QueueingHint...)
	}
	if p.VictimOrder != nil {
		s.VictimOrder = NativeVictimOrder(p.VictimOrder)
	}
	return s
}

// checkedGates fails the test on a gate the host would refuse from a
// module, so that the native run catches what the wasm run would.
type checkedGates struct {
	t     *testing.T
	inner policy.PreEnqueue
}

func (c checkedGates) PreEnqueue(p abi.PodView) abi.Gate {
	g := c.inner.PreEnqueue(p)
	var dec abi.Gate
	if err := abi.DecodeGate(abi.AppendGate(nil, &g), &dec); err != nil {
		c.t.Errorf("PreEnqueue(%s/%s) = %+v, which the host refuses: %v", p.Namespace(), p.Name(), g, err)
	}
	return g
}

// Sorted returns the names of pods in the order s pops them (by Less,
// stable). When s is a keyed policy.Keyer it also sorts by key and fails t
// if the two orders differ: the host's heaps compare keys, so a key must
// order pods exactly as Less does. It is the one sort comparison of the
// package: a case file's sort questions use it too.
func Sorted(t testing.TB, s policy.Sort, pods ...*abi.Pod) []string {
	t.Helper()
	byLess, byKey := sortOrder(s, pods)
	if byKey != nil && !slices.Equal(byLess, byKey) {
		t.Errorf("sort keys disagree with Less: by Less %q, by key %q", byLess, byKey)
	}
	return byLess
}

// sortOrder returns the names of pods in the order s pops them by Less
// (stable) and, when s is keyed, by sort key (else nil).
func sortOrder(s policy.Sort, pods []*abi.Pod) (byLess, byKey []string) {
	type item struct {
		name string
		view abi.PodView
		key  abi.SortKey
	}
	items := make([]item, len(pods))
	for i, p := range pods {
		items[i] = item{name: p.Name, view: PodView(p)}
	}
	names := func(items []item) []string {
		out := make([]string, len(items))
		for i, it := range items {
			out[i] = it.name
		}
		return out
	}
	sorted := slices.Clone(items)
	slices.SortStableFunc(sorted, func(a, b item) int {
		switch {
		case s.Less(a.view, b.view):
			return -1
		case s.Less(b.view, a.view):
			return 1
		}
		return 0
	})
	byLess = names(sorted)
	if k, ok := s.(policy.Keyer); ok && k.Keyed() {
		for i := range items {
			items[i].key = k.Key(items[i].view)
		}
		slices.SortStableFunc(items, func(a, b item) int {
			switch {
			case a.key.Less(b.key):
				return -1
			case b.key.Less(a.key):
				return 1
			}
			return 0
		})
		byKey = names(items)
	}
	return byLess, byKey
}

// Hints asks q about ev for each pod and returns its answers.
func Hints(q policy.QueueingHint, ev abi.EventView, pods ...*abi.Pod) []abi.Hint {
	views := make([]abi.PodView, len(pods))
	for i, p := range pods {
		views[i] = PodView(p)
	}
	out := make([]abi.Hint, len(pods))
	q.Hints(ev, views, out)
	return out
}

// Order asks v to order victims and returns the indices, most important first.
func Order(v policy.VictimOrder, victims ...abi.Victim) []uint32 {
	order := make([]uint32, len(victims))
	v.Order(abi.PodView{}, victims, order)
	return order
}

// Ordered is Order returning the victims' names.
func Ordered(v policy.VictimOrder, victims ...abi.Victim) []string {
	var names []string
	for _, i := range Order(v, victims...) {
		names = append(names, victims[i].Name)
	}
	return names
}
