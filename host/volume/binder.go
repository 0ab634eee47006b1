package volume

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	storagelisters "k8s.io/client-go/listers/storage/v1"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/component-helpers/storage/ephemeral"
	storagehelpers "k8s.io/component-helpers/storage/volume"
	csitrans "k8s.io/csi-translation-lib"
	csiplugins "k8s.io/csi-translation-lib/plugins"
	"k8s.io/klog/v2"
)

// Upstream's reasons for a node the pod's claims cannot use (binder.go's
// ConflictReasons), in the order FindPodVolumes reports them.
const (
	ReasonNodeConflict   = "node(s) didn't match PersistentVolume's node affinity"
	ReasonBindConflict   = "node(s) didn't find available persistent volumes to bind"
	ReasonNotEnoughSpace = "node(s) did not have enough free storage"
	ReasonPVNotExist     = "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)"
	// ReasonUnboundImmediate rejects a pod before any node: a claim of
	// Immediate binding (or pre-bound to a PV) is not bound yet, which the
	// PV controller, not the scheduler, must do.
	ReasonUnboundImmediate = "pod has unbound immediate PersistentVolumeClaims"
)

// DefaultBindTimeout is upstream's default VolumeBindingArgs.bindTimeoutSeconds.
const DefaultBindTimeout = 600 * time.Second

// Options are what a Binder reads and writes besides its caches. nil
// listers read as empty; a nil Client cannot bind (Bind fails with a
// clear error when it has something to write).
type Options struct {
	Client     kubernetes.Interface
	Classes    storagelisters.StorageClassLister
	CSINodes   storagelisters.CSINodeLister
	CSIDrivers storagelisters.CSIDriverLister
	Capacities storagelisters.CSIStorageCapacityLister
	// Nodes and Pods, when set, let Bind's wait see the node's current
	// labels and notice a deleted pod, as upstream's; without them it
	// checks against the node the pod was filtered on and waits for a
	// deleted pod's claims until the timeout.
	Nodes corelisters.NodeLister
	Pods  corelisters.PodLister
	// BindTimeout bounds Bind's wait for the claims to be bound
	// (VolumeBindingArgs.bindTimeoutSeconds, DefaultBindTimeout by
	// default); 0 gives the claims one look.
	BindTimeout time.Duration
	// PollInterval is how often Bind's wait looks again when no informer
	// event woke it (upstream polls every second); 0 is one second.
	PollInterval time.Duration
}

// Binder is upstream's volumeBinder: it sorts a pod's claims, finds per
// node the PersistentVolumes its unbound WaitForFirstConsumer claims can
// bind to or whether they can be provisioned there, assumes the choice in
// the caches at Reserve, and at PreBind writes it to the API and waits
// until the PV controller (and a provisioner) completed the binding. It is
// safe for concurrent use; FindPodVolumes runs in parallel over nodes.
type Binder struct {
	caches     *Caches
	client     kubernetes.Interface
	classes    storagelisters.StorageClassLister
	csiNodes   storagelisters.CSINodeLister
	drivers    storagelisters.CSIDriverLister
	capacities storagelisters.CSIStorageCapacityLister
	nodes      corelisters.NodeLister
	pods       corelisters.PodLister
	timeout    time.Duration
	poll       time.Duration
	translator csitrans.CSITranslator
}

// New is a Binder over caches.
func New(caches *Caches, o Options) *Binder {
	empty := func() toolscache.Indexer {
		return toolscache.NewIndexer(toolscache.MetaNamespaceKeyFunc, toolscache.Indexers{})
	}
	b := &Binder{caches: caches, client: o.Client, classes: o.Classes, csiNodes: o.CSINodes, drivers: o.CSIDrivers,
		capacities: o.Capacities, nodes: o.Nodes, pods: o.Pods, timeout: o.BindTimeout, poll: o.PollInterval,
		translator: csitrans.New()}
	if b.classes == nil {
		b.classes = storagelisters.NewStorageClassLister(empty())
	}
	if b.csiNodes == nil {
		b.csiNodes = storagelisters.NewCSINodeLister(empty())
	}
	if b.drivers == nil {
		b.drivers = storagelisters.NewCSIDriverLister(empty())
	}
	if b.capacities == nil {
		b.capacities = storagelisters.NewCSIStorageCapacityLister(empty())
	}
	if b.poll <= 0 {
		b.poll = time.Second
	}
	return b
}

