package abi

// Internal tests: records from other minor versions and crafted records with
// overlapping references. They use the layout constants, so they live in
// package abi (and so cannot import abitest, which imports abi); the values
// come from the golden vectors, which TestGolden ties to abitest.

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func golden(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "golden", name+".bin"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// withFixed returns a copy of rec whose header claims a fixed part of fixed
// bytes: what a reader sees of a record written by an older minor that knew
// only the fields below fixed.
func withFixed(rec []byte, fixed int) []byte {
	c := bytes.Clone(rec)
	binary.LittleEndian.PutUint16(c[6:], uint16(fixed))
	return c
}

// field is a fixed-part field and how to clear it in the decoded value.
type field[T any] struct {
	off, size int
	clear     func(*T)
}

// checkOlderMinor cuts the fixed part of rec at every 4-byte boundary (in the
// middle of 8-byte fields too) and checks that Decode reads exactly the fields
// that fit as they are and the others as zero.
func checkOlderMinor[T any](t *testing.T, rec []byte, fixed int, fields []field[T], decode func([]byte, *T) error) {
	t.Helper()
	var full T
	if err := decode(rec, &full); err != nil {
		t.Fatal(err)
	}
	for cut := headerSize; cut <= fixed; cut += 4 {
		want := full
		for _, f := range fields {
			if f.off+f.size > cut {
				f.clear(&want)
			}
		}
		var got T
		if err := decode(withFixed(rec, cut), &got); err != nil {
			t.Fatalf("fixed part cut to %d: %v", cut, err)
		}
		if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("fixed part cut to %d (-want +got):\n%s", cut, diff)
		}
	}
}

func TestOlderMinorPod(t *testing.T) {
	rec := golden(t, "pod-full")
	fields := []field[Pod]{
		{podPriority, 4, func(p *Pod) { p.Priority = 0 }},
		{podFlags, 4, func(p *Pod) { p.PreemptNever, p.LastFailureError, p.HasAddedAffinity = false, false, false }},
		{podCreation, 8, func(p *Pod) { p.CreationTime = 0 }},
		{podQueued, 8, func(p *Pod) { p.QueuedTime = 0 }},
		{podInitialAttempt, 8, func(p *Pod) { p.InitialAttemptTime = 0 }},
		{podBackoffExpiry, 8, func(p *Pod) { p.BackoffExpiry = 0 }},
		{podAttempts, 4, func(p *Pod) { p.Attempts = 0 }},
		{podGroupMinCount, 4, func(p *Pod) { p.Group.MinCount = 0 }},
		{podGroupPriority, 4, func(p *Pod) { p.Group.Priority = 0 }},
		{podGroupMembers, 4, func(p *Pod) { p.Group.Members = 0 }},
		{podGroupDisrupt, 4, func(p *Pod) { p.Group.DisruptionMode = 0 }},
		{podUID, 8, func(p *Pod) { p.UID = "" }},
		{podNamespace, 8, func(p *Pod) { p.Namespace = "" }},
		{podName, 8, func(p *Pod) { p.Name = "" }},
		{podNodeName, 8, func(p *Pod) { p.NodeName = "" }},
		{podGroupName, 8, func(p *Pod) { p.Group.Name = "" }},
		{podLabels, 8, func(p *Pod) { p.Labels = nil }},
		{podRequests, 8, func(p *Pod) { p.Requests = nil }},
		{podUnschedPlugins, 8, func(p *Pod) { p.UnschedulablePlugins = nil }},
		{podPendingPlugins, 8, func(p *Pod) { p.PendingPlugins = nil }},
		{podGates, 8, func(p *Pod) { p.SchedulingGates = nil }},
		{podNodeSelector, 8, func(p *Pod) { p.NodeSelector = nil }},
		{podTolerations, 8, func(p *Pod) { p.Tolerations = nil }},
		{podHostPorts, 8, func(p *Pod) { p.HostPorts = nil }},
		{podAffinity, 8, func(p *Pod) { p.RequiredAffinity = nil }},
		{podClaims, 8, func(p *Pod) { p.Claims = nil }},
		{podEphemeral, 8, func(p *Pod) { p.EphemeralClaims = nil }},
		{podVolumeDrivers, 8, func(p *Pod) { p.VolumeDrivers = nil }},
		{podResourceClaims, 8, func(p *Pod) { p.ResourceClaims = nil }},
		{podNSLabels, 8, func(p *Pod) { p.NamespaceLabels = nil }},
		{podOwnerKind, 8, func(p *Pod) { p.OwnerKind = "" }},
		{podPodAffinity, 8, func(p *Pod) { p.PodAffinity = nil }},
		{podPodAnti, 8, func(p *Pod) { p.PodAntiAffinity = nil }},
		{podPrefAffinity, 8, func(p *Pod) { p.PreferredPodAffinity = nil }},
		{podPrefAnti, 8, func(p *Pod) { p.PreferredPodAntiAffinity = nil }},
		{podSpread, 8, func(p *Pod) { p.SpreadConstraints = nil }},
		{podAddedAffinity, 8, func(p *Pod) { p.AddedAffinity = nil }},
		{podFeatures, 8, func(p *Pod) { p.RequiredFeatures = nil }},
	}
	checkOlderMinor(t, rec, podFixed, fields, func(b []byte, p *Pod) error {
		v, err := ReadPod(b)
		if err != nil {
			return err
		}
		return v.Decode(p)
	})

	// The views read the same zeros.
	v, err := ReadPod(withFixed(rec, podCreation+4))
	if err != nil {
		t.Fatal(err)
	}
	if v.Priority() == 0 || v.CreationTime() != 0 || v.Name() != "" || v.Labels().Len() != 0 || v.RequiredAffinity().Len() != 0 {
		t.Errorf("views of a pod cut at %d: priority %d, creation %d, name %q, %d labels, %d terms",
			podCreation+4, v.Priority(), v.CreationTime(), v.Name(), v.Labels().Len(), v.RequiredAffinity().Len())
	}
}

