package policytest_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wasmsched/wasmsched/abi"
	gpupack "github.com/wasmsched/wasmsched/guest-sdk/examples/gpupack/logic"
	nodepool "github.com/wasmsched/wasmsched/guest-sdk/examples/nodepool/logic"
	"github.com/wasmsched/wasmsched/guest-sdk/policytest"
	"github.com/wasmsched/wasmsched/host/policy"
	backoffpop "github.com/wasmsched/wasmsched/policies/backoffpop/logic"
	gangpreempt "github.com/wasmsched/wasmsched/policies/gangpreempt/logic"
	hints "github.com/wasmsched/wasmsched/policies/hints/logic"
)

func casesFile(name string) string { return filepath.Join("testdata", "cases", name+".yaml") }

func module(name string) string { return filepath.Join("..", "..", "policies", name, name+".wasm") }

func example(name string) string { return filepath.Join("..", "examples", name, name+".wasm") }

var (
	nodePool = policytest.Policy{WasmPath: example("nodepool"), Filter: nodepool.Filter, FilterOptions: nodepool.Options}
	gpuPack  = policytest.Policy{WasmPath: example("gpupack"), Score: gpupack.Score, ScoreOptions: gpupack.Options}
)

// TestRunCases runs the reference policies' case files natively and
// against their modules, as a policy's own test would.
func TestRunCases(t *testing.T) {
	backoff := policytest.Policy{WasmPath: module("backoffpop"), QueueSort: &backoffpop.QueueSort, BackoffSort: &backoffpop.BackoffSort}
	gang := policytest.Policy{WasmPath: module("gangpreempt"), PreEnqueue: gangpreempt.PreEnqueue, VictimOrder: gangpreempt.MoreImportant}
	for _, tc := range []struct {
		cases string
		p     policytest.Policy
	}{
		{"queuesort", backoff},
		{"backoffsort", backoff},
		{"preenqueue", gang},
		{"victims", gang},
		{"hints", policytest.Policy{WasmPath: module("hints"), QueueingHint: hints.Plugins}},
		{"filter", nodePool},
		{"score", gpuPack},
	} {
		t.Run(tc.cases, func(t *testing.T) { policytest.RunCases(t, tc.p, casesFile(tc.cases)) })
	}
}