// Caches are the binder's caches.
func (b *Binder) Caches() *Caches { return b.caches }

// PodClaims are a pod's claims sorted for scheduling (upstream's
// PodVolumeClaims): bound ones, unbound ones of WaitForFirstConsumer
// classes (the scheduler's to place), unbound ones of Immediate binding or
// pre-bound to a PV (the PV controller's: the pod waits), and per class of
// the delayed ones the PersistentVolumes of that class as the caches saw
// them when the claims were sorted.
type PodClaims struct {
	Bound, Delayed, Immediate []*v1.PersistentVolumeClaim
	pvsByClass                map[string][]*v1.PersistentVolume
}

// claimName is the name of the claim vol uses, and whether it is a
// generic ephemeral volume's; "" for a volume without a claim.
func claimName(pod *v1.Pod, vol *v1.Volume) (string, bool) {
	switch {
	case vol.PersistentVolumeClaim != nil:
		return vol.PersistentVolumeClaim.ClaimName, false
	case vol.Ephemeral != nil:
		return ephemeral.VolumeClaimName(pod, vol), true
	}
	return "", false
}

// HasClaims reports whether pod uses a PersistentVolumeClaim, directly or
// through a generic ephemeral volume. It does not allocate.
func HasClaims(pod *v1.Pod) bool {
	for i := range pod.Spec.Volumes {
		if vs := &pod.Spec.Volumes[i].VolumeSource; vs.PersistentVolumeClaim != nil || vs.Ephemeral != nil {
			return true
		}
	}
	return false
}

// ErrRejected marks an error of Claims that rejects the pod before any node
// (UnschedulableAndUnresolvable, with the error's text as the reason)
// rather than failing the cycle.
var ErrRejected = errors.New("rejected")

type rejection struct{ msg string }

func (r rejection) Error() string        { return r.msg }
func (r rejection) Is(target error) bool { return target == ErrRejected }

func reject(format string, a ...any) error { return rejection{fmt.Sprintf(format, a...)} }

// Claims sorts pod's claims, as upstream's PreFilter does (podHasPVCs, then
// GetPodVolumeClaims): nil for a pod without claims; an error matching
// ErrRejected, with upstream's text, for a claim that does not exist, is
// lost or being deleted, an ephemeral volume's claim the pod does not own,
// or unbound Immediate claims (ReasonUnboundImmediate); any other error is
// an internal one.
func (b *Binder) Claims(pod *v1.Pod) (*PodClaims, error) {
	if !HasClaims(pod) {
		return nil, nil
	}
	// The API objects first, as upstream's podHasPVCs reads its lister.
	for i := range pod.Spec.Volumes {
		vol := &pod.Spec.Volumes[i]
		name, eph := claimName(pod, vol)
		if name == "" {
			continue
		}
		pvc, err := b.caches.pvcs.GetAPIObj(pod.Namespace + "/" + name)
		if err != nil {
			if !apierrors.IsNotFound(err) {
				return nil, err
			}
			if eph {
				return nil, reject("waiting for ephemeral volume controller to create the persistentvolumeclaim %q", name)
			}
			return nil, reject("%s", apierrors.NewNotFound(v1.Resource("persistentvolumeclaim"), name).Error())
		}
		if pvc.Status.Phase == v1.ClaimLost {
			return nil, reject("persistentvolumeclaim %q bound to non-existent persistentvolume %q", pvc.Name, pvc.Spec.VolumeName)
		}
		if pvc.DeletionTimestamp != nil {
			return nil, reject("persistentvolumeclaim %q is being deleted", pvc.Name)
		}
		if eph {
			if err := ephemeral.VolumeIsForPod(pod, pvc); err != nil {
				return nil, reject("%s", err.Error())
			}
		}
	}
	pc := &PodClaims{Bound: []*v1.PersistentVolumeClaim{}, Delayed: []*v1.PersistentVolumeClaim{}, Immediate: []*v1.PersistentVolumeClaim{}}
	for i := range pod.Spec.Volumes {
		bound, pvc, err := b.volumeBound(pod, &pod.Spec.Volumes[i])
		if err != nil {
			return nil, err
		}
		switch {
		case pvc == nil:
		case bound:
			pc.Bound = append(pc.Bound, pvc)
		default:
			delay, err := storagehelpers.IsDelayBindingMode(pvc, b.classes)
			if err != nil {
				return nil, err
			}
			if delay && pvc.Spec.VolumeName == "" {
				pc.Delayed = append(pc.Delayed, pvc)
			} else {
				pc.Immediate = append(pc.Immediate, pvc)
			}
		}
	}
	if len(pc.Immediate) > 0 {
		return nil, reject("%s", ReasonUnboundImmediate)
	}
	pc.pvsByClass = map[string][]*v1.PersistentVolume{}
	for _, pvc := range pc.Delayed {
		class := storagehelpers.GetPersistentVolumeClaimClass(pvc)
		pvs, err := b.caches.pvs.byIndex(storageClassIndex, class)
		if err != nil {
			return nil, err
		}
		pc.pvsByClass[class] = pvs
	}
	return pc, nil
}