func TestOlderMinorNode(t *testing.T) {
	fields := []field[Node]{
		{nodeFlags, 4, func(n *Node) { n.Unschedulable = false }},
		{nodeName, 8, func(n *Node) { n.Name = "" }},
		{nodeLabels, 8, func(n *Node) { n.Labels = nil }},
		{nodeTaints, 8, func(n *Node) { n.Taints = nil }},
		{nodeAllocatable, 8, func(n *Node) { n.Allocatable = nil }},
		{nodeRequested, 8, func(n *Node) { n.Requested = nil }},
		{nodeImages, 8, func(n *Node) { n.Images = nil }},
	}
	checkOlderMinor(t, golden(t, "node-full"), nodeFixed, fields, func(b []byte, n *Node) error {
		v, err := ReadNode(b)
		if err != nil {
			return err
		}
		return v.Decode(n)
	})
}

func TestOlderMinorPodGroup(t *testing.T) {
	fields := []field[PodGroup]{
		{groupMinCount, 4, func(g *PodGroup) { g.MinCount = 0 }},
		{groupPriority, 4, func(g *PodGroup) { g.Priority = 0 }},
		{groupDisrupt, 4, func(g *PodGroup) { g.DisruptionMode = 0 }},
		{groupFlags, 4, func(g *PodGroup) { g.PreemptNever = false }},
		{groupMembers, 4, func(g *PodGroup) { g.Members = 0 }},
		{groupNamespace, 8, func(g *PodGroup) { g.Namespace = "" }},
		{groupName, 8, func(g *PodGroup) { g.Name = "" }},
	}
	checkOlderMinor(t, golden(t, "podgroup-full"), groupFixed, fields, func(b []byte, g *PodGroup) error {
		v, err := ReadPodGroup(b)
		if err != nil {
			return err
		}
		return v.Decode(g)
	})
}

// TestMinor0Pod reads a pod record as a minor-0 host wrote it (fixed part
// ending at the affinity terms): the claim lists added in minor 1 read as
// empty, so a minor-1 policy sees a pod without claims.
func TestMinor0Pod(t *testing.T) {
	v, err := ReadPod(withFixed(golden(t, "pod-full"), podClaims))
	if err != nil {
		t.Fatal(err)
	}
	if v.Claims().Len() != 0 || v.EphemeralClaims().Len() != 0 || v.VolumeDrivers().Len() != 0 || v.UsesClaim(v.Namespace(), "data-trainer-0") {
		t.Errorf("minor-0 pod: claims %d, ephemeral %d, drivers %d", v.Claims().Len(), v.EphemeralClaims().Len(), v.VolumeDrivers().Len())
	}
	full, _ := ReadPod(golden(t, "pod-full"))
	if !full.UsesClaim(full.Namespace(), "data-trainer-0") || !full.UsesClaim(full.Namespace(), "trainer-ß-🚀-0-scratch") ||
		full.UsesClaim("other", "data-trainer-0") || full.UsesClaim(full.Namespace(), "ebs.csi.aws.com") {
		t.Error("UsesClaim disagrees with pod-full's claims")
	}
}

// TestMinor1Records reads pod and storage records as a minor-1 host wrote
// them (fixed parts ending before the minor-2 fields): a minor-2 policy
// sees a pod without resource claims, whose claims all count as generated,
// and a storage object without DRA fields.
func TestMinor1Records(t *testing.T) {
	v, err := ReadPod(withFixed(golden(t, "pod-full"), podResourceClaims))
	if err != nil {
		t.Fatal(err)
	}
	if v.ResourceClaims().Len() != 0 || v.UsesResourceClaim(v.Namespace(), "gpu-trainer-0") || !v.ResourceClaimsGenerated() {
		t.Errorf("minor-1 pod: %d resource claims", v.ResourceClaims().Len())
	}
	full, _ := ReadPod(golden(t, "pod-full"))
	if !full.UsesResourceClaim(full.Namespace(), "gpu-trainer-0") || full.UsesResourceClaim("other", "gpu-trainer-0") ||
		full.UsesResourceClaim(full.Namespace(), "") || full.ResourceClaimsGenerated() {
		t.Error("UsesResourceClaim or ResourceClaimsGenerated disagrees with pod-full's resource claims")
	}
	s, err := ReadStorage(withFixed(golden(t, "storage-full"), storagePool))
	if err != nil {
		t.Fatal(err)
	}
	if s.Pool() != "" || s.DeviceClasses().Len() != 0 || !s.Allocated() || s.ReservedFor() == 0 {
		t.Errorf("storage-full cut before the pool: pool %q, %d classes, allocated %v, reservedFor %d (flags and reservedFor sit in the minor-1 fixed part)",
			s.Pool(), s.DeviceClasses().Len(), s.Allocated(), s.ReservedFor())
	}
}

