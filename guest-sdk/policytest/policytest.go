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
// MakeVictim, MakePodGroup, events such as NodeAdd, and PlacementNodes for
// the placement slots), helpers that ask a slot about plain objects
// (Sorted, Hints, Ordered, Verdicts, Scores), and the native adapters
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
//	slot: queueSort                      # or backoffSort, preEnqueue, queueingHint, victimOrder, filter, score
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
// The cases of the placement slots place a pod on a table of nodes: the
// file's (a top-level nodes list, shared by its cases) or the case's own
// (nodes in the case). Nodes need distinct names, which the answers use:
//
//	slot: filter
//	nodes:
//	- {name: gpu-1, labels: {wasmsched.io/pool: gpu}, allocatable: {cpu: 8, nvidia.com/gpu: 4}}
//	- {name: cpu-1, images: [{name: "registry.k8s.io/pause:3.10", size: 300Ki}]}
//	cases:
//	- name: a pool pod runs in its pool   # filter: pass, unschedulable or unresolvable per node
//	  pod: {name: p, namespace: ml, namespaceLabels: {wasmsched.io/pool: gpu}}
//	  want: {gpu-1: pass, cpu-1: unresolvable}
//	  reasons: {cpu-1: not in pool gpu}  # optional: a substring of the reason
//	- name: the pre-step skips the pod   # filter, score: skip when the pre-step says the pod is none of its business
//	  pod: {name: q}
//	  want: skip
//
// A score case wants the module's score of each node, before the host
// scales it: want: {gpu-1: 100, cpu-1: 0}.
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
	"github.com/wasmsched/wasmsched/guest-sdk/filter"
	"github.com/wasmsched/wasmsched/guest-sdk/hint"
	"github.com/wasmsched/wasmsched/guest-sdk/preenqueue"
	"github.com/wasmsched/wasmsched/guest-sdk/queuesort"
	"github.com/wasmsched/wasmsched/guest-sdk/score"
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
	// Filter and Score, with their options, are what main.go passes to
	// filter.Register and score.Register.
	Filter        filter.Func
	FilterOptions []filter.Option
	Score         score.Func
	ScoreOptions  []score.Option
}

// Slots are a policy's slots as the host uses them; a slot the Policy does
// not implement is nil.
type Slots struct {
	QueueSort    Sort
	BackoffSort  BackoffSort
	PreEnqueue   policy.PreEnqueue
	QueueingHint policy.QueueingHint
	VictimOrder  policy.VictimOrder
	Filter       policy.Filter
	Score        policy.Score
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
		abi.SlotFilter:       p.Filter != nil,
		abi.SlotScore:        p.Score != nil,
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
		Filter:       func(x policy.Filter) { s.Filter = x },
		Score:        func(x policy.Score) { s.Score = x },
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
	if p.Filter != nil {
		s.Filter = registered(t, "filter", func() policy.Filter { return NativeFilter(p.Filter, p.FilterOptions...) })
	}
	if p.Score != nil {
		s.Score = registered(t, "score", func() policy.Score { return NativeScore(p.Score, p.ScoreOptions...) })
	}
	return s
}

// registered returns what build returns, or fails t with what the
// module's Register of the package pkg would panic with.
func registered[P any](t *testing.T, pkg string, build func() P) P {
	t.Helper()
	var (
		p   P
		msg any
	)
	func() {
		defer func() { msg = recover() }()
		p = build()
	}()
	if msg != nil {
		t.Fatalf("policytest.Policy: %s.Register would panic: %v", pkg, msg)
	}
	return p
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

// Verdicts asks f about pod on nodes as the host's filter plugin does: the
// pre-step, then one Filter call over all the nodes. It returns one verdict
// per node, or nil when the pre-step skips the pod (the host then passes
// every node). It fails t when a call fails.
func Verdicts(t testing.TB, f policy.Filter, pod *abi.Pod, nodes ...policy.PlacementNode) []policy.FilterVerdict {
	t.Helper()
	out, err := verdicts(f, PodView(pod), nodes)
	if err != nil {
		t.Fatalf("filter: %v", err)
	}
	return out
}

func verdicts(f policy.Filter, pod abi.PodView, nodes []policy.PlacementNode) ([]policy.FilterVerdict, error) {
	ok, err := f.PreFilter(pod)
	if err != nil || !ok {
		return nil, err
	}
	out := make([]policy.FilterVerdict, len(nodes))
	return out, f.Filter(pod, nodes, out)
}

// Scores asks s about pod on nodes as the host's score plugin does: the
// pre-step, then one Score call over all the nodes. It returns the module's
// scores, one per node, before the host scales them (see package score),
// or nil when the pre-step skips the pod (the host then adds nothing). It
// fails t when a call fails.
func Scores(t testing.TB, s policy.Score, pod *abi.Pod, nodes ...policy.PlacementNode) []int64 {
	t.Helper()
	out, err := scores(s, PodView(pod), nodes)
	if err != nil {
		t.Fatalf("score: %v", err)
	}
	return out
}

func scores(s policy.Score, pod abi.PodView, nodes []policy.PlacementNode) ([]int64, error) {
	ok, err := s.PreScore(pod)
	if err != nil || !ok {
		return nil, err
	}
	out := make([]int64, len(nodes))
	return out, s.Score(pod, nodes, out)
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