// volumeBound is upstream's isVolumeBound over the caches' view: whether
// vol's claim is fully bound, and the claim (nil for a volume without one).
func (b *Binder) volumeBound(pod *v1.Pod, vol *v1.Volume) (bool, *v1.PersistentVolumeClaim, error) {
	name, eph := claimName(pod, vol)
	if name == "" {
		return true, nil, nil
	}
	key := pod.Namespace + "/" + name
	pvc, err := b.caches.pvcs.Get(key)
	if err != nil {
		return false, nil, fmt.Errorf("error getting PVC %q: %v", key, err)
	}
	if eph {
		if err := ephemeral.VolumeIsForPod(pod, pvc); err != nil {
			return false, nil, err
		}
	}
	return fullyBound(pvc), pvc, nil
}

func fullyBound(pvc *v1.PersistentVolumeClaim) bool {
	return pvc.Spec.VolumeName != "" && metav1.HasAnnotation(pvc.ObjectMeta, storagehelpers.AnnBindCompleted)
}

// Binding is a claim and the static PersistentVolume chosen for it.
type Binding struct {
	PVC *v1.PersistentVolumeClaim
	PV  *v1.PersistentVolume
}

// Provision is a claim to provision on the node, with the
// CSIStorageCapacity that showed room for it (nil when capacity is not
// tracked for its driver).
type Provision struct {
	PVC      *v1.PersistentVolumeClaim
	Capacity *storagev1.CSIStorageCapacity
}

// PodVolumes are what a pod's unbound claims need on one node (upstream's
// PodVolumes): static bindings and claims to provision, and the node.
type PodVolumes struct {
	Static  []*Binding
	Dynamic []*Provision
	Node    *v1.Node
}