// TestMinor3Records reads a pod record as a minor-3 host wrote it (fixed
// part ending before the minor-4 fields): a minor-4 policy sees no terms,
// and TermsKnown tells it that this says nothing about the pod.
func TestMinor3Records(t *testing.T) {
	full, _ := ReadPod(golden(t, "pod-full"))
	if !full.TermsKnown() || full.PodAffinity().Len() == 0 || full.SpreadConstraints().Len() == 0 ||
		full.AddedAffinity().Len() == 0 || !full.HasAddedAffinity() || full.RequiredFeatures().Len() == 0 {
		t.Errorf("pod-full: terms known %v, %d pod affinity terms, %d spread constraints, %d added terms (flag %v), %d features",
			full.TermsKnown(), full.PodAffinity().Len(), full.SpreadConstraints().Len(), full.AddedAffinity().Len(),
			full.HasAddedAffinity(), full.RequiredFeatures().Len())
	}
	for _, cut := range []int{podPodAffinity, podFeatures, podFeatures + 4} {
		v, err := ReadPod(withFixed(golden(t, "pod-full"), cut))
		if err != nil {
			t.Fatal(err)
		}
		if v.TermsKnown() {
			t.Errorf("cut at %d: TermsKnown() = true for a record without the required features", cut)
		}
		if cut == podPodAffinity && (v.PodAffinity().Len() != 0 || v.SpreadConstraints().Len() != 0 || v.RequiredFeatures().Len() != 0 || v.OwnerKind() == "") {
			t.Errorf("minor-3 pod: %d pod affinity terms, %d spread constraints, %d features, owner kind %q (a minor-3 field)",
				v.PodAffinity().Len(), v.SpreadConstraints().Len(), v.RequiredFeatures().Len(), v.OwnerKind())
		}
	}
}

// TestMinor2Records reads pod and node records as a minor-2 host wrote them
// (fixed parts ending before the minor-3 fields): a minor-3 policy sees a
// pod without namespace labels or owner kind and a node without images.
func TestMinor2Records(t *testing.T) {
	v, err := ReadPod(withFixed(golden(t, "pod-full"), podNSLabels))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := v.NamespaceLabels().Get("pool"); ok || v.NamespaceLabels().Len() != 0 || v.OwnerKind() != "" || v.ResourceClaims().Len() == 0 {
		t.Errorf("minor-2 pod: %d namespace labels, owner kind %q, %d resource claims (a minor-2 field)",
			v.NamespaceLabels().Len(), v.OwnerKind(), v.ResourceClaims().Len())
	}
	full, _ := ReadPod(golden(t, "pod-full"))
	if pool, ok := full.NamespaceLabels().Get("pool"); !ok || pool != "gpu" || full.OwnerKind() != "StatefulSet" {
		t.Errorf("pod-full: namespace label pool = %q, %v; owner kind %q", pool, ok, full.OwnerKind())
	}
	n, err := ReadNode(withFixed(golden(t, "node-full"), nodeImages))
	if err != nil {
		t.Fatal(err)
	}
	if n.Images().Len() != 0 || n.Images().Has("registry.k8s.io/pause:3.10") || n.Requested().Len() == 0 {
		t.Errorf("minor-2 node: %d images, %d requested", n.Images().Len(), n.Requested().Len())
	}
	fullNode, _ := ReadNode(golden(t, "node-full"))
	if !fullNode.Images().Has("registry.k8s.io/pause:3.10") || fullNode.Images().Has("registry.k8s.io/pause") {
		t.Error("Images().Has disagrees with node-full's images")
	}
}

func TestOlderMinorStorage(t *testing.T) {
	fields := []field[StorageObject]{
		{storageFlags, 4, func(o *StorageObject) {
			o.NodeAffinity, o.CapacityTracking, o.HasCapacity, o.Allocated = false, false, false, false
		}},
		{storagePhase, 4, func(o *StorageObject) { o.Phase = 0 }},
		{storageBindingMode, 4, func(o *StorageObject) { o.BindingMode = 0 }},
		{storageReservedFor, 4, func(o *StorageObject) { o.ReservedFor = 0 }},
		{storageCapacity, 8, func(o *StorageObject) { o.Capacity = 0 }},
		{storageNamespace, 8, func(o *StorageObject) { o.Namespace = "" }},
		{storageName, 8, func(o *StorageObject) { o.Name = "" }},
		{storageClass, 8, func(o *StorageObject) { o.StorageClass = "" }},
		{storageVolumeName, 8, func(o *StorageObject) { o.VolumeName = "" }},
		{storageClaimNS, 8, func(o *StorageObject) { o.ClaimNamespace = "" }},
		{storageClaimName, 8, func(o *StorageObject) { o.ClaimName = "" }},
		{storageNodeName, 8, func(o *StorageObject) { o.NodeName = "" }},
		{storageDriver, 8, func(o *StorageObject) { o.Driver = "" }},
		{storageMigrated, 8, func(o *StorageObject) { o.MigratedPlugins = "" }},
		{storageLabels, 8, func(o *StorageObject) { o.Labels = nil }},
		{storageTopology, 8, func(o *StorageObject) { o.Topology = nil }},
		{storageDrivers, 8, func(o *StorageObject) { o.Drivers = nil }},
		{storagePool, 8, func(o *StorageObject) { o.Pool = "" }},
		{storageClassesList, 8, func(o *StorageObject) { o.DeviceClasses = nil }},
	}
	checkOlderMinor(t, golden(t, "storage-full"), storageFixed, fields, func(b []byte, o *StorageObject) error {
		v, err := ReadStorage(b)
		if err != nil {
			return err
		}
		return v.Decode(o)
	})
}

