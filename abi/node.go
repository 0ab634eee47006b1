package abi

// Node record layout:
//
//	 8 u32 flags (nodeUnschedulable)   12 u32 reserved
//	16 name str  24 labels [kv]  32 taints [taint]
//	40 allocatable [quantity]  48 requested [quantity]
//	56 images [image]                                   (minor 3)
//
//	taint 24: key str, value str, u32 effect, u32 reserved
//	image 16: name str, i64 size in bytes
//
// requested is the sum of the requests of the pods the scheduler has on the
// node (assumed pods included), with "pods" counting them.
const (
	nodeFlags       = 8
	nodeName        = 16
	nodeLabels      = 24
	nodeTaints      = 32
	nodeAllocatable = 40
	nodeRequested   = 48
	nodeImages      = 56
	nodeFixed       = 64

	nodeUnschedulable = 1 << 0

	taintSize = 24
	imageSize = 16
)

// Node is what a policy sees of a node.
type Node struct {
	Name          string
	Unschedulable bool
	Labels        []KV
	Taints        []Taint
	Allocatable   []Quantity
	Requested     []Quantity
	// Images are the container images on the node, one entry per name
	// (status.images: every name of an image, with its size). The host
	// fills them in placement node records only (ABI minor 3).
	Images []Image
}

// Image is a container image name on a node and the image's size.
type Image struct {
	Name string
	Size int64
}

// Taint on a node.
type Taint struct {
	Key, Value string
	Effect     TaintEffect
}

// AppendNode appends the record of n to dst.
func AppendNode(dst []byte, n *Node) []byte {
	b := beginRecord(dst, TagNode, nodeFixed)
	b.putU32(nodeFlags, boolBit(n.Unschedulable, nodeUnschedulable))
	b.str(nodeName, n.Name)
	b.appendKVs(b.start+nodeLabels, n.Labels)
	at := b.list(nodeTaints, len(n.Taints), taintSize)
	for i := range n.Taints {
		e := at + i*taintSize
		b.strAt(e, n.Taints[i].Key)
		b.strAt(e+8, n.Taints[i].Value)
		b.elemU32(e+16, uint32(n.Taints[i].Effect))
	}
	b.appendQuantities(b.start+nodeAllocatable, n.Allocatable)
	b.appendQuantities(b.start+nodeRequested, n.Requested)
	at = b.list(nodeImages, len(n.Images), imageSize)
	for i := range n.Images {
		e := at + i*imageSize
		b.strAt(e, n.Images[i].Name)
		b.elemI64(e+8, n.Images[i].Size)
	}
	return b.finish()
}

// NodeView reads a node record in place (strings alias the bytes).
type NodeView struct{ r rec }

// ReadNode checks the record header at the start of b and returns a view.
func ReadNode(b []byte) (NodeView, error) {
	r, err := readRecord(b, TagNode)
	return NodeView{r}, err
}

func (n NodeView) Bytes() []byte       { return n.r.b }
func (n NodeView) Name() string        { return n.r.str(nodeName) }
func (n NodeView) Unschedulable() bool { return n.r.u32(nodeFlags)&nodeUnschedulable != 0 }
func (n NodeView) Labels() KVList      { return KVList{n.r.list(nodeLabels, kvSize)} }
func (n NodeView) Taints() TaintList   { return TaintList{n.r.list(nodeTaints, taintSize)} }
func (n NodeView) Allocatable() QuantityList {
	return QuantityList{n.r.list(nodeAllocatable, quantitySize)}
}
func (n NodeView) Requested() QuantityList {
	return QuantityList{n.r.list(nodeRequested, quantitySize)}
}
func (n NodeView) Images() ImageList { return ImageList{n.r.list(nodeImages, imageSize)} }

// Decode copies the record into dst, reusing its slices.
func (n NodeView) Decode(dst *Node) error {
	r := n.r
	bud := newBudget(r)
	if err := checkRefs(r, TagNode, &bud, strRefs{{"name", nodeName}}); err != nil {
		return err
	}
	dst.Name = clone(n.Name())
	dst.Unschedulable = n.Unschedulable()
	var err error
	if dst.Labels, err = decodeKVs(r, &bud, nodeLabels, "labels", dst.Labels); err != nil {
		return err
	}
	tl, err := checkedList(r, &bud, nodeTaints, taintSize, "taints", 0, 8)
	if err != nil {
		return err
	}
	dst.Taints = dst.Taints[:0]
	for i := 0; i < tl.len(); i++ {
		dst.Taints = append(dst.Taints, Taint{Key: clone(tl.str(i, 0)), Value: clone(tl.str(i, 8)), Effect: TaintEffect(tl.u32(i, 16))})
	}
	if dst.Allocatable, err = decodeQuantities(r, &bud, nodeAllocatable, "allocatable", dst.Allocatable); err != nil {
		return err
	}
	if dst.Requested, err = decodeQuantities(r, &bud, nodeRequested, "requested", dst.Requested); err != nil {
		return err
	}
	il, err := checkedList(r, &bud, nodeImages, imageSize, "images", 0)
	if err != nil {
		return err
	}
	dst.Images = dst.Images[:0]
	for i := 0; i < il.len(); i++ {
		dst.Images = append(dst.Images, Image{Name: clone(il.str(i, 0)), Size: il.i64(i, 8)})
	}
	return nil
}

