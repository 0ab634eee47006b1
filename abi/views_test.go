package abi_test

import (
	"github.com/wasmsched/wasmsched/abi"
)

// The *FromView helpers build a struct from a view's accessors alone, calling
// every accessor, each list's At on every index and just outside the range,
// and its lookups. The golden tests compare the result with the encoded value;
// the fuzz tests call them on arbitrary bytes, where they must not panic.
// Lookups (Get, Index, Has) are cross-checked against At for the first
// lookupChecks elements of each list: each lookup is a linear scan, and on
// crafted records with overlapping nested lists checking every element would
// make one fuzz input cost billions of string compares.
//
// The strings of the result alias the view's bytes.

const lookupChecks = 4

func podFromView(v abi.PodView) abi.Pod {
	_ = v.Bytes()
	p := abi.Pod{
		UID: v.UID(), Namespace: v.Namespace(), Name: v.Name(), NodeName: v.NodeName(),
		Priority: v.Priority(), PreemptNever: v.PreemptNever(),
		CreationTime: v.CreationTime(), QueuedTime: v.QueuedTime(),
		InitialAttemptTime: v.InitialAttemptTime(), BackoffExpiry: v.BackoffExpiry(),
		Attempts: v.Attempts(), LastFailureError: v.LastFailureError(),
		UnschedulablePlugins: strsFromView(v.UnschedulablePlugins()),
		PendingPlugins:       strsFromView(v.PendingPlugins()),
		Group: abi.PodGroupRef{
			Name: v.GroupName(), MinCount: v.GroupMinCount(), Priority: v.GroupPriority(),
			DisruptionMode: v.GroupDisruption(), Members: v.GroupMembers(),
		},
		Labels:          kvsFromView(v.Labels()),
		Requests:        quantitiesFromView(v.Requests()),
		SchedulingGates: strsFromView(v.SchedulingGates()),
		NodeSelector:    kvsFromView(v.NodeSelector()),
	}
	tl := v.Tolerations()
	for i := -1; i <= tl.Len(); i++ {
		t := tl.At(i)
		if i < 0 || i == tl.Len() {
			must(t == abi.Toleration{}, "Tolerations().At out of range")
			continue
		}
		p.Tolerations = append(p.Tolerations, t)
	}
	hl := v.HostPorts()
	for i := -1; i <= hl.Len(); i++ {
		h := hl.At(i)
		if i < 0 || i == hl.Len() {
			must(h == abi.HostPort{}, "HostPorts().At out of range")
			continue
		}
		p.HostPorts = append(p.HostPorts, h)
	}
	terms := v.RequiredAffinity()
	for i := -1; i <= terms.Len(); i++ {
		exprs, fields := requirementsFromView(terms.MatchExpressions(i)), requirementsFromView(terms.MatchFields(i))
		if i < 0 || i == terms.Len() {
			must(exprs == nil && fields == nil, "RequiredAffinity() term out of range")
			continue
		}
		p.RequiredAffinity = append(p.RequiredAffinity, abi.NodeSelectorTerm{MatchExpressions: exprs, MatchFields: fields})
	}
	p.Claims, p.EphemeralClaims, p.VolumeDrivers = strsFromView(v.Claims()), strsFromView(v.EphemeralClaims()), strsFromView(v.VolumeDrivers())
	p.ResourceClaims = strsFromView(v.ResourceClaims())
	p.NamespaceLabels, p.OwnerKind = kvsFromView(v.NamespaceLabels()), v.OwnerKind()
	p.PodAffinity, p.PodAntiAffinity = podTermsFromView(v.PodAffinity()), podTermsFromView(v.PodAntiAffinity())
	p.PreferredPodAffinity = podTermsFromView(v.PreferredPodAffinity())
	p.PreferredPodAntiAffinity = podTermsFromView(v.PreferredPodAntiAffinity())
	sl := v.SpreadConstraints()
	for i := -1; i <= sl.Len(); i++ {
		c := abi.SpreadConstraint{
			MaxSkew: sl.MaxSkew(i), TopologyKey: sl.TopologyKey(i), WhenUnsatisfiable: sl.WhenUnsatisfiable(i),
			Selector: requirementsFromView(sl.Selector(i)), NoSelector: sl.NoSelector(i),
			MatchLabelKeys: strsFromView(sl.MatchLabelKeys(i)), MinDomains: sl.MinDomains(i),
			NodeAffinityPolicy: sl.NodeAffinityPolicy(i), NodeTaintsPolicy: sl.NodeTaintsPolicy(i),
		}
		if i < 0 || i == sl.Len() {
			must(c.Selector == nil && c.MatchLabelKeys == nil && c.TopologyKey == "" && c.MaxSkew == 0, "SpreadConstraints() out of range")
			continue
		}
		p.SpreadConstraints = append(p.SpreadConstraints, c)
	}
	added := v.AddedAffinity()
	for i := 0; i < added.Len(); i++ {
		p.AddedAffinity = append(p.AddedAffinity, abi.NodeSelectorTerm{
			MatchExpressions: requirementsFromView(added.MatchExpressions(i)), MatchFields: requirementsFromView(added.MatchFields(i))})
	}
	p.HasAddedAffinity = v.HasAddedAffinity()
	p.RequiredFeatures = strsFromView(v.RequiredFeatures())
	_ = v.TermsKnown()
	return p
}