// TestShortPlacementRecords cuts the fixed parts of the placement records
// (minor 3) as TestOlderMinorPod does: a field the fixed part does not hold
// reads as absent, even where the bytes after the cut still look like it.
func TestShortPlacementRecords(t *testing.T) {
	t.Run("placement", func(t *testing.T) {
		fields := []field[placement]{
			{placementPod, 8, func(p *placement) { p.Pod = nil }},
			{placementIDs, 8, func(p *placement) { p.IDs = nil }},
			{placementNodes, 8, func(p *placement) { p.Inline = nil }},
		}
		decode := func(b []byte, p *placement) (err error) { *p, err = decodePlacement(b); return err }
		checkOlderMinor(t, golden(t, "placement-inline"), placementFixed, fields, decode)
		checkOlderMinor(t, golden(t, "placement-ids"), placementFixed, fields, decode)
	})
	t.Run("node sync", func(t *testing.T) {
		fields := []field[nodeSync]{
			{syncFlags, 4, func(s *nodeSync) { s.Reset = false }},
			{syncUpserts, 8, func(s *nodeSync) { s.Upserts = nil }},
			{syncRemoved, 8, func(s *nodeSync) { s.Removed = nil }},
		}
		decode := func(b []byte, s *nodeSync) (err error) { *s, err = decodeNodeSync(b); return err }
		checkOlderMinor(t, golden(t, "nodesync-reset"), syncFixed, fields, decode)
		checkOlderMinor(t, golden(t, "nodesync-delta"), syncFixed, fields, decode)
	})
	t.Run("options", func(t *testing.T) {
		fields := []field[PlacementOptions]{
			{optFlags, 4, func(o *PlacementOptions) { o.ScoreNormalized = false }},
			{optEvents, 8, func(o *PlacementOptions) { o.FilterEvents = nil }},
		}
		checkOlderMinor(t, golden(t, "placementoptions"), optFixed, fields, func(b []byte, o *PlacementOptions) (err error) {
			*o, err = DecodePlacementOptions(b)
			return err
		})
	})
	t.Run("verdicts", func(t *testing.T) {
		// Without its verdicts list a record answers no nodes; with the
		// list but not the reasons, the rejections name reasons that do
		// not exist.
		rec := golden(t, "verdicts")
		if v, err := ReadVerdicts(withFixed(rec, verdictsList), 0); err != nil || v.Len() != 0 || v.NumReasons() != 0 {
			t.Errorf("verdicts cut before the list: %v, %d verdicts", err, v.Len())
		}
		if _, err := ReadVerdicts(withFixed(rec, verdictsReasons), 5); err == nil {
			t.Error("verdicts cut before the reasons: rejections accepted")
		}
	})
}

func TestOlderMinorEvent(t *testing.T) {
	fields := []field[Event]{
		{eventResource, 4, func(e *Event) { e.Resource = 0 }},
		{eventAction, 4, func(e *Event) { e.Action = 0 }},
		{eventOld, 8, func(e *Event) { e.Old = nil }},
		{eventNew, 8, func(e *Event) { e.New = nil }},
	}
	checkOlderMinor(t, golden(t, "event-node-update"), eventFixed, fields, func(b []byte, e *Event) error {
		v, err := ReadEvent(b)
		if err != nil {
			return err
		}
		return v.Decode(e)
	})
}

func TestOlderMinorBatches(t *testing.T) {
	h, err := ReadHintBatch(withFixed(golden(t, "hintbatch-3-pods"), batchPods))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.Event(); err != nil || h.Len() != 0 {
		t.Errorf("hint batch without its pod table: event error %v, %d pods", err, h.Len())
	}
	if _, err := h.Pod(0); err == nil {
		t.Error("Pod(0) of a batch without pods: no error")
	}
	v, err := ReadVictimBatch(withFixed(golden(t, "victimbatch-preemptor"), vbVictims))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := v.Preemptor(); !ok || v.Len() != 0 || len(v.Decode(nil)) != 0 {
		t.Errorf("victim batch without its victims: preemptor %v, %d victims", ok, v.Len())
	}
	if _, ok := (VictimBatchView{}).Preemptor(); ok {
		t.Error("zero VictimBatchView has a preemptor")
	}
}

// ref is one reference of a layout: at off in the fixed part or in a list
// element; elem > 0 makes it a list of elem-byte elements whose own
// references are sub. Strings and nested records (self-relative) have elem 0.
type ref struct {
	off, elem uint32
	sub       []ref
}