// FindPodVolumes checks whether pod's claims (Claims) can be used on node,
// as upstream's FindPodVolumes: the bound claims' PVs must accept the node
// (node affinity, translated to CSI topology for migrated in-tree
// volumes); each unbound WaitForFirstConsumer claim either finds a static
// PV there (class, selector, size, volume mode, access modes, node
// affinity; the smallest, never one another claim of the pod took) or can
// be provisioned there (its class has a provisioner, allowedTopologies
// admit the node, and, when the CSIDriver tracks capacity, a
// CSIStorageCapacity the node reaches has room). A claim already carrying
// the selected-node annotation only fits that node. It returns the reasons
// (Reason*) the node does not fit, or what the claims would get there. It
// is safe for concurrent use.
func (b *Binder) FindPodVolumes(pod *v1.Pod, pc *PodClaims, node *v1.Node) (*PodVolumes, []string, error) {
	pv := &PodVolumes{Node: node}
	if pc == nil {
		return pv, nil, nil
	}
	boundOK, pvsFound, delayedOK, enoughSpace := true, true, true, true
	reasons := func() []string {
		var r []string
		if !boundOK {
			r = append(r, ReasonNodeConflict)
		}
		if !delayedOK {
			r = append(r, ReasonBindConflict)
		}
		if !enoughSpace {
			r = append(r, ReasonNotEnoughSpace)
		}
		if !pvsFound {
			r = append(r, ReasonPVNotExist)
		}
		return r
	}
	if len(pc.Bound) > 0 {
		var err error
		if boundOK, pvsFound, err = b.checkBound(pc.Bound, node); err != nil {
			return nil, nil, err
		}
	}
	if len(pc.Delayed) > 0 {
		var toMatch, toProvision []*v1.PersistentVolumeClaim
		for _, pvc := range pc.Delayed {
			if selected, ok := pvc.Annotations[storagehelpers.AnnSelectedNode]; ok {
				if selected != node.Name {
					delayedOK = false
					return pv, reasons(), nil
				}
				toProvision = append(toProvision, pvc)
				continue
			}
			toMatch = append(toMatch, pvc)
		}
		if len(toMatch) > 0 {
			ok, static, left, err := b.findMatching(toMatch, pc.pvsByClass, node)
			if err != nil {
				return nil, nil, err
			}
			delayedOK, pv.Static = ok, static
			toProvision = append(toProvision, left...)
		}
		if len(toProvision) > 0 {
			ok, space, dynamic, err := b.checkProvisions(toProvision, node)
			if err != nil {
				return nil, nil, err
			}
			delayedOK, enoughSpace, pv.Dynamic = ok, space, dynamic
		}
	}
	return pv, reasons(), nil
}

// checkBound is upstream's checkBoundClaims: whether every bound claim's
// PV accepts node, and whether all those PVs exist (it stops at the first
// missing one).
func (b *Binder) checkBound(claims []*v1.PersistentVolumeClaim, node *v1.Node) (affinityOK, found bool, err error) {
	csiNode, _ := b.csiNodes.Get(node.Name)
	for _, pvc := range claims {
		pv, err := b.caches.pvs.Get(pvc.Spec.VolumeName)
		if err != nil {
			if apierrors.IsNotFound(err) {
				return true, false, nil
			}
			return true, false, err
		}
		if pv, err = b.translate(pv, csiNode); err != nil {
			return false, true, err
		}
		if storagehelpers.CheckNodeAffinity(pv, node.Labels) != nil {
			return false, true, nil
		}
	}
	return true, true, nil
}

// findMatching is upstream's findMatchingVolumes: claims, smallest request
// first, each matched to the smallest fitting PV no earlier claim took.
func (b *Binder) findMatching(claims []*v1.PersistentVolumeClaim, pvsByClass map[string][]*v1.PersistentVolume,
	node *v1.Node) (ok bool, static []*Binding, left []*v1.PersistentVolumeClaim, err error) {
	claims = slices.Clone(claims)
	slices.SortStableFunc(claims, func(a, b *v1.PersistentVolumeClaim) int {
		x, y := a.Spec.Resources.Requests[v1.ResourceStorage], b.Spec.Resources.Requests[v1.ResourceStorage]
		return x.Cmp(y)
	})
	chosen := map[string]*v1.PersistentVolume{}
	ok = true
	for _, pvc := range claims {
		pvs := pvsByClass[storagehelpers.GetPersistentVolumeClaimClass(pvc)]
		// VolumeAttributesClass is GA (on) in v1.37.
		pv, err := storagehelpers.FindMatchingVolume(pvc, pvs, node, chosen, true, true)
		if err != nil {
			return false, nil, nil, err
		}
		if pv == nil {
			left = append(left, pvc)
			ok = false
			continue
		}
		chosen[pv.Name] = pv
		static = append(static, &Binding{PVC: pvc, PV: pv})
	}
	return ok, static, left, nil
}

