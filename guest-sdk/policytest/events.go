package policytest

import "github.com/wasmsched/wasmsched/abi"

// Events for QueueingHint tests, encoded as the host sends them. An update
// takes the actions that describe it (e.g. abi.ActionUpdateNodeAllocatable).

// MakeEvent encodes e and returns a view of the record.
func MakeEvent(e *abi.Event) abi.EventView {
	v, err := abi.ReadEvent(abi.AppendEvent(nil, e))
	if err != nil {
		panic("policytest: encoding an event: " + err.Error())
	}
	return v
}

func pod(p *abi.Pod) []byte {
	if p == nil {
		return nil
	}
	return abi.AppendPod(nil, p)
}

func node(n *abi.Node) []byte {
	if n == nil {
		return nil
	}
	return abi.AppendNode(nil, n)
}

func group(g *abi.PodGroup) []byte {
	if g == nil {
		return nil
	}
	return abi.AppendPodGroup(nil, g)
}

func event(res abi.EventResource, act abi.ActionType, old, new []byte) abi.EventView {
	return MakeEvent(&abi.Event{Resource: res, Action: act, Old: old, New: new})
}

// NodeAdd is the event of node n being added.
func NodeAdd(n *abi.Node) abi.EventView { return event(abi.ResourceNode, abi.ActionAdd, nil, node(n)) }

// NodeUpdate is the event of a node changing from old to new.
func NodeUpdate(old, new *abi.Node, actions abi.ActionType) abi.EventView {
	return event(abi.ResourceNode, actions, node(old), node(new))
}

// NodeDelete is the event of node n being deleted.
func NodeDelete(n *abi.Node) abi.EventView {
	return event(abi.ResourceNode, abi.ActionDelete, node(n), nil)
}

// PodAdd is the event of an assigned (bound) pod being added.
func PodAdd(p *abi.Pod) abi.EventView { return event(abi.ResourcePod, abi.ActionAdd, nil, pod(p)) }

// PodUpdate is the event of an assigned pod changing from old to new.
func PodUpdate(old, new *abi.Pod, actions abi.ActionType) abi.EventView {
	return event(abi.ResourcePod, actions, pod(old), pod(new))
}

// PodDelete is the event of an assigned pod being deleted.
func PodDelete(p *abi.Pod) abi.EventView {
	return event(abi.ResourcePod, abi.ActionDelete, pod(p), nil)
}

// UnscheduledPodAdd is the event of a pod not yet bound being added.
func UnscheduledPodAdd(p *abi.Pod) abi.EventView {
	return event(abi.ResourceUnscheduledPod, abi.ActionAdd, nil, pod(p))
}

// UnscheduledPodUpdate is the event of a pod not yet bound changing.
func UnscheduledPodUpdate(old, new *abi.Pod, actions abi.ActionType) abi.EventView {
	return event(abi.ResourceUnscheduledPod, actions, pod(old), pod(new))
}

// UnscheduledPodDelete is the event of a pod not yet bound being deleted.
func UnscheduledPodDelete(p *abi.Pod) abi.EventView {
	return event(abi.ResourceUnscheduledPod, abi.ActionDelete, pod(p), nil)
}

// PodGroupAdd is the event of a pod group being added.
func PodGroupAdd(g *abi.PodGroup) abi.EventView {
	return event(abi.ResourcePodGroup, abi.ActionAdd, nil, group(g))
}

// PodGroupUpdate is the event of a pod group changing from old to new.
func PodGroupUpdate(old, new *abi.PodGroup, actions abi.ActionType) abi.EventView {
	return event(abi.ResourcePodGroup, actions, group(old), group(new))
}

// PodGroupDelete is the event of a pod group being deleted.
func PodGroupDelete(g *abi.PodGroup) abi.EventView {
	return event(abi.ResourcePodGroup, abi.ActionDelete, group(g), nil)
}

func storage(o *abi.StorageObject) []byte {
	if o == nil {
		return nil
	}
	return abi.AppendStorage(nil, o)
}

// StorageAdd is the event of a storage object of kind res (a
// PersistentVolume, PersistentVolumeClaim, StorageClass, CSINode, CSIDriver,
// CSIStorageCapacity or VolumeAttachment; or, minor 2, a ResourceClaim,
// ResourceSlice, DeviceClass or DeviceTaintRule) being added.
func StorageAdd(res abi.EventResource, o *abi.StorageObject) abi.EventView {
	return event(res, abi.ActionAdd, nil, storage(o))
}

// StorageUpdate is the event of a storage object changing from old to new;
// the host sends abi.ActionUpdateOther for every change.
func StorageUpdate(res abi.EventResource, old, new *abi.StorageObject) abi.EventView {
	return event(res, abi.ActionUpdateOther, storage(old), storage(new))
}

// StorageDelete is the event of a storage object being deleted.
func StorageDelete(res abi.EventResource, o *abi.StorageObject) abi.EventView {
	return event(res, abi.ActionDelete, storage(o), nil)
}