// The layouts below are transcribed from the comments of pod.go, node.go,
// event.go, victim.go and gate.go.
var (
	kvRefs   = []ref{{off: 0}, {off: 8}}
	strRefsL = []ref{{off: 0}}
	reqRefs  = []ref{{off: 0}, {off: 16, elem: 8, sub: strRefsL}}
	termRefs = []ref{{off: 0, elem: 24, sub: reqRefs}, {off: 8, elem: 24, sub: reqRefs}}
	// minor 4: pod affinity terms and spread constraints.
	podTermRefs = []ref{{off: 0, elem: 24, sub: reqRefs}, {off: 8, elem: 8, sub: strRefsL}, {off: 16, elem: 24, sub: reqRefs}, {off: 24}}
	spreadRefs  = []ref{{off: 0, elem: 24, sub: reqRefs}, {off: 8}, {off: 16, elem: 8, sub: strRefsL}}
	podLayout   = []ref{
		{off: 72}, {off: 80}, {off: 88}, {off: 96}, {off: 104},
		{off: 112, elem: 16, sub: kvRefs}, {off: 120, elem: 16, sub: strRefsL},
		{off: 128, elem: 8, sub: strRefsL}, {off: 136, elem: 8, sub: strRefsL}, {off: 144, elem: 8, sub: strRefsL},
		{off: 152, elem: 16, sub: kvRefs}, {off: 160, elem: 24, sub: kvRefs}, {off: 168, elem: 16, sub: strRefsL},
		{off: 176, elem: 16, sub: termRefs},
		{off: 184, elem: 8, sub: strRefsL}, {off: 192, elem: 8, sub: strRefsL}, {off: 200, elem: 8, sub: strRefsL},
		{off: 208, elem: 8, sub: strRefsL},
		{off: 216, elem: 16, sub: kvRefs}, {off: 224},
		{off: 232, elem: 40, sub: podTermRefs}, {off: 240, elem: 40, sub: podTermRefs},
		{off: 248, elem: 40, sub: podTermRefs}, {off: 256, elem: 40, sub: podTermRefs},
		{off: 264, elem: 48, sub: spreadRefs}, {off: 272, elem: 16, sub: termRefs},
		{off: 280, elem: 8, sub: strRefsL},
	}
	storageLayout = []ref{
		{off: 32}, {off: 40}, {off: 48}, {off: 56}, {off: 64}, {off: 72}, {off: 80}, {off: 88}, {off: 96},
		{off: 104, elem: 16, sub: kvRefs}, {off: 112, elem: 16, sub: termRefs}, {off: 120, elem: 16, sub: strRefsL},
		{off: 128}, {off: 136, elem: 8, sub: strRefsL},
	}
	nodeLayout = []ref{
		{off: 16}, {off: 24, elem: 16, sub: kvRefs}, {off: 32, elem: 24, sub: kvRefs},
		{off: 40, elem: 16, sub: strRefsL}, {off: 48, elem: 16, sub: strRefsL},
		{off: 56, elem: 16, sub: strRefsL},
	}
	groupLayout  = []ref{{off: 32}, {off: 40}}
	eventLayout  = []ref{{off: 16}, {off: 24}}
	hintLayout   = []ref{{off: 8}, {off: 16, elem: 8, sub: strRefsL}}
	victimLayout = []ref{{off: 8}, {off: 16, elem: 48, sub: []ref{{off: 24}, {off: 32}, {off: 40}}}}
	gateLayout   = []ref{{off: 16}, {off: 24}}
	regsLayout   = []ref{{off: 8, elem: 16, sub: strRefsL}}
	// placement.go (minor 3); nested records are self-relative, so only
	// the references to them move.
	placementLayout = []ref{{off: 16}, {off: 24, elem: 4}, {off: 32, elem: 8, sub: strRefsL}}
	syncLayout      = []ref{{off: 16, elem: 16, sub: []ref{{off: 8}}}, {off: 24, elem: 4}}
	verdictsLayout  = []ref{{off: 16, elem: 4}, {off: 24, elem: 8, sub: strRefsL}}
	optionsLayout   = []ref{{off: 16, elem: 8}}
)

// refPositions appends the position of every reference of the layout in b,
// the element refs of lists included.
func refPositions(b []byte, base uint32, layout []ref, out []uint32) []uint32 {
	for _, r := range layout {
		at := base + r.off
		out = append(out, at)
		if r.elem == 0 {
			continue
		}
		pos, n := binary.LittleEndian.Uint32(b[at:]), binary.LittleEndian.Uint32(b[at+4:])
		for i := uint32(0); i < n; i++ {
			out = refPositions(b, pos+i*r.elem, r.sub, out)
		}
	}
	return out
}

// widen returns rec as a newer minor would write it: extra bytes of unknown
// fields (0xEE) after the fixed part, and every reference moved past them.
func widen(rec []byte, layout []ref, extra uint32) []byte {
	fixed := uint32(binary.LittleEndian.Uint16(rec[6:]))
	out := append(append(bytes.Clone(rec[:fixed]), bytes.Repeat([]byte{0xEE}, int(extra))...), rec[fixed:]...)
	binary.LittleEndian.PutUint32(out, uint32(len(out)))
	binary.LittleEndian.PutUint16(out[6:], uint16(fixed+extra))
	for _, at := range refPositions(rec, 0, layout, nil) {
		if at >= fixed {
			at += extra
		}
		if binary.LittleEndian.Uint32(out[at+4:]) != 0 {
			binary.LittleEndian.PutUint32(out[at:], binary.LittleEndian.Uint32(out[at:])+extra)
		}
	}
	return out
}