// checkProvisions is upstream's checkVolumeProvisions: whether every claim
// can be provisioned on node, and whether there is room for it.
func (b *Binder) checkProvisions(claims []*v1.PersistentVolumeClaim, node *v1.Node) (ok, space bool, out []*Provision, err error) {
	for _, pvc := range claims {
		className := storagehelpers.GetPersistentVolumeClaimClass(pvc)
		if className == "" {
			return false, false, nil, fmt.Errorf("no class for claim %q", pvc.Namespace+"/"+pvc.Name)
		}
		class, err := b.classes.Get(className)
		if err != nil {
			return false, false, nil, fmt.Errorf("failed to find storage class %q", className)
		}
		if class.Provisioner == "" || class.Provisioner == storagehelpers.NotSupportedProvisioner {
			return false, true, nil, nil
		}
		if !matchTopology(class.AllowedTopologies, node.Labels) {
			return false, true, nil, nil
		}
		enough, capacity, err := b.hasCapacity(class, pvc, node)
		if err != nil {
			return false, false, nil, err
		}
		if !enough {
			return true, false, nil, nil
		}
		out = append(out, &Provision{PVC: pvc, Capacity: capacity})
	}
	return true, true, out, nil
}

// matchTopology is upstream's v1helper.MatchTopologySelectorTerms: no terms
// admit every node; otherwise a node must match every requirement of one
// non-empty term.
func matchTopology(terms []v1.TopologySelectorTerm, nodeLabels map[string]string) bool {
	if len(terms) == 0 {
		return true
	}
	set := labels.Set(nodeLabels)
	for _, t := range terms {
		if len(t.MatchLabelExpressions) == 0 {
			continue
		}
		sel := labels.NewSelector()
		valid := true
		for _, e := range t.MatchLabelExpressions {
			r, err := labels.NewRequirement(e.Key, selection.In, e.Values)
			if err != nil {
				valid = false
				break
			}
			sel = sel.Add(*r)
		}
		if valid && sel.Matches(set) {
			return true
		}
	}
	return false
}

// hasCapacity is upstream's hasEnoughCapacity: a claim without a storage
// request, or whose provisioner is not a CSIDriver with storageCapacity
// true, always has room; otherwise a CSIStorageCapacity of the class the
// node reaches must allow the request (maximumVolumeSize, else capacity).
func (b *Binder) hasCapacity(class *storagev1.StorageClass, pvc *v1.PersistentVolumeClaim, node *v1.Node) (bool, *storagev1.CSIStorageCapacity, error) {
	q, ok := pvc.Spec.Resources.Requests[v1.ResourceStorage]
	if !ok {
		return true, nil, nil
	}
	driver, err := b.drivers.Get(class.Provisioner)
	if err != nil {
		if apierrors.IsNotFound(err) {
			return true, nil, nil
		}
		return false, nil, err
	}
	if driver.Spec.StorageCapacity == nil || !*driver.Spec.StorageCapacity {
		return true, nil, nil
	}
	capacities, err := b.capacities.List(labels.Everything())
	if err != nil {
		return false, nil, err
	}
	size := q.Value()
	for _, c := range capacities {
		if c.StorageClassName == class.Name && capacitySufficient(c, size) && nodeReaches(node, c) {
			return true, c, nil
		}
	}
	return false, nil, nil
}

func capacitySufficient(c *storagev1.CSIStorageCapacity, size int64) bool {
	limit := VolumeLimit(c)
	return limit != nil && limit.Value() >= size
}

// VolumeLimit is the largest volume c admits: maximumVolumeSize when set,
// else capacity (nil for neither).
func VolumeLimit(c *storagev1.CSIStorageCapacity) *resource.Quantity {
	if c.MaximumVolumeSize != nil {
		return c.MaximumVolumeSize
	}
	return c.Capacity
}