// ImageList is a node's images.
type ImageList struct{ l list }

func (l ImageList) Len() int { return l.l.len() }
func (l ImageList) At(i int) Image {
	return Image{Name: l.l.str(i, 0), Size: l.l.i64(i, 8)}
}

// Has reports whether the node has an image of that name.
func (l ImageList) Has(name string) bool {
	for i := range l.l.len() {
		if l.l.str(i, 0) == name {
			return true
		}
	}
	return false
}

// TaintList is a node's taints.
type TaintList struct{ l list }

func (t TaintList) Len() int { return t.l.len() }
func (t TaintList) At(i int) Taint {
	return Taint{Key: t.l.str(i, 0), Value: t.l.str(i, 8), Effect: TaintEffect(t.l.u32(i, 16))}
}

// PodGroup record layout:
//
//	 8 i32 minCount  12 i32 priority  16 u32 disruption mode
//	20 u32 flags (groupPreemptNever)  24 i32 members  28 u32 reserved
//	32 namespace str  40 name str
const (
	groupMinCount  = 8
	groupPriority  = 12
	groupDisrupt   = 16
	groupFlags     = 20
	groupMembers   = 24
	groupNamespace = 32
	groupName      = 40
	groupFixed     = 48

	groupPreemptNever = 1 << 0
)

// PodGroup is what a policy sees of a scheduling.k8s.io PodGroup.
type PodGroup struct {
	Namespace, Name string
	MinCount        int32
	Priority        int32
	PreemptNever    bool
	DisruptionMode  DisruptionMode
	// Members is the number of the group's pods the scheduler knows about.
	Members int32
}

// AppendPodGroup appends the record of g to dst.
func AppendPodGroup(dst []byte, g *PodGroup) []byte {
	b := beginRecord(dst, TagPodGroup, groupFixed)
	b.putU32(groupMinCount, uint32(g.MinCount))
	b.putU32(groupPriority, uint32(g.Priority))
	b.putU32(groupDisrupt, uint32(g.DisruptionMode))
	b.putU32(groupFlags, boolBit(g.PreemptNever, groupPreemptNever))
	b.putU32(groupMembers, uint32(g.Members))
	b.str(groupNamespace, g.Namespace)
	b.str(groupName, g.Name)
	return b.finish()
}

// PodGroupView reads a pod group record in place.
type PodGroupView struct{ r rec }

// ReadPodGroup checks the record header at the start of b and returns a view.
func ReadPodGroup(b []byte) (PodGroupView, error) {
	r, err := readRecord(b, TagPodGroup)
	return PodGroupView{r}, err
}

func (g PodGroupView) Bytes() []byte     { return g.r.b }
func (g PodGroupView) Namespace() string { return g.r.str(groupNamespace) }
func (g PodGroupView) Name() string      { return g.r.str(groupName) }
func (g PodGroupView) MinCount() int32   { return g.r.i32(groupMinCount) }
func (g PodGroupView) Priority() int32   { return g.r.i32(groupPriority) }
func (g PodGroupView) Members() int32    { return g.r.i32(groupMembers) }
func (g PodGroupView) PreemptNever() bool {
	return g.r.u32(groupFlags)&groupPreemptNever != 0
}
func (g PodGroupView) DisruptionMode() DisruptionMode {
	return DisruptionMode(g.r.u32(groupDisrupt))
}

// Decode copies the record into dst.
func (g PodGroupView) Decode(dst *PodGroup) error {
	bud := newBudget(g.r)
	if err := checkRefs(g.r, TagPodGroup, &bud, strRefs{{"namespace", groupNamespace}, {"name", groupName}}); err != nil {
		return err
	}
	*dst = PodGroup{
		Namespace: clone(g.Namespace()), Name: clone(g.Name()), MinCount: g.MinCount(),
		Priority: g.Priority(), PreemptNever: g.PreemptNever(), DisruptionMode: g.DisruptionMode(),
		Members: g.Members(),
	}
	return nil
}