func podTermsFromView(l abi.PodTermList) []abi.PodAffinityTerm {
	var out []abi.PodAffinityTerm
	for i := -1; i <= l.Len(); i++ {
		t := abi.PodAffinityTerm{
			Selector: requirementsFromView(l.Selector(i)), NoSelector: l.NoSelector(i),
			Namespaces: strsFromView(l.Namespaces(i)), NamespaceSelector: requirementsFromView(l.NamespaceSelector(i)),
			NoNamespaceSelector: l.NoNamespaceSelector(i), TopologyKey: l.TopologyKey(i), Weight: l.Weight(i),
		}
		if i < 0 || i == l.Len() {
			must(t.Selector == nil && t.Namespaces == nil && t.TopologyKey == "" && t.Weight == 0, "pod term out of range")
			continue
		}
		out = append(out, t)
	}
	return out
}

func storageFromView(v abi.StorageView) abi.StorageObject {
	_ = v.Bytes()
	capacity, has := v.Capacity()
	o := abi.StorageObject{
		Namespace: v.Namespace(), Name: v.Name(), StorageClass: v.StorageClass(), VolumeName: v.VolumeName(),
		ClaimNamespace: v.ClaimNamespace(), ClaimName: v.ClaimName(), NodeName: v.NodeName(),
		Driver: v.Driver(), MigratedPlugins: v.MigratedPlugins(), Phase: v.Phase(), BindingMode: v.BindingMode(),
		NodeAffinity: v.NodeAffinity(), CapacityTracking: v.CapacityTracking(), HasCapacity: has, Capacity: capacity,
		Labels: kvsFromView(v.Labels()), Allocated: v.Allocated(), ReservedFor: v.ReservedFor(), Pool: v.Pool(),
		DeviceClasses: strsFromView(v.DeviceClasses()),
	}
	terms := v.Topology()
	for i := -1; i <= terms.Len(); i++ {
		exprs, fields := requirementsFromView(terms.MatchExpressions(i)), requirementsFromView(terms.MatchFields(i))
		if i < 0 || i == terms.Len() {
			must(exprs == nil && fields == nil, "Topology() term out of range")
			continue
		}
		o.Topology = append(o.Topology, abi.NodeSelectorTerm{MatchExpressions: exprs, MatchFields: fields})
	}
	dl := v.Drivers()
	for i := -1; i <= dl.Len(); i++ {
		d := dl.At(i)
		if i < 0 || i == dl.Len() {
			must(d == abi.CSIDriverLimit{}, "Drivers().At out of range")
			continue
		}
		must(dl.Allocatable(d.Name) == d.Allocatable || d.Name == "", "Drivers().Allocatable disagrees with At")
		o.Drivers = append(o.Drivers, d)
	}
	return o
}

func nodeFromView(v abi.NodeView) abi.Node {
	_ = v.Bytes()
	n := abi.Node{
		Name: v.Name(), Unschedulable: v.Unschedulable(), Labels: kvsFromView(v.Labels()),
		Allocatable: quantitiesFromView(v.Allocatable()), Requested: quantitiesFromView(v.Requested()),
	}
	tl := v.Taints()
	for i := -1; i <= tl.Len(); i++ {
		t := tl.At(i)
		if i < 0 || i == tl.Len() {
			must(t == abi.Taint{}, "Taints().At out of range")
			continue
		}
		n.Taints = append(n.Taints, t)
	}
	il := v.Images()
	for i := -1; i <= il.Len(); i++ {
		img := il.At(i)
		if i < 0 || i == il.Len() {
			must(img == abi.Image{}, "Images().At out of range")
			continue
		}
		n.Images = append(n.Images, img)
		if i < lookupChecks {
			must(il.Has(img.Name), "Images().Has disagrees with At")
		}
	}
	return n
}