func nodeReaches(node *v1.Node, c *storagev1.CSIStorageCapacity) bool {
	if c.NodeTopology == nil {
		return false
	}
	sel, err := metav1.LabelSelectorAsSelector(c.NodeTopology)
	if err != nil {
		return false
	}
	return sel.Matches(labels.Set(node.Labels))
}

// translate is upstream's tryTranslatePVToCSI: an in-tree PV whose plugin
// the node's CSINode says is migrated is checked as its CSI translation
// (whose node affinity uses the CSI driver's topology keys).
func (b *Binder) translate(pv *v1.PersistentVolume, csiNode *storagev1.CSINode) (*v1.PersistentVolume, error) {
	if !b.translator.IsPVMigratable(pv) {
		return pv, nil
	}
	plugin, err := b.translator.GetInTreePluginNameFromSpec(pv, nil)
	if err != nil {
		return nil, fmt.Errorf("could not get plugin name from pv: %v", err)
	}
	if !migrationOn(plugin) || !migratedOnNode(plugin, csiNode) {
		return pv, nil
	}
	out, err := b.translator.TranslateInTreePVToCSI(klog.Background(), pv)
	if err != nil {
		return nil, fmt.Errorf("could not translate pv: %v", err)
	}
	return out, nil
}

// migrationOn is upstream's isCSIMigrationOnForPlugin: the in-tree plugins
// whose CSI migration is GA.
func migrationOn(plugin string) bool {
	switch plugin {
	case csiplugins.AWSEBSInTreePluginName, csiplugins.GCEPDInTreePluginName, csiplugins.AzureDiskInTreePluginName,
		csiplugins.CinderInTreePluginName, csiplugins.PortworxVolumePluginName:
		return true
	}
	return false
}

func migratedOnNode(plugin string, csiNode *storagev1.CSINode) bool {
	if csiNode == nil {
		return false
	}
	ann := csiNode.Annotations[v1.MigratedPluginsAnnotationKey]
	return ann != "" && slices.Contains(strings.Split(ann, ","), plugin)
}

// ErrConflict is returned by Assume when a PersistentVolume chosen for the
// pod was assumed for another claim since the pod was filtered.
var ErrConflict = errors.New("conflict")

// Assume reserves found (what FindPodVolumes found on nodeName) for the
// assumed pod, as upstream's AssumePodVolumes: each static PV's claimRef
// and each claim's selected-node annotation are assumed in the caches, so
// the next pods see them taken. It returns the assumed copies (for Bind
// and Revert) and allBound, true when every claim of the pod is already
// fully bound and there is nothing to do. On an error nothing stays
// assumed; a PV another claim holds in the cache fails with ErrConflict.
func (b *Binder) Assume(pod *v1.Pod, nodeName string, found *PodVolumes) (assumed *PodVolumes, allBound bool, err error) {
	if b.allBound(pod) {
		return nil, true, nil
	}
	out := &PodVolumes{Node: found.Node, Static: []*Binding{}, Dynamic: []*Provision{}}
	for _, bd := range found.Static {
		newPV, dirty, err := storagehelpers.GetBindVolumeToClaim(bd.PV, bd.PVC)
		if err != nil {
			b.Revert(out)
			return nil, false, err
		}
		if dirty {
			pvc := bd.PVC
			err := b.caches.pvs.Assume(newPV, func(cur *v1.PersistentVolume) error {
				if cur.Spec.ClaimRef != nil && !storagehelpers.IsVolumeBoundToClaim(cur, pvc) {
					return fmt.Errorf("%w: persistentvolume %q was taken by claim %s/%s since the pod was filtered",
						ErrConflict, cur.Name, cur.Spec.ClaimRef.Namespace, cur.Spec.ClaimRef.Name)
				}
				return nil
			})
			if err != nil {
				b.Revert(out)
				return nil, false, err
			}
		}
		out.Static = append(out.Static, &Binding{PVC: bd.PVC, PV: newPV})
	}
	for _, p := range found.Dynamic {
		clone := p.PVC.DeepCopy()
		metav1.SetMetaDataAnnotation(&clone.ObjectMeta, storagehelpers.AnnSelectedNode, nodeName)
		if err := b.caches.pvcs.Assume(clone, nil); err != nil {
			b.Revert(out)
			return nil, false, err
		}
		out.Dynamic = append(out.Dynamic, &Provision{PVC: clone})
	}
	return out, false, nil
}