// canonical decodes rec with the matching decoder and re-encodes it.
func canonical(t *testing.T, rec []byte) []byte {
	t.Helper()
	tag, err := RecordTag(rec)
	if err != nil {
		t.Fatal(err)
	}
	fail := func(err error) []byte {
		t.Helper()
		t.Fatalf("decode %v: %v", tag, err)
		return nil
	}
	switch tag {
	case TagPod:
		var p Pod
		v, _ := ReadPod(rec)
		if err := v.Decode(&p); err != nil {
			return fail(err)
		}
		return AppendPod(nil, &p)
	case TagNode:
		var n Node
		v, _ := ReadNode(rec)
		if err := v.Decode(&n); err != nil {
			return fail(err)
		}
		return AppendNode(nil, &n)
	case TagPodGroup:
		var g PodGroup
		v, _ := ReadPodGroup(rec)
		if err := v.Decode(&g); err != nil {
			return fail(err)
		}
		return AppendPodGroup(nil, &g)
	case TagEvent:
		var e Event
		v, _ := ReadEvent(rec)
		if err := v.Decode(&e); err != nil {
			return fail(err)
		}
		return AppendEvent(nil, &e)
	case TagHintBatch:
		v, err := ReadHintBatch(rec)
		if err != nil {
			return fail(err)
		}
		ev, err := v.Event()
		if err != nil {
			return fail(err)
		}
		var pods [][]byte
		for i := 0; i < v.Len(); i++ {
			p, err := v.Pod(i)
			if err != nil {
				return fail(err)
			}
			pods = append(pods, canonical(t, p.Bytes()))
		}
		return AppendHintBatch(nil, canonical(t, ev.Bytes()), pods)
	case TagVictimBatch:
		v, err := ReadVictimBatch(rec)
		if err != nil {
			return fail(err)
		}
		var pre []byte
		if p, ok := v.Preemptor(); ok {
			pre = canonical(t, p.Bytes())
		}
		return AppendVictimBatch(nil, pre, v.Decode(nil))
	case TagGate:
		var g Gate
		if err := DecodeGate(rec, &g); err != nil {
			return fail(err)
		}
		return AppendGate(nil, &g)
	case TagRegistrations:
		regs, err := DecodeRegistrations(rec)
		if err != nil {
			return fail(err)
		}
		return AppendRegistrations(nil, regs)
	case TagStorage:
		var o StorageObject
		v, _ := ReadStorage(rec)
		if err := v.Decode(&o); err != nil {
			return fail(err)
		}
		return AppendStorage(nil, &o)
	case TagPlacement:
		p, err := decodePlacement(rec)
		if err != nil {
			return fail(err)
		}
		if p.Pod == nil {
			return fail(&Error{Record: TagPlacement, Field: "pod", Problem: "missing"})
		}
		inline := make([][]byte, len(p.Inline))
		for i, n := range p.Inline {
			inline[i] = canonical(t, n)
		}
		return AppendPlacement(nil, canonical(t, p.Pod), p.IDs, inline)
	case TagNodeSync:
		s, err := decodeNodeSync(rec)
		if err != nil {
			return fail(err)
		}
		for i := range s.Upserts {
			s.Upserts[i].Node = canonical(t, s.Upserts[i].Node)
		}
		return AppendNodeSync(nil, s.Reset, s.Upserts, s.Removed)
	case TagVerdicts:
		v, err := decodeVerdicts(rec)
		if err != nil {
			return fail(err)
		}
		return AppendVerdicts(nil, v.Verdicts, v.Reasons)
	case TagPlacementOptions:
		o, err := DecodePlacementOptions(rec)
		if err != nil {
			return fail(err)
		}
		return AppendPlacementOptions(nil, &o)
	}
	t.Fatalf("no decoder for %v", tag)
	return nil
}

// placement, nodeSync and verdicts are the placement records in struct
// form (the records have views only); nested records are kept as bytes.
type placement struct {
	Pod    []byte
	IDs    []uint32
	Inline [][]byte
}

type nodeSync struct {
	Reset   bool
	Upserts []NodeUpsert
	Removed []uint32
}

type verdicts struct {
	Verdicts []uint32
	Reasons  []string
}

// decodePlacement reads a placement record; a pod the record lacks (a
// fixed part that ends before it) is nil.
func decodePlacement(b []byte) (placement, error) {
	var p placement
	v, err := ReadPlacement(b)
	if err != nil {
		return p, err
	}
	if v.r.has(placementPod, refSize) {
		pv, err := v.Pod()
		if err != nil {
			return p, err
		}
		p.Pod = pv.Bytes()
	} else if _, err := v.Pod(); err == nil {
		return p, &Error{Record: TagPlacement, Field: "pod", Problem: "read beyond the fixed part"}
	}
	for i := range v.NumIDs() {
		p.IDs = append(p.IDs, v.ID(i))
	}
	for i := v.NumIDs(); i < v.Len(); i++ {
		nv, err := v.Inline(i)
		if err != nil {
			return p, err
		}
		p.Inline = append(p.Inline, nv.Bytes())
	}
	return p, nil
}

func decodeNodeSync(b []byte) (nodeSync, error) {
	var s nodeSync
	v, err := ReadNodeSync(b)
	if err != nil {
		return s, err
	}
	s.Reset = v.Reset()
	for i := range v.NumUpserts() {
		id, n, err := v.Upsert(i)
		if err != nil {
			return s, err
		}
		s.Upserts = append(s.Upserts, NodeUpsert{ID: id, Node: n})
	}
	for i := range v.NumRemoved() {
		s.Removed = append(s.Removed, v.Removed(i))
	}
	return s, nil
}