// TestCaseResults: a wrong expectation fails with the answer and the one
// wanted.
func TestCaseResults(t *testing.T) {
	f, err := policytest.ReadCaseFile(casesFile("queuesort-fail"))
	if err != nil {
		t.Fatal(err)
	}
	if f.Slot() != abi.SlotQueueSort {
		t.Errorf("slot %s, want queueSort", f.Slot())
	}
	s := policytest.Slots{QueueSort: policytest.NativeSort(backoffpop.QueueSort)}
	type result struct {
		Name string
		policytest.Result
	}
	var got []result
	for _, c := range f.Cases() {
		got = append(got, result{c.Name(), c.Run(s)})
	}
	want := []result{
		{"higher priority first", policytest.Result{Got: "true", Want: "true", OK: true}},
		{"lower priority first (wrong)", policytest.Result{Got: "false", Want: "true"}},
		{"pop order (wrong)", policytest.Result{Got: "[high low]", Want: "[low high]"}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("results (-want, +got):\n%s", diff)
	}

	// Without the slot the case asks, a case fails saying so.
	r := f.Cases()[0].Run(policytest.Slots{})
	if r.OK || !strings.Contains(r.Got, "no queueSort slot") {
		t.Errorf("with no slots: %+v, want a failure naming the slot", r)
	}
}

// TestPlacementCaseResults: the answers of the placement slots' cases, per
// node in the table's order, and what a wrong expectation shows.
func TestPlacementCaseResults(t *testing.T) {
	f, err := policytest.ParseCaseFile("pools.yaml", []byte(`slot: filter
nodes: [{name: gpu-1, labels: {wasmsched.io/pool: gpu}}, {name: cpu-1}]
cases:
- name: right
  pod: {name: p, namespaceLabels: {wasmsched.io/pool: gpu}}
  want: {cpu-1: unresolvable, gpu-1: pass}
  reasons: {cpu-1: not in pool}
- name: wrong code
  pod: {name: p, namespaceLabels: {wasmsched.io/pool: gpu}}
  want: {cpu-1: unschedulable, gpu-1: pass}
- name: wrong reason
  pod: {name: p}
  want: {cpu-1: pass, gpu-1: unresolvable}
  reasons: {gpu-1: not in pool}
- name: not skipped
  pod: {name: p}
  want: skip
- name: skipped
  pod: {name: p, ownerKind: DaemonSet}
  want: {cpu-1: pass, gpu-1: pass}
`))
	if err != nil {
		t.Fatal(err)
	}
	s := policytest.Slots{Filter: policytest.NativeFilter(nodepool.Filter, nodepool.Options...)}
	type result struct {
		Name string
		policytest.Result
	}
	var got []result
	for _, c := range f.Cases() {
		got = append(got, result{c.Name(), c.Run(s)})
	}
	notIn := `gpu-1: pass, cpu-1: unresolvable ("node(s) are not in pool gpu")`
	reserved := `gpu-1: unresolvable ("node(s) are reserved for pool gpu"), cpu-1: pass`
	want := []result{
		{"right", policytest.Result{Got: "{" + notIn + "}", Want: `{gpu-1: pass, cpu-1: unresolvable (reason containing "not in pool")}`, OK: true}},
		{"wrong code", policytest.Result{Got: "{" + notIn + "}", Want: "{gpu-1: pass, cpu-1: unschedulable}"}},
		{"wrong reason", policytest.Result{Got: "{" + reserved + "}", Want: `{gpu-1: unresolvable (reason containing "not in pool"), cpu-1: pass}`}},
		{"not skipped", policytest.Result{Got: "{" + reserved + "}", Want: "skip"}},
		{"skipped", policytest.Result{Got: "skip", Want: "{gpu-1: pass, cpu-1: pass}"}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("results (-want, +got):\n%s", diff)
	}
	if r := f.Cases()[0].Run(policytest.Slots{}); r.OK || !strings.Contains(r.Got, "no filter slot") {
		t.Errorf("with no slots: %+v, want a failure naming the slot", r)
	}

	f, err = policytest.ParseCaseFile("gpus.yaml", []byte(`slot: score
cases:
- nodes: [{name: a, allocatable: {nvidia.com/gpu: 1}}, {name: b, allocatable: {nvidia.com/gpu: 2}}]
  pod: {name: p, requests: {nvidia.com/gpu: 1}}
  want: {a: 100, b: 80}
`))
	if err != nil {
		t.Fatal(err)
	}
	r := f.Cases()[0].Run(policytest.Slots{Score: policytest.NativeScore(gpupack.Score, gpupack.Options...)})
	if diff := cmp.Diff(policytest.Result{Got: "{a: 100, b: 90}", Want: "{a: 100, b: 80}"}, r); diff != "" {
		t.Errorf("score result (-want, +got):\n%s", diff)
	}
}

// keyDisagrees sorts by priority but keys every pod the same.
type keyDisagrees struct{ policy.PrioritySort }

func (keyDisagrees) Keyed() bool                 { return true }
func (keyDisagrees) Key(abi.PodView) abi.SortKey { return abi.SortKey{} }

// TestCaseSortKeys: a sort question fails when the keys order the pods
// otherwise than Less, as policytest.Sorted does.
func TestCaseSortKeys(t *testing.T) {
	f, err := policytest.ParseCaseFile("keys.yaml", []byte(`slot: queueSort
cases:
- sort: [{name: low, priority: 1}, {name: high, priority: 10}]
  want: [high, low]
`))
	if err != nil {
		t.Fatal(err)
	}
	r := f.Cases()[0].Run(policytest.Slots{QueueSort: keyDisagrees{}})
	if want := "[high low] by less but [low high] by sort key"; r.OK || r.Got != want {
		t.Errorf("got %+v, want a failure %q", r, want)
	}
	if name := f.Cases()[0].Name(); name != "case 1" {
		t.Errorf("name %q, want case 1", name)
	}
}

// TestParseCaseFile: the objects decode into the abi records, with the
// format's conveniences (quantities, times, maps, names of enumerations).
func TestParseCaseFile(t *testing.T) {
	f, err := policytest.ParseCaseFile("all.yaml", []byte(`slot: queueingHint
cases:
- event:
    resource: Node
    action: Add|UpdateNodeTaint
    old: {node: {name: n1, taints: [{key: k, effect: NoExecute}], allocatable: {cpu: 1500m, memory: 1Ki}}}
    new: {node: {name: n1}}
  pods:
  - name: p
    namespace: ns
    created: "2026-01-02T15:04:05Z"
    queued: 1.5
    group: {name: g, minCount: 2, disruption: All}
    labels: {b: "2", a: "1"}
    tolerations: [{key: k, operator: Exists}, {key: j, value: v, effect: NoSchedule}]
    hostPorts: [{port: 80}, {port: 53, protocol: UDP}]
    requiredAffinity: [{matchFields: [{key: metadata.name, operator: NotIn, values: [x]}]}]
  want: [queue]
`))
	if err != nil {
		t.Fatal(err)
	}
	var got []abi.Hint
	var ev abi.EventView
	var pod abi.Pod
	f.Cases()[0].Run(policytest.Slots{QueueingHint: hintSpy(func(e abi.EventView, pods []abi.PodView) {
		ev = e
		if err := pods[0].Decode(&pod); err != nil {
			t.Fatal(err)
		}
		got = append(got, abi.HintQueue)
	})})
	if ev.Resource() != abi.ResourceNode || ev.Action() != abi.ActionAdd|abi.ActionUpdateNodeTaint {
		t.Errorf("event %s %s, want Node Add|UpdateNodeTaint", ev.Resource(), ev.Action())
	}
	var old abi.Node
	if nv, ok := ev.OldNode(); !ok || nv.Decode(&old) != nil {
		t.Fatalf("event's old object is not a node")
	}
	wantNode := abi.Node{Name: "n1", Labels: []abi.KV{}, Taints: []abi.Taint{{Key: "k", Effect: abi.EffectNoExecute}},
		Allocatable: []abi.Quantity{{Name: "cpu", Value: 1500}, {Name: "memory", Value: 1024}}, Requested: []abi.Quantity{}}
	if diff := cmp.Diff(wantNode, old, cmpEmpty); diff != "" {
		t.Errorf("old node (-want, +got):\n%s", diff)
	}
	wantPod := abi.Pod{
		UID: "ns/p", Namespace: "ns", Name: "p", CreationTime: 1767366245_000000000, QueuedTime: 1_500_000_000,
		Group:  abi.PodGroupRef{Name: "g", MinCount: 2, DisruptionMode: abi.DisruptionAll},
		Labels: []abi.KV{{Key: "a", Value: "1"}, {Key: "b", Value: "2"}},
		Tolerations: []abi.Toleration{{Key: "k", Operator: abi.TolerationExists},
			{Key: "j", Value: "v", Operator: abi.TolerationEqual, Effect: abi.EffectNoSchedule}},
		HostPorts: []abi.HostPort{{Port: 80, Protocol: abi.ProtocolTCP}, {Port: 53, Protocol: abi.ProtocolUDP}},
		RequiredAffinity: []abi.NodeSelectorTerm{{MatchFields: []abi.Requirement{
			{Key: "metadata.name", Operator: abi.SelectorNotIn, Values: []string{"x"}}}}},
	}
	if diff := cmp.Diff(wantPod, pod, cmpEmpty); diff != "" {
		t.Errorf("pod (-want, +got):\n%s", diff)
	}
	if len(got) != 1 {
		t.Errorf("the hint was asked %d times, want once", len(got))
	}
}

// TestParseCaseFileStorage: storage events (ABI minor 1) and the pod's
// claims decode into their records.
func TestParseCaseFileStorage(t *testing.T) {
	f, err := policytest.ParseCaseFile("storage.yaml", []byte(`slot: queueingHint
cases:
- event:
    resource: CSINode
    action: UpdateOther
    old: {storage: {name: n1, node: n1, drivers: [{name: d, allocatable: 1}, {name: e}]}}
    new: {storage: {name: n1, node: n1, phase: Bound, bindingMode: WaitForFirstConsumer, capacity: 0,
      topology: [{matchExpressions: [{key: zone, operator: In, values: [a]}]}], labels: {zone: a}}}
  pods:
  - {name: p, namespace: ns, claims: [data], ephemeralClaims: [p-scratch], volumeDrivers: [d]}
  want: [queue]
`))
	if err != nil {
		t.Fatal(err)
	}
	var ev abi.EventView
	var pod abi.Pod
	f.Cases()[0].Run(policytest.Slots{QueueingHint: hintSpy(func(e abi.EventView, pods []abi.PodView) {
		ev = e
		if err := pods[0].Decode(&pod); err != nil {
			t.Fatal(err)
		}
	})})
	var old, cur abi.StorageObject
	ov, ok1 := ev.OldStorage()
	nv, ok2 := ev.NewStorage()
	if ev.Resource() != abi.ResourceCSINode || !ok1 || !ok2 || ov.Decode(&old) != nil || nv.Decode(&cur) != nil {
		t.Fatalf("event %s: storage objects old %v, new %v", ev.Resource(), ok1, ok2)
	}
	wantOld := abi.StorageObject{Name: "n1", NodeName: "n1", Drivers: []abi.CSIDriverLimit{{Name: "d", Allocatable: 1, HasAllocatable: true}, {Name: "e"}}}
	wantNew := abi.StorageObject{Name: "n1", NodeName: "n1", Phase: abi.PhaseBound, BindingMode: abi.BindingWaitForFirstConsumer,
		HasCapacity: true, Labels: []abi.KV{{Key: "zone", Value: "a"}},
		Topology: []abi.NodeSelectorTerm{{MatchExpressions: []abi.Requirement{{Key: "zone", Operator: abi.SelectorIn, Values: []string{"a"}}}}}}
	if diff := cmp.Diff(wantOld, old, cmpEmpty); diff != "" {
		t.Errorf("old (-want, +got):\n%s", diff)
	}
	if diff := cmp.Diff(wantNew, cur, cmpEmpty); diff != "" {
		t.Errorf("new (-want, +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"data"}, pod.Claims); diff != "" || len(pod.EphemeralClaims) != 1 || len(pod.VolumeDrivers) != 1 {
		t.Errorf("pod volumes: claims %v, ephemeral %v, drivers %v", pod.Claims, pod.EphemeralClaims, pod.VolumeDrivers)
	}
}

// cmpEmpty treats nil and empty slices alike, as the encoding does.
var cmpEmpty = cmp.FilterValues(func(a, b any) bool { return isEmpty(a) && isEmpty(b) }, cmp.Ignore())

func isEmpty(v any) bool {
	switch v := v.(type) {
	case []abi.KV:
		return len(v) == 0
	case []abi.Quantity:
		return len(v) == 0
	case []string:
		return len(v) == 0
	case []abi.Taint:
		return len(v) == 0
	case []abi.Toleration:
		return len(v) == 0
	case []abi.HostPort:
		return len(v) == 0
	case []abi.NodeSelectorTerm:
		return len(v) == 0
	case []abi.Requirement:
		return len(v) == 0
	}
	return false
}

// hintSpy answers queue for every pod and shows what it was asked.
type hintSpy func(abi.EventView, []abi.PodView)

func (hintSpy) Registrations() []abi.Registration { return nil }
func (h hintSpy) Hints(ev abi.EventView, pods []abi.PodView, out []abi.Hint) {
	h(ev, pods)
	for i := range out {
		out[i] = abi.HintQueue
	}
}

// TestParseCaseFileErrors: a case file that cannot be used is an error naming
// the file, the line or case, and the field.
func TestParseCaseFileErrors(t *testing.T) {
	for _, tc := range []struct {
		file string
		want []string
	}{
		{casesFile("bad-field"), []string{"bad-field.yaml:6: case 2", `unknown field "priorty"`}},
		{casesFile("bad-want"), []string{`bad-want.yaml:3: case 1 ("one hint short")`, "want: 1 hints for 2 pods"}},
		{casesFile("bad-enum"), []string{`bad-enum.yaml:3: case 1 ("unknown action")`, `event.action: "UpdateNodeLabels" is not an action`}},
		{casesFile("bad-question"), []string{"bad-question.yaml:3", "less: not a question for the preEnqueue slot"}},
		{casesFile("bad-syntax"), []string{"bad-syntax.yaml", "line 4"}},
		{filepath.Join("testdata", "cases", "missing.yaml"), []string{"missing.yaml"}},
	} {
		t.Run(filepath.Base(tc.file), func(t *testing.T) {
			_, err := policytest.ReadCaseFile(tc.file)
			if err == nil {
				t.Fatal("no error")
			}
			for _, want := range tc.want {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q lacks %q", err, want)
				}
			}
		})
	}
	for _, tc := range []struct {
		yaml string
		want string
	}{
		{"slot: queueSrot\ncases:\n- less: {a: {}, b: {}}\n  want: true\n", `x.yaml: slot: "queueSrot" is not a slot: want one of queueSort, backoffSort`},
		{"slot: queueSort\n", "x.yaml: cases: no cases"},
		{"slot: queueSort\ncases:\n- want: true\n", "x.yaml:3: case 1: a queueSort case asks one of less or sort, this one asks nothing"},
		{"slot: backoffSort\ncases:\n- {less: {}, mayPop: {}, want: true}\n", "asks less and mayPop"},
		{"slot: queueSort\ncases:\n- less: {}\n", "want: missing"},
		{"slot: queueSort\ncases:\n- {less: {}, want: sure}\n", `want: "sure": want true or false`},
		{"slot: queueSort\ncases:\n- {sort: [{name: a}], want: [a, b]}\n", "want: 2 names for 1 in sort"},
		{"slot: queueSort\ncases:\n- {sort: [{name: a, queued: yesterday}], want: [a]}\n", `sort[0].queued: time "yesterday": want RFC 3339`},
		{"slot: queueSort\ncases:\n- {less: {a: {priority: high}}, want: true}\n", "less.a.priority: json: cannot unmarshal string"},
		{"slot: queueSort\ncases:\n- {less: {a: {requests: {cpu: lots}}}, want: true}\n", "less.a.requests: cpu: quantity"},
		{"slot: preEnqueue\ncases:\n- {pod: {}, want: maybe}\n", `want: "maybe": want admit or wait`},
		{"slot: preEnqueue\ncases:\n- {pod: {}, want: admit, reason: x}\n", "plugin, reason: only a wait has them"},
		{"slot: preEnqueue\ncases:\n- {pod: {tolerations: [{operator: Near}]}, want: admit}\n", `pod.tolerations[0].operator: "Near": want one of Equal, Exists, Lt, Gt`},
		{"slot: preEnqueue\ncases:\n- {pod: {hostPorts: [{protocol: QUIC}]}, want: admit}\n", `pod.hostPorts[0].protocol: "QUIC": want one of TCP, UDP, SCTP`},
		{"slot: preEnqueue\ncases:\n- {pod: {group: {disruption: Most}}, want: admit}\n", `pod.group.disruption: "Most": want one of Single, All`},
		{"slot: preEnqueue\ncases:\n- {pod: {requiredAffinity: [{matchExpressions: [{key: k}]}]}, want: admit}\n", `pod.requiredAffinity[0].matchExpressions[0].operator: "": want one of In, NotIn`},
		{"slot: queueingHint\ncases:\n- {event: {resource: Node, action: Add, new: {}}, pods: [], want: []}\n", "event.new: want exactly one of node, pod, podGroup"},
		{"slot: queueingHint\ncases:\n- {event: {resource: Node, action: Add, new: {node: {taints: [{key: k}]}}}, pods: [], want: []}\n", "event.new.node.taints[0].effect"},
		{"slot: queueingHint\ncases:\n- {event: {resource: PodGroup, action: Add, new: {podGroup: {name: g, size: 3}}}, pods: [], want: []}\n", `event.new.podGroup: unknown field "size"`},
		{"slot: queueingHint\ncases:\n- {event: {resource: Nodes, action: Add}, pods: [], want: []}\n", `event.resource: "Nodes": want one of Pod, UnscheduledPod, Node, PodGroup`},
		{"slot: queueingHint\ncases:\n- {event: {resource: \"*\", action: Add}, pods: [], want: []}\n", `event.resource: "*": want one of Pod, UnscheduledPod, Node, PodGroup`},
		{"slot: queueingHint\ncases:\n- {event: {resource: Node}, pods: [], want: []}\n", `event.action: "" is not an action`},
		{"slot: queueingHint\ncases:\n- {event: {action: Add}, pods: [], want: []}\n", `event.resource: "": want one of Pod, UnscheduledPod, Node, PodGroup`},
		{"slot: queueingHint\ncases:\n- {event: {resource: Node, action: Add}, pods: [{}], want: [later]}\n", `want[0]: "later": want queue, skip or error`},
		{"slot: victimOrder\ncases:\n- {victims: [{name: a, started: [1]}], want: [a]}\n", "victims[0].started: time [1]"},
		{"slot: victimOrder\ncases:\n- {preemptor: {name: p, colour: red}, victims: [], want: []}\n", `preemptor: unknown field "colour"`},
		{"slot: queueSort\nnodes: [{name: n1}]\ncases:\n- {less: {}, want: true}\n", "x.yaml: nodes: only the cases of the filter and score slots"},
		{"slot: preEnqueue\ncases:\n- {pod: {}, nodes: [{name: n1}], want: admit}\n", "nodes: not a question for the preEnqueue slot"},
		{"slot: filter\ncases:\n- {pod: {}, want: skip}\n", "nodes: a filter case needs nodes, the file's or its own"},
		{"slot: filter\nnodes: []\ncases:\n- {pod: {}, want: skip}\n", "x.yaml: nodes: no nodes"},
		{"slot: filter\nnodes: [{labels: {a: b}}]\ncases:\n- {pod: {}, want: skip}\n", "nodes[0].name: missing"},
		{"slot: filter\nnodes: [{name: n1}, {name: n1}]\ncases:\n- {pod: {}, want: skip}\n", `nodes[1].name: "n1": another node has that name`},
		{"slot: filter\nnodes: [{name: n1, images: [{name: i, size: big}]}]\ncases:\n- {pod: {}, want: skip}\n", "nodes[0].images[0].size: quantity"},
		{"slot: filter\nnodes: [{name: n1}]\ncases:\n- {nodes: [], pod: {}, want: skip}\n", "case 1: nodes: no nodes"},
		{"slot: filter\nnodes: [{name: n1}]\ncases:\n- {want: skip}\n", "a filter case asks one of pod (placed on the file's nodes or the case's), this one asks nothing"},
		{"slot: filter\nnodes: [{name: n1}]\ncases:\n- {pod: {}, want: maybe}\n", `want: "maybe": want skip, or a map of node name to pass, unschedulable or unresolvable`},
		{"slot: filter\nnodes: [{name: n1}]\ncases:\n- {pod: {}, want: {n1: fine}}\n", `want: n1: "fine": want pass, unschedulable or unresolvable`},
		{"slot: filter\nnodes: [{name: n1}, {name: m}]\ncases:\n- {pod: {}, want: {n1: pass}}\n", "want: 1 nodes of 2: want an answer for every node [n1 m]"},
		{"slot: filter\nnodes: [{name: n1}]\ncases:\n- {pod: {}, want: {n1: pass, x: pass}}\n", `want: "x" is not one of the nodes [n1]`},
		{"slot: filter\nnodes: [{name: n1}]\ncases:\n- {pod: {}, want: {n1: pass}, reasons: {n1: x}}\n", "reasons: n1: the node is wanted to pass"},
		{"slot: filter\nnodes: [{name: n1}]\ncases:\n- {pod: {}, want: {n1: unresolvable}, reasons: {m: x}}\n", `reasons: "m" is not one of the nodes`},
		{"slot: filter\nnodes: [{name: n1}]\ncases:\n- {pod: {}, want: skip, reasons: {n1: x}}\n", "reasons: a skipped pod has none"},
		{"slot: filter\nnodes: [{name: n1}]\ncases:\n- {pod: {}, want: skip, plugin: P}\n", "plugin: not a question for the filter slot"},
		{"slot: score\nnodes: [{name: n1}]\ncases:\n- {pod: {}, want: {n1: high}}\n", "want: {\"n1\":\"high\"}: want skip, or a map of node name to score"},
		{"slot: score\nnodes: [{name: n1}]\ncases:\n- {pod: {}, want: {n1: 1}, reasons: {n1: x}}\n", "reasons: not a question for the score slot"},
		{"slot: score\nnodes: [{name: n1}]\ncases:\n- {pod: {namespaceLabels: [a]}, want: skip}\n", "pod.namespaceLabels"},
	} {
		_, err := policytest.ParseCaseFile("x.yaml", []byte(tc.yaml))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want one containing %q", tc.yaml, err, tc.want)
		}
	}
}