// allBound is upstream's arePodVolumesBound.
func (b *Binder) allBound(pod *v1.Pod) bool {
	for i := range pod.Spec.Volumes {
		if bound, _, _ := b.volumeBound(pod, &pod.Spec.Volumes[i]); !bound {
			return false
		}
	}
	return true
}

// Revert ends the assumptions of assumed (Assume's result), as upstream's
// RevertAssumedPodVolumes; those Bind already wrote stay until the
// informer brings the written versions.
func (b *Binder) Revert(assumed *PodVolumes) {
	if assumed == nil {
		return
	}
	for _, bd := range assumed.Static {
		b.caches.pvs.Restore(bd.PV)
	}
	for _, p := range assumed.Dynamic {
		b.caches.pvcs.Restore(p.PVC)
	}
}

// Bind writes assumed (Assume's result for pod, spec.nodeName set) to the
// API, as upstream's BindPodVolumes: each static PV with its claimRef,
// each claim to provision with its selected-node annotation; then waits
// until every one of those claims is fully bound (the PV controller sets
// pv.kubernetes.io/bind-completed) with a PV that accepts the node. The
// wait looks again at every informer event of the caches (and every poll
// interval) and fails when a claim or PV changed so that the binding
// cannot complete (claimRef reset, selected-node removed or moved: the
// provisioner gave up), when ctx ends, or after the bind timeout.
func (b *Binder) Bind(ctx context.Context, pod *v1.Pod, assumed *PodVolumes) error {
	if err := b.write(ctx, pod, assumed); err != nil {
		return err
	}
	timeout := b.timeout
	if timeout < 0 {
		timeout = 0
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	ticker := time.NewTicker(b.poll)
	defer ticker.Stop()
	for {
		changed := b.caches.Changed()
		done, err := b.checkBindings(pod, assumed)
		if err != nil {
			return fmt.Errorf("binding volumes: %w", err)
		}
		if done {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("binding volumes: %w", ctx.Err())
		case <-changed:
		case <-ticker.C:
		}
	}
}

// write is upstream's bindAPIUpdate: the API updates, each written object
// kept in assumed for the checks; the assumptions not written are ended on
// a failure. A written one stays assumed until the informer brings the
// written version, so that no pod sees the PV free in between.
func (b *Binder) write(ctx context.Context, pod *v1.Pod, assumed *PodVolumes) (err error) {
	if assumed == nil || assumed.Static == nil || assumed.Dynamic == nil {
		return fmt.Errorf("failed to get cached bindings for pod %q", pod.Namespace+"/"+pod.Name)
	}
	if (len(assumed.Static) > 0 || len(assumed.Dynamic) > 0) && b.client == nil {
		return fmt.Errorf("bind the volumes of pod %s/%s: the scheduler has no API client", pod.Namespace, pod.Name)
	}
	static, dynamic := 0, 0
	defer func() {
		for _, bd := range assumed.Static[static:] {
			b.caches.pvs.Restore(bd.PV)
		}
		for _, p := range assumed.Dynamic[dynamic:] {
			b.caches.pvcs.Restore(p.PVC)
		}
	}()
	for _, bd := range assumed.Static {
		pv, err := b.client.CoreV1().PersistentVolumes().Update(ctx, bd.PV, metav1.UpdateOptions{})
		if err != nil {
			return err
		}
		bd.PV = pv
		static++
	}
	for _, p := range assumed.Dynamic {
		pvc, err := b.client.CoreV1().PersistentVolumeClaims(p.PVC.Namespace).Update(ctx, p.PVC, metav1.UpdateOptions{})
		if err != nil {
			return err
		}
		p.PVC = pvc
		dynamic++
	}
	return nil
}

// checkBindings is upstream's checkBindings: whether every claim Bind wrote
// is fully bound, or an error when one can no longer be. It reads the
// informers' objects, not the assumed ones: the PV controller and the
// provisioner answer through the API.
func (b *Binder) checkBindings(pod *v1.Pod, assumed *PodVolumes) (bool, error) {
	node := assumed.Node
	if b.nodes != nil {
		n, err := b.nodes.Get(pod.Spec.NodeName)
		if err != nil {
			return false, fmt.Errorf("failed to get node %q: %w", pod.Spec.NodeName, err)
		}
		node = n
	}
	if node == nil {
		return false, fmt.Errorf("failed to get node %q: not known to the binder", pod.Spec.NodeName)
	}
	csiNode, _ := b.csiNodes.Get(node.Name)
	if b.pods != nil {
		if _, err := b.pods.Pods(pod.Namespace).Get(pod.Name); apierrors.IsNotFound(err) {
			return false, fmt.Errorf("pod does not exist any more: %w", err)
		}
	}
	for _, bd := range assumed.Static {
		pv, err := b.caches.pvs.GetAPIObj(bd.PV.Name)
		if err != nil {
			return false, fmt.Errorf("failed to check binding: %w", err)
		}
		pvc, err := b.caches.pvcs.GetAPIObj(bd.PVC.Namespace + "/" + bd.PVC.Name)
		if err != nil {
			return false, fmt.Errorf("failed to check binding: %w", err)
		}
		if compareVersions(bd.PV, pv) > 0 {
			return false, nil // the informer has not seen the update yet
		}
		if pv, err = b.translate(pv, csiNode); err != nil {
			return false, fmt.Errorf("failed to translate pv to csi: %w", err)
		}
		if err := storagehelpers.CheckNodeAffinity(pv, node.Labels); err != nil {
			return false, fmt.Errorf("pv %q node affinity doesn't match node %q: %w", pv.Name, node.Name, err)
		}
		if pv.Spec.ClaimRef == nil || pv.Spec.ClaimRef.UID == "" {
			return false, fmt.Errorf("ClaimRef got reset for pv %q", pv.Name)
		}
		if !fullyBound(pvc) {
			return false, nil
		}
	}
	for _, p := range assumed.Dynamic {
		pvc, err := b.caches.pvcs.GetAPIObj(p.PVC.Namespace + "/" + p.PVC.Name)
		if err != nil {
			return false, fmt.Errorf("failed to check provisioning pvc: %w", err)
		}
		if compareVersions(p.PVC, pvc) > 0 {
			return false, nil
		}
		if pvc.Annotations == nil {
			return false, fmt.Errorf("selectedNode annotation reset for PVC %q", pvc.Name)
		}
		if pvc.Annotations[storagehelpers.AnnSelectedNode] != pod.Spec.NodeName {
			// The provisioner removes the annotation when it gives up.
			return false, fmt.Errorf("provisioning failed for PVC %q", pvc.Name)
		}
		if pvc.Spec.VolumeName != "" {
			pv, err := b.caches.pvs.GetAPIObj(pvc.Spec.VolumeName)
			if err != nil {
				if apierrors.IsNotFound(err) {
					return false, nil // not in the informer yet
				}
				return false, fmt.Errorf("failed to get pv %q from cache: %w", pvc.Spec.VolumeName, err)
			}
			if pv, err = b.translate(pv, csiNode); err != nil {
				return false, err
			}
			if err := storagehelpers.CheckNodeAffinity(pv, node.Labels); err != nil {
				return false, fmt.Errorf("pv %q node affinity doesn't match node %q: %w", pv.Name, node.Name, err)
			}
		}
		if !fullyBound(pvc) {
			return false, nil
		}
	}
	return true, nil
}