// decodeVerdicts reads a verdicts record for as many nodes as it holds
// verdicts.
func decodeVerdicts(b []byte) (verdicts, error) {
	var out verdicts
	r, err := readRecord(b, TagVerdicts)
	if err != nil {
		return out, err
	}
	v, err := ReadVerdicts(b, r.list(verdictsList, 4).len())
	if err != nil {
		return out, err
	}
	for i := range v.Len() {
		out.Verdicts = append(out.Verdicts, Verdict(v.Code(i), v.ReasonIndex(i)))
	}
	for j := range v.NumReasons() {
		out.Reasons = append(out.Reasons, v.Reason(j))
	}
	return out, nil
}

// TestNewerMinor reads records with a longer fixed part than today's, as a
// newer minor would send them: the unknown fields are ignored and everything
// else reads as before, so re-encoding gives today's bytes back.
func TestNewerMinor(t *testing.T) {
	for _, tc := range []struct {
		name   string
		layout []ref
	}{
		{"pod-full", podLayout}, {"pod-empty", podLayout}, {"node-full", nodeLayout},
		{"podgroup-full", groupLayout}, {"event-node-update", eventLayout}, {"event-pod-delete", eventLayout},
		{"hintbatch-3-pods", hintLayout}, {"victimbatch-preemptor", victimLayout},
		{"gate-wait", gateLayout}, {"registrations", regsLayout},
		{"storage-full", storageLayout}, {"storage-minimal", storageLayout}, {"event-csinode-update", eventLayout},
		{"event-resourceclaim-deallocate", eventLayout},
		{"placement-ids", placementLayout}, {"placement-inline", placementLayout},
		{"nodesync-reset", syncLayout}, {"nodesync-delta", syncLayout},
		{"verdicts", verdictsLayout}, {"placementoptions", optionsLayout},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := golden(t, tc.name)
			for _, extra := range []uint32{4, 16, 200} {
				wide := widen(rec, tc.layout, extra)
				if got := canonical(t, wide); !bytes.Equal(got, rec) {
					t.Errorf("%d extra fixed bytes: re-encoded record differs from today's", extra)
				}
			}
		})
	}
}

// TestLayoutTables checks that the transcribed layouts find every byte of the
// golden records: the fixed part plus every referenced range tile the record
// exactly (the encoders never leave gaps nor share bytes).
func TestLayoutTables(t *testing.T) {
	for name, layout := range map[string][]ref{
		"pod-full": podLayout, "node-full": nodeLayout, "podgroup-full": groupLayout,
		"event-node-update": eventLayout, "hintbatch-3-pods": hintLayout, "victimbatch-preemptor": victimLayout,
		"gate-wait": gateLayout, "registrations": regsLayout, "storage-full": storageLayout,
		"storage-csinode": storageLayout, "event-csinode-update": eventLayout,
		"placement-ids": placementLayout, "placement-inline": placementLayout, "nodesync-reset": syncLayout,
		"nodesync-delta": syncLayout, "verdicts": verdictsLayout, "placementoptions": optionsLayout,
	} {
		rec := golden(t, name)
		covered := int(binary.LittleEndian.Uint16(rec[6:]))
		for _, at := range refPositions(rec, 0, layout, nil) {
			covered += int(binary.LittleEndian.Uint32(rec[at+4:])) * elemSizeAt(layout, rec, at)
		}
		if covered != len(rec) {
			t.Errorf("%s: fixed part and references cover %d bytes of %d", name, covered, len(rec))
		}
	}
}

// elemSizeAt returns the element size of the reference at position at (1 for
// strings and nested records).
func elemSizeAt(layout []ref, rec []byte, at uint32) int {
	var find func(base uint32, layout []ref) int
	find = func(base uint32, layout []ref) int {
		for _, r := range layout {
			if base+r.off == at {
				return max(int(r.elem), 1)
			}
			if r.elem == 0 {
				continue
			}
			pos, n := binary.LittleEndian.Uint32(rec[base+r.off:]), binary.LittleEndian.Uint32(rec[base+r.off+4:])
			for i := uint32(0); i < n; i++ {
				if s := find(pos+i*r.elem, r.sub); s != 0 {
					return s
				}
			}
		}
		return 0
	}
	return find(0, layout)
}

// crafted builds a record by hand: a fixed part of fixed bytes, then parts
// appended with put/alloc.
type crafted struct{ b []byte }

func newCrafted(tag Tag, fixed int) *crafted {
	c := &crafted{b: make([]byte, fixed)}
	binary.LittleEndian.PutUint16(c.b[4:], uint16(tag))
	binary.LittleEndian.PutUint16(c.b[6:], uint16(fixed))
	return c
}

// alloc appends n zero bytes and returns their position.
func (c *crafted) alloc(n int) int {
	pos := len(c.b)
	c.b = append(c.b, make([]byte, n)...)
	return pos
}

func (c *crafted) ref(at, pos, n int) {
	binary.LittleEndian.PutUint32(c.b[at:], uint32(pos))
	binary.LittleEndian.PutUint32(c.b[at+4:], uint32(n))
}

func (c *crafted) bytes() []byte {
	binary.LittleEndian.PutUint32(c.b, uint32(len(c.b)))
	return c.b
}