func podGroupFromView(v abi.PodGroupView) abi.PodGroup {
	_ = v.Bytes()
	return abi.PodGroup{
		Namespace: v.Namespace(), Name: v.Name(), MinCount: v.MinCount(), Priority: v.Priority(),
		PreemptNever: v.PreemptNever(), DisruptionMode: v.DisruptionMode(), Members: v.Members(),
	}
}

// eventObjects reads every nested object accessor of an event and walks what
// it finds.
func eventObjects(v abi.EventView) {
	_, _, _ = v.Bytes(), v.Resource(), v.Action()
	_, _ = v.OldBytes(), v.NewBytes()
	for _, f := range []func() (abi.PodView, bool){v.OldPod, v.NewPod} {
		if p, ok := f(); ok {
			podFromView(p)
		}
	}
	for _, f := range []func() (abi.NodeView, bool){v.OldNode, v.NewNode} {
		if n, ok := f(); ok {
			nodeFromView(n)
		}
	}
	for _, f := range []func() (abi.PodGroupView, bool){v.OldPodGroup, v.NewPodGroup} {
		if g, ok := f(); ok {
			podGroupFromView(g)
		}
	}
	for _, f := range []func() (abi.StorageView, bool){v.OldStorage, v.NewStorage} {
		if o, ok := f(); ok {
			storageFromView(o)
		}
	}
}

func strsFromView(l abi.StrList) []string {
	var out []string
	for i := -1; i <= l.Len(); i++ {
		s := l.At(i)
		if i < 0 || i == l.Len() {
			must(s == "", "StrList.At out of range")
			continue
		}
		out = append(out, s)
		if i < lookupChecks {
			idx := l.Index(s)
			must(idx >= 0 && idx <= i && l.At(idx) == s && l.Has(s), "StrList.Index disagrees with At")
		}
	}
	return out
}

func kvsFromView(l abi.KVList) []abi.KV {
	var out []abi.KV
	for i := -1; i <= l.Len(); i++ {
		k, v := l.At(i)
		if i < 0 || i == l.Len() {
			must(k == "" && v == "", "KVList.At out of range")
			continue
		}
		out = append(out, abi.KV{Key: k, Value: v})
		if i < lookupChecks { // Get returns the first entry with the key
			got, ok := l.Get(k)
			must(ok && got == firstKV(out, k), "KVList.Get disagrees with At")
		}
	}
	return out
}

func firstKV(kvs []abi.KV, key string) string {
	for _, kv := range kvs {
		if kv.Key == key {
			return kv.Value
		}
	}
	return ""
}

func quantitiesFromView(l abi.QuantityList) []abi.Quantity {
	var out []abi.Quantity
	for i := -1; i <= l.Len(); i++ {
		name, v := l.At(i)
		if i < 0 || i == l.Len() {
			must(name == "" && v == 0, "QuantityList.At out of range")
			continue
		}
		out = append(out, abi.Quantity{Name: name, Value: v})
		if i < lookupChecks { // Get returns the first entry with the name
			want := int64(0)
			for _, q := range out {
				if q.Name == name {
					want = q.Value
					break
				}
			}
			must(l.Get(name) == want, "QuantityList.Get disagrees with At")
		}
	}
	return out
}

func requirementsFromView(l abi.RequirementList) []abi.Requirement {
	var out []abi.Requirement
	for i := -1; i <= l.Len(); i++ {
		r := abi.Requirement{Key: l.Key(i), Operator: l.Operator(i), Values: strsFromView(l.Values(i))}
		if i < 0 || i == l.Len() {
			must(r.Key == "" && r.Operator == 0 && r.Values == nil, "RequirementList out of range")
			continue
		}
		out = append(out, r)
	}
	return out
}

// must panics when a view contradicts itself: the fuzzer reports the
// panic with its input, and so do the golden tests.
func must(ok bool, what string) {
	if !ok {
		panic("abi view: " + what)
	}
}
