package logic

import "github.com/wasmsched/wasmsched/abi"

// bindAllHostIP is what an empty hostIP means (upstream's DefaultBindAllHostIP).
const bindAllHostIP = "0.0.0.0"

// nodePortsAfterAssignedPodDelete mirrors nodeports'
// isSchedulableAfterAssignedPodDeleted: Queue when the deleted pod was bound
// and held a host port that conflicts with one the pod wants.
func nodePortsAfterAssignedPodDelete(ev abi.EventView, p abi.PodView) (abi.Hint, error) {
	deleted, ok := ev.OldPod()
	if !ok {
		return abi.HintQueue, errNoOldPod
	}
	if deleted.NodeName() == "" {
		return abi.HintSkip, nil
	}
	held := deleted.HostPorts()
	if held.Len() == 0 {
		return abi.HintSkip, nil
	}
	return queueIf(portsConflict(p.HostPorts(), held)), nil
}

// portsConflict is !fitsPorts(want, inUse) of upstream: some wanted port
// conflicts with one in use (HostPortInfo.CheckConflict).
func portsConflict(want, inUse abi.HostPortList) bool {
	for i := range want.Len() {
		w := want.At(i)
		for j := range inUse.Len() {
			if portConflict(w, inUse.At(j)) {
				return true
			}
		}
	}
	return false
}

// portConflict reports whether wanting w conflicts with u being in use: same
// port and protocol, and the same address or either bound to all addresses.
// A port <= 0 is no host port; an unknown protocol matches nothing.
func portConflict(w, u abi.HostPort) bool {
	if w.Port <= 0 || u.Port <= 0 || w.Port != u.Port ||
		w.Protocol != u.Protocol || w.Protocol == abi.ProtocolUnknown {
		return false
	}
	wip, uip := hostIP(w.HostIP), hostIP(u.HostIP)
	return wip == bindAllHostIP || uip == bindAllHostIP || wip == uip
}

func hostIP(ip string) string {
	if ip == "" {
		return bindAllHostIP
	}
	return ip
}