// overlappingAffinity is a 3.7 KiB pod whose 32 affinity terms all name one
// list of 40 requirements, each naming one list of 128 values, each the same
// 1 KiB string. Before the decode budget, Decode copied 2*32*40*128 KiB
// (331 MiB allocated).
func overlappingAffinity() []byte {
	const terms, reqs, vals, strLen = 32, 40, 128, 1024
	c := newCrafted(TagPod, podFixed)
	str := c.alloc(strLen)
	vl := c.alloc(vals * strSize)
	for i := 0; i < vals; i++ {
		c.ref(vl+i*strSize, str, strLen)
	}
	rl := c.alloc(reqs * requirementSize)
	for i := 0; i < reqs; i++ {
		c.ref(rl+i*requirementSize, str, 8)
		c.ref(rl+i*requirementSize+16, vl, vals)
	}
	tl := c.alloc(terms * termSize)
	for i := 0; i < terms; i++ {
		c.ref(tl+i*termSize, rl, reqs)
		c.ref(tl+i*termSize+8, rl, reqs)
	}
	c.ref(podAffinity, tl, terms)
	return c.bytes()
}

// overlappingKVs is a record whose list at listOff (of elem-byte elements
// starting with key and value strings) uses the same long key and value in
// every element.
func overlappingKVs(tag Tag, fixed, listOff, elem int) []byte {
	const n, strLen = 64, 2048
	c := newCrafted(tag, fixed)
	str := c.alloc(strLen)
	l := c.alloc(n * elem)
	for i := 0; i < n; i++ {
		c.ref(l+i*elem, str, strLen)
		c.ref(l+i*elem+8, str, strLen)
	}
	c.ref(listOff, l, n)
	return c.bytes()
}

// TestDecodeOverlapBudget: crafted records whose references overlap are
// refused, quickly and without allocating much, by every decoder.
func TestDecodeOverlapBudget(t *testing.T) {
	pod := golden(t, "pod-gang-member")
	event := newCrafted(TagEvent, eventFixed)
	binary.LittleEndian.PutUint32(event.b[eventResource:], uint32(ResourceUnscheduledPod))
	p := event.alloc(len(pod))
	copy(event.b[p:], pod)
	event.ref(eventOld, p, len(pod))
	event.ref(eventNew, p, len(pod))

	victims := newCrafted(TagVictimBatch, vbFixed)
	str := victims.alloc(1000)
	l := victims.alloc(8 * victimSize)
	for i := 0; i < 8; i++ {
		victims.ref(l+i*victimSize+40, str, 1000)
	}
	victims.ref(vbVictims, l, 8)

	for _, tc := range []struct {
		name   string
		rec    []byte
		decode func([]byte) error
	}{
		{"pod affinity", overlappingAffinity(), decodePodBytes},
		{"pod labels", overlappingKVs(TagPod, podFixed, podLabels, kvSize), decodePodBytes},
		{"pod node selector", overlappingKVs(TagPod, podFixed, podNodeSelector, kvSize), decodePodBytes},
		{"pod tolerations", overlappingKVs(TagPod, podFixed, podTolerations, tolerationSize), decodePodBytes},
		{"pod namespace labels", overlappingKVs(TagPod, podFixed, podNSLabels, kvSize), decodePodBytes},
		{"node images", overlappingKVs(TagNode, nodeFixed, nodeImages, imageSize), func(b []byte) error {
			v, err := ReadNode(b)
			if err != nil {
				return err
			}
			return v.Decode(&Node{})
		}},
		{"verdicts reasons", overlappingReasons(), func(b []byte) error {
			_, err := ReadVerdicts(b, 0)
			return err
		}},
		{"node taints", overlappingKVs(TagNode, nodeFixed, nodeTaints, taintSize), func(b []byte) error {
			v, err := ReadNode(b)
			if err != nil {
				return err
			}
			return v.Decode(&Node{})
		}},
		{"event old and new", event.bytes(), func(b []byte) error {
			v, err := ReadEvent(b)
			if err != nil {
				return err
			}
			return v.Decode(&Event{})
		}},
		{"victim names", victims.bytes(), func(b []byte) error {
			_, err := ReadVictimBatch(b)
			return err
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			err := tc.decode(tc.rec)
			runtime.ReadMemStats(&after)
			if err == nil || !bytes.Contains([]byte(err.Error()), []byte("references overlap")) {
				t.Errorf("decode of %d crafted bytes: error %v, want references overlap", len(tc.rec), err)
			}
			if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 1<<20 {
				t.Errorf("decode of %d crafted bytes allocated %d bytes", len(tc.rec), alloc)
			}
		})
	}
}

// overlappingReasons is a verdicts record whose 64 reasons are all the same
// string of the longest length allowed: each reason is valid, but together
// they span 64 KiB of a 1.5 KiB record.
func overlappingReasons() []byte {
	const n, strLen = 64, MaxReasonLen
	c := newCrafted(TagVerdicts, verdictsFixed)
	str := c.alloc(strLen)
	copy(c.b[str:], bytes.Repeat([]byte("r"), strLen))
	l := c.alloc(n * strSize)
	for i := 0; i < n; i++ {
		c.ref(l+i*strSize, str, strLen)
	}
	c.ref(verdictsReasons, l, n)
	return c.bytes()
}

func decodePodBytes(b []byte) error {
	v, err := ReadPod(b)
	if err != nil {
		return err
	}
	return v.Decode(&Pod{})
}
