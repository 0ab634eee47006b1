package shadow

import (
	"encoding/json"
	"time"

	"github.com/wasmsched/wasmsched/abi"
	"github.com/wasmsched/wasmsched/host/policy"
)

// A sample carries the decision's inputs as one case of guest-sdk/
// policytest's case files, the records in base64 as the scheduler built
// them, and the serving policy's answer as the case's want: `wasmsched
// policy diff` runs them through two modules, and a disagreement seen in
// production becomes a regression test of the candidate.

type caseMap = map[string]any

func record(b []byte) caseMap { return caseMap{"record": b} } // []byte is base64 in JSON

func caseJSON(name string, c caseMap) string {
	c["name"] = name
	b, err := json.Marshal(c)
	if err != nil {
		return "" // only maps of strings, bytes, numbers and lists: cannot happen
	}
	return string(b)
}

// lessCase asks whether a sorts before b; the serving policy said no.
func lessCase(name string, a, b abi.PodView) string {
	return caseJSON(name, caseMap{"less": caseMap{"a": record(a.Bytes()), "b": record(b.Bytes())}, "want": false})
}

func gateCase(name string, pod abi.PodView, active abi.Gate) string {
	want := "admit"
	if active.Code != abi.GateAdmit {
		want = "wait"
	}
	return caseJSON(name, caseMap{"pod": record(pod.Bytes()), "want": want})
}

func hintCase(name string, ev abi.EventView, pod abi.PodView, active abi.Hint) string {
	want := "skip"
	if active != abi.HintSkip {
		want = "queue"
	}
	return caseJSON(name, caseMap{"event": record(ev.Bytes()), "pods": []caseMap{record(pod.Bytes())}, "want": []string{want}})
}

func victimsCase(name string, pre abi.PodView, victims []abi.Victim, order []uint32) string {
	c := caseMap{}
	if len(pre.Bytes()) > 0 {
		c["preemptor"] = record(pre.Bytes())
	}
	vs := make([]caseMap, len(victims))
	for i, v := range victims {
		vs[i] = caseMap{"name": v.Name, "namespace": v.Namespace, "uid": v.UID, "priority": v.Priority, "pdbViolating": v.PDBViolating}
		if v.StartTime != 0 {
			vs[i]["started"] = time.Unix(0, v.StartTime).UTC().Format(time.RFC3339Nano)
		}
		if v.Kind == abi.VictimGroup {
			vs[i]["group"] = v.Members
		}
	}
	want := make([]string, len(order))
	for i, j := range order {
		want[i] = victims[j].Name
	}
	c["victims"], c["want"] = vs, want
	return caseJSON(name, c)
}

func verdictName(v policy.FilterVerdict) string {
	switch v.Code {
	case abi.FilterPass:
		return "pass"
	case abi.FilterUnschedulable:
		return "unschedulable"
	}
	return "unresolvable"
}

// filterCase places pod on the node where the two disagree.
func filterCase(name string, pod abi.PodView, node policy.PlacementNode, active policy.FilterVerdict) string {
	return caseJSON(name, caseMap{"pod": record(pod.Bytes()), "nodes": []caseMap{record(node.Rec.Bytes())},
		"want": caseMap{node.Rec.Name(): verdictName(active)}})
}

// scoreCase places pod on the two nodes each ranks first.
func scoreCase(name string, pod abi.PodView, a, b policy.PlacementNode, sa, sb int64) string {
	return caseJSON(name, caseMap{"pod": record(pod.Bytes()), "nodes": []caseMap{record(a.Rec.Bytes()), record(b.Rec.Bytes())},
		"want": caseMap{a.Rec.Name(): sa, b.Rec.Name(): sb}})
}
