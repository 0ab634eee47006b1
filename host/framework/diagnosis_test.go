package framework_test

import (
	"errors"
	"fmt"
	"testing"

	. "github.com/wasmsched/wasmsched/host/framework"
	ft "github.com/wasmsched/wasmsched/host/framework/frameworktest"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"

	"github.com/wasmsched/wasmsched/abi"
)

func TestPreparePreFilter(t *testing.T) {
	tests := []struct {
		name       string
		pod        *ft.PodBuilder
		want       *Status
		wantNames  []string
		wantAbsent *Status
	}{
		{name: "no restriction", pod: ft.MakePod()},
		{name: "a term without names does not restrict",
			pod: ft.MakePod().Required(ft.NameTerm("a"), ft.LabelTerm(ft.Expr("zone", v1.NodeSelectorOpExists)))},
		{name: "names of the terms are united",
			pod:        ft.MakePod().Required(ft.NameTerm("b"), ft.NameTerm("a")),
			wantNames:  []string{"a", "b"},
			wantAbsent: &Status{Code: UnschedulableAndUnresolvable, Reasons: []string{"node(s) didn't satisfy plugin(s) [NodeAffinity]"}}},
		{name: "names within a term are intersected",
			pod: ft.MakePod().Required(v1.NodeSelectorTerm{MatchFields: []v1.NodeSelectorRequirement{
				ft.Expr("metadata.name", v1.NodeSelectorOpIn, "a", "b"), ft.Expr("metadata.name", v1.NodeSelectorOpIn, "b", "c")}}),
			wantNames:  []string{"b"},
			wantAbsent: &Status{Code: UnschedulableAndUnresolvable, Reasons: []string{"node(s) didn't satisfy plugin(s) [NodeAffinity]"}}},
		{name: "terms that agree on no name conflict",
			pod: ft.MakePod().Required(v1.NodeSelectorTerm{MatchFields: []v1.NodeSelectorRequirement{
				ft.Expr("metadata.name", v1.NodeSelectorOpIn, "a"), ft.Expr("metadata.name", v1.NodeSelectorOpIn, "b")}}),
			want: &Status{Code: UnschedulableAndUnresolvable, Plugin: abi.PluginNodeAffinity, Reasons: []string{"pod affinity terms conflict"}}},
		{name: "NotIn does not restrict",
			pod: ft.MakePod().Required(v1.NodeSelectorTerm{MatchFields: []v1.NodeSelectorRequirement{
				ft.Expr("metadata.name", v1.NodeSelectorOpNotIn, "a")}})},
		{name: "spec.nodeName",
			pod:        ft.MakePod().Node("a"),
			wantNames:  []string{"a"},
			wantAbsent: &Status{Code: UnschedulableAndUnresolvable, Reasons: []string{"node(s) didn't satisfy plugin(s) [NodeName]"}}},
		{name: "nodeName and affinity agree",
			pod:        ft.MakePod().Node("a").Required(ft.NameTerm("a"), ft.NameTerm("b")),
			wantNames:  []string{"a"},
			wantAbsent: &Status{Code: UnschedulableAndUnresolvable, Reasons: []string{"node(s) didn't satisfy plugin(s) [NodeAffinity NodeName]"}}},
		{name: "nodeName and affinity disagree",
			pod: ft.MakePod().Node("a").Required(ft.NameTerm("b")),
			want: &Status{Code: UnschedulableAndUnresolvable, Plugin: abi.PluginNodeAffinity,
				Reasons: []string{"node(s) didn't satisfy plugin(s) [NodeAffinity NodeName] simultaneously"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ps, st := prepare(tc.pod.Info(), nil)
			if diff := cmp.Diff(tc.want, st); diff != "" {
				t.Fatalf("Prepare status (-want, +got):\n%s", diff)
			}
			if st != nil {
				if ps != nil {
					t.Errorf("Prepare returned a state with a rejection")
				}
				return
			}
			if diff := cmp.Diff(tc.wantNames, ps.NodeNames()); diff != "" {
				t.Errorf("node names (-want, +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantAbsent, ps.Absent()); diff != "" {
				t.Errorf("absent status (-want, +got):\n%s", diff)
			}
		})
	}
}

func TestPrepareNil(t *testing.T) {
	if _, st := prepare(nil, nil); st == nil || st.Code != Error {
		t.Errorf("prepare(nil) = %+v, want an Error", st)
	}
}

func TestDiagnosisMessage(t *testing.T) {
	cpu := reject(Unschedulable, abi.PluginNodeResourcesFit, "Insufficient cpu")
	cpuPods := reject(Unschedulable, abi.PluginNodeResourcesFit, "Too many pods", "Insufficient cpu")
	mem := reject(Unschedulable, abi.PluginNodeResourcesFit, "Insufficient memory")
	type rejection struct {
		node string
		st   *Status
	}
	tests := []struct {
		name        string
		numAll      int
		rejections  []rejection
		preFilter   *Status
		postFilter  string
		absent      *Status
		want        string
		wantPlugins []string
		wantPending []string
	}{
		{
			name:        "two reasons",
			numAll:      3,
			rejections:  []rejection{{"n1", cpu}, {"n2", statusNodeAffinity}, {"n3", statusNodeAffinity}},
			want:        "0/3 nodes are available: 1 Insufficient cpu, 2 node(s) didn't match Pod's node affinity/selector.",
			wantPlugins: []string{"NodeAffinity", "NodeResourcesFit"},
		},
		{
			name:        "a node counts in each of its reasons",
			numAll:      2,
			rejections:  []rejection{{"n1", cpuPods}, {"n2", cpu}},
			want:        "0/2 nodes are available: 1 Too many pods, 2 Insufficient cpu.",
			wantPlugins: []string{"NodeResourcesFit"},
		},
		{
			name:        "same count sorted by reason",
			numAll:      2,
			rejections:  []rejection{{"n1", mem}, {"n2", cpu}},
			want:        "0/2 nodes are available: 1 Insufficient cpu, 1 Insufficient memory.",
			wantPlugins: []string{"NodeResourcesFit"},
		},
		{
			name:   "sorted as strings: 10 before 2",
			numAll: 12,
			rejections: func() []rejection {
				r := []rejection{{"c1", cpu}, {"c2", cpu}}
				for i := range 10 {
					r = append(r, rejection{fmt.Sprintf("t%d", i), statusTaint})
				}
				return r
			}(),
			want:        "0/12 nodes are available: 10 node(s) had untolerated taint(s), 2 Insufficient cpu.",
			wantPlugins: []string{"NodeResourcesFit", "TaintToleration"},
		},
		{
			name:        "a node recorded twice counts once",
			numAll:      1,
			rejections:  []rejection{{"n1", cpu}, {"n1", mem}},
			want:        "0/1 nodes are available: 1 Insufficient memory.",
			wantPlugins: []string{"NodeResourcesFit"},
		},
		{
			name:        "nodes no filter looked at have no reasons by default",
			numAll:      5,
			rejections:  []rejection{{"n1", statusUnschedulable}},
			want:        "0/5 nodes are available: 1 node(s) were unschedulable.",
			wantPlugins: []string{"NodeUnschedulable"},
		},
		{
			name:        "PreFilter rejection stands alone",
			numAll:      3,
			preFilter:   reject(UnschedulableAndUnresolvable, abi.PluginNodeAffinity, "pod affinity terms conflict"),
			want:        "0/3 nodes are available: pod affinity terms conflict.",
			wantPlugins: []string{"NodeAffinity"},
		},
		{
			name:        "PostFilter message follows",
			numAll:      3,
			rejections:  []rejection{{"n1", cpu}, {"n2", cpu}, {"n3", statusNodePorts}},
			postFilter:  "preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod.",
			want:        "0/3 nodes are available: 1 node(s) didn't have free ports for the requested pod ports, 2 Insufficient cpu. preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod.",
			wantPlugins: []string{"NodePorts", "NodeResourcesFit"},
		},
		{
			name:        "PreFilter and PostFilter",
			numAll:      2,
			preFilter:   reject(UnschedulableAndUnresolvable, abi.PluginNodeAffinity, "pod affinity terms conflict"),
			postFilter:  "preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.",
			want:        "0/2 nodes are available: pod affinity terms conflict. preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.",
			wantPlugins: []string{"NodeAffinity"},
		},
		{
			name:        "Pending counts as rejected and as pending",
			numAll:      1,
			rejections:  []rejection{{"n1", reject(Pending, "Example", "waiting for a device")}},
			want:        "0/1 nodes are available: 1 waiting for a device.",
			wantPlugins: []string{"Example"},
			wantPending: []string{"Example"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var d Diagnosis
			for _, r := range tc.rejections {
				d.Add(r.node, r.st)
			}
			if tc.preFilter != nil {
				d.RecordPreFilter(tc.preFilter)
			}
			d.SetPostFilterMessage(tc.postFilter)
			if diff := cmp.Diff(tc.want, d.Message(tc.numAll)); diff != "" {
				t.Errorf("Message (-want, +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantPlugins, d.UnschedulablePlugins()); diff != "" {
				t.Errorf("UnschedulablePlugins (-want, +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantPending, d.PendingPlugins()); diff != "" {
				t.Errorf("PendingPlugins (-want, +got):\n%s", diff)
			}
		})
	}
}

func TestDiagnosisNodeStatusAndErr(t *testing.T) {
	var d Diagnosis
	d.Add("n1", statusTaint)
	d.Add("n2", nil) // success: ignored
	boom := errors.New("boom")
	d.Add("n3", &Status{Code: Error, Err: boom})
	d.Add("n4", &Status{Code: Error, Err: errors.New("later")})
	if got := d.NodeStatus("n1"); got != statusTaint {
		t.Errorf("NodeStatus(n1) = %+v, want the taint status", got)
	}
	if got := d.NodeStatus("n2"); got.Code != UnschedulableAndUnresolvable || len(got.Reasons) != 0 {
		t.Errorf("NodeStatus(n2) = %+v, want upstream's default absent status", got)
	}
	if d.Len() != 1 {
		t.Errorf("Len = %d, want 1", d.Len())
	}
	if !errors.Is(d.Err(), boom) {
		t.Errorf("Err = %v, want the first error", d.Err())
	}
	d.Reset()
	if d.Len() != 0 || d.Err() != nil || d.UnschedulablePlugins() != nil {
		t.Errorf("after Reset: Len %d, Err %v, plugins %v", d.Len(), d.Err(), d.UnschedulablePlugins())
	}
	if got := d.Message(2); got != "0/2 nodes are available:" {
		t.Errorf("Message after Reset = %q", got)
	}
}

// TestDiagnosisRecordsInOrder: a node recorded twice keeps its last
// status, reads between records see what came before them, a plugin is
// recorded once per run of its statuses and again for another code, and
// Reset forgets the records and the run.
func TestDiagnosisRecordsInOrder(t *testing.T) {
	var d Diagnosis
	first := &Status{Code: Unschedulable, Plugin: "A", Reasons: []string{"first"}}
	last := &Status{Code: Unschedulable, Plugin: "A", Reasons: []string{"last"}}
	pending := &Status{Code: Pending, Plugin: "A", Reasons: []string{"waiting"}}
	d.Add("n1", first)
	if d.Len() != 1 || d.NodeStatus("n1") != first {
		t.Fatalf("after one record: Len %d, NodeStatus(n1) %+v", d.Len(), d.NodeStatus("n1"))
	}
	d.Add("n1", last)
	d.Add("n2", last)
	d.Add("n3", pending)
	if d.Len() != 3 || d.NodeStatus("n1") != last {
		t.Errorf("Len %d, NodeStatus(n1) %+v: want 3 nodes, n1 with its last status", d.Len(), d.NodeStatus("n1"))
	}
	if got := d.Message(3); got != "0/3 nodes are available: 1 waiting, 2 last." {
		t.Errorf("Message = %q", got)
	}
	if diff := cmp.Diff([]string{"A"}, d.PendingPlugins()); diff != "" {
		t.Errorf("PendingPlugins (-want, +got):\n%s", diff)
	}
	d.Reset()
	d.Add("n2", pending)
	if d.Len() != 1 || d.NodeStatus("n1").Code != UnschedulableAndUnresolvable {
		t.Errorf("after Reset and one record: Len %d, NodeStatus(n1) %+v", d.Len(), d.NodeStatus("n1"))
	}
	if diff := cmp.Diff([]string{"A"}, d.PendingPlugins()); diff != "" {
		t.Errorf("PendingPlugins after Reset (-want, +got):\n%s", diff)
	}
}

func TestStatus(t *testing.T) {
	var nilStatus *Status
	if !nilStatus.IsSuccess() || nilStatus.IsRejected() || nilStatus.Message() != "" {
		t.Errorf("nil status: success %v rejected %v message %q", nilStatus.IsSuccess(), nilStatus.IsRejected(), nilStatus.Message())
	}
	st := reject(Unschedulable, abi.PluginNodeResourcesFit, "Too many pods", "Insufficient cpu")
	if st.Message() != "Too many pods, Insufficient cpu" {
		t.Errorf("Message = %q", st.Message())
	}
	if (&Status{Code: Error, Err: errors.New("boom")}).Message() != "boom" {
		t.Errorf("Error message without reasons is not the error's")
	}
	for c, want := range map[Code]string{Success: "Success", Error: "Error", Unschedulable: "Unschedulable",
		UnschedulableAndUnresolvable: "UnschedulableAndUnresolvable", Pending: "Pending", Code(42): "Unknown"} {
		if c.String() != want {
			t.Errorf("Code(%d).String() = %q, want %q", int(c), c.String(), want)
		}
	}
}
