package logic

import (
	"strconv"
	"unicode/utf8"

	"github.com/wasmsched/wasmsched/abi"
)

// Plugin names the gate in a held pod's condition; a QueueingHint
// registered for it (pod added, PodGroup added or updated) requeues the pod.
const Plugin = abi.PluginGangScheduling

// PreEnqueue admits a pod that belongs to no PodGroup, and a member of a
// group once at least the group's minCount pods exist (GroupMembers counts
// the group's pods the scheduler knows, this one included); it holds any
// other member. This is upstream's GangScheduling.PreEnqueue
// (pkg/scheduler/framework/plugins/gangscheduling, without CompositePodGroup
// hierarchies): nothing to do without spec.schedulingGroup; held while the
// PodGroup object does not exist; held while AllPodsCount < minCount.
//
// A minCount of 0 is the host's "PodGroup not seen yet" (the API requires a
// gang's minCount to be at least 1), so the pod is held until the PodGroup
// appears, as upstream holds it. Any other minCount, even a negative one the
// API cannot produce, is compared as upstream compares it.
//
// Reasons name the group as "namespace/name", quoted, and never exceed
// abi.MaxReasonLen bytes.
func PreEnqueue(p abi.PodView) abi.Gate {
	name := p.GroupName()
	if name == "" {
		return abi.Gate{Code: abi.GateAdmit}
	}
	minCount, members := p.GroupMinCount(), p.GroupMembers()
	switch {
	case minCount == 0:
		return wait("waiting for pod group ", groupKey(p.Namespace(), name),
			" to appear: the scheduler has not seen the PodGroup object")
	case members < minCount:
		return wait("waiting for pod group ", groupKey(p.Namespace(), name),
			" to reach its minCount: "+strconv.Itoa(int(members))+" of "+strconv.Itoa(int(minCount))+" pods exist")
	}
	return abi.Gate{Code: abi.GateAdmit}
}

func groupKey(namespace, name string) string {
	if namespace == "" {
		return name
	}
	return namespace + "/" + name
}

// ellipsis ends a quoted group key cut to fit the reason.
const ellipsis = `..."`

// wait holds the pod with the reason prefix + quoted key + suffix. The key
// is quoted (strconv.Quote: escapes make any bytes valid UTF-8, and quotes
// or newlines in a name cannot forge the rest of the message) and cut, on a
// rune boundary, so that the reason fits abi.MaxReasonLen with the counts in
// the suffix intact.
func wait(prefix, key, suffix string) abi.Gate {
	q := strconv.Quote(key)
	if room := abi.MaxReasonLen - len(prefix) - len(suffix); len(q) > room {
		n := max(room-len(ellipsis), 1) // keep the opening quote
		for n > 1 && !utf8.RuneStart(q[n]) {
			n--
		}
		q = q[:n] + ellipsis
	}
	return abi.Gate{Code: abi.GateWait, Plugin: Plugin, Reason: prefix + q + suffix}
}
