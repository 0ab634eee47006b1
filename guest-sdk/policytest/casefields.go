package policytest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/wasmsched/wasmsched/abi"
)

// The objects of a case file decode straight into the abi records, one table
// row per YAML key. A row names the record's field; the enumerations decode
// with their own UnmarshalText (abi/text.go). The conveniences of the format
// are in the row's decoder: times (RFC 3339 or Unix seconds), quantities
// (cpu: 500m), maps for labels and selectors, a victim's group size.

// field decodes the value of one YAML key into rec; path names the value in
// errors (pods[1].tolerations[0].operator).
type field[T any] func(rec *T, raw json.RawMessage, path string) error

// fields are the keys of a record and their decoders.
type fields[T any] map[string]field[T]

// decode reads the JSON object raw into rec, key by key in file order. An
// unknown key is an error; keys match as in encoding/json (exactly, else
// ignoring case). Absent or null, raw leaves rec as it is.
func (fs fields[T]) decode(raw json.RawMessage, rec *T, path string) error {
	if isNull(raw) {
		return nil
	}
	d := json.NewDecoder(bytes.NewReader(raw))
	tok, err := d.Token()
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if tok != json.Delim('{') {
		return fmt.Errorf("%s: want a map of fields, got %s", path, raw)
	}
	for d.More() {
		tok, err := d.Token()
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		key, _ := tok.(string)
		var v json.RawMessage
		if err := d.Decode(&v); err != nil {
			return fmt.Errorf("%s.%s: %w", path, key, err)
		}
		f, ok := fs[key]
		if !ok {
			for k, g := range fs {
				if strings.EqualFold(k, key) {
					f, ok = g, true
					break
				}
			}
		}
		if !ok {
			return fmt.Errorf("%s: unknown field %q", path, key)
		}
		if err := f(rec, v, path+"."+key); err != nil {
			return err
		}
	}
	return nil
}

// isNull reports whether raw is absent or null.
func isNull(raw json.RawMessage) bool { return raw == nil || string(raw) == "null" }

// val decodes the value with encoding/json: strings, numbers, booleans,
// lists of strings and the abi enumerations (by name).
func val[T, V any](get func(*T) *V) field[T] {
	return func(rec *T, raw json.RawMessage, path string) error {
		if err := json.Unmarshal(raw, get(rec)); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		return nil
	}
}

// record decodes a nested record.
func record[T, E any](get func(*T) *E, fs fields[E]) field[T] {
	return func(rec *T, raw json.RawMessage, path string) error {
		return fs.decode(raw, get(rec), path)
	}
}

// listOf decodes a list of records.
func listOf[T, E any](get func(*T) *[]E, fs fields[E]) field[T] {
	return func(rec *T, raw json.RawMessage, path string) error {
		var raws []json.RawMessage
		if err := json.Unmarshal(raw, &raws); err != nil {
			return fmt.Errorf("%s: want a list: %w", path, err)
		}
		out := make([]E, len(raws))
		for i, r := range raws {
			if err := fs.decode(r, &out[i], fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
		*get(rec) = out
		return nil
	}
}

// timestamp decodes a time as Unix nanoseconds from an RFC 3339 string or
// a number of Unix seconds.
func timestamp[T any](get func(*T) *int64) field[T] {
	return func(rec *T, raw json.RawMessage, path string) error {
		v, err := parseTime(raw)
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		*get(rec) = v
		return nil
	}
}

func parseTime(b json.RawMessage) (int64, error) {
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return 0, err
		}
		v, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			return 0, fmt.Errorf("time %q: want RFC 3339 (2026-01-02T15:04:05Z) or Unix seconds", s)
		}
		return v.UnixNano(), nil
	}
	var sec float64
	if err := json.Unmarshal(b, &sec); err != nil {
		return 0, fmt.Errorf("time %s: want RFC 3339 (2026-01-02T15:04:05Z) or Unix seconds", b)
	}
	if math.Abs(sec) > math.MaxInt64/1e9 {
		return 0, fmt.Errorf("time %s: out of range", b)
	}
	return int64(math.Round(sec * 1e9)), nil
}

// kvs decodes a map of strings into entries sorted by key.
func kvs[T any](get func(*T) *[]abi.KV) field[T] {
	return func(rec *T, raw json.RawMessage, path string) error {
		var m map[string]string
		if err := json.Unmarshal(raw, &m); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		out := make([]abi.KV, 0, len(m))
		for k, v := range m {
			out = append(out, abi.KV{Key: k, Value: v})
		}
		slices.SortFunc(out, func(a, b abi.KV) int { return strings.Compare(a.Key, b.Key) })
		*get(rec) = out
		return nil
	}
}

// quantities decodes resource amounts as Kubernetes writes them (cpu: 500m,
// memory: 1Gi): cpu in millicores and everything else in base units, as in
// the abi records, sorted by name.
func quantities[T any](get func(*T) *[]abi.Quantity) field[T] {
	return func(rec *T, raw json.RawMessage, path string) error {
		var m map[string]json.RawMessage
		if err := json.Unmarshal(raw, &m); err != nil {
			return fmt.Errorf("%s: want a map of resource name to quantity", path)
		}
		out := make([]abi.Quantity, 0, len(m))
		for name, raw := range m {
			s := strings.Trim(string(raw), `"`)
			v, err := resource.ParseQuantity(s)
			if err != nil {
				return fmt.Errorf("%s: %s: quantity %s: %v", path, name, raw, err)
			}
			n := v.Value()
			if name == "cpu" {
				n = v.MilliValue()
			}
			out = append(out, abi.Quantity{Name: name, Value: n})
		}
		slices.SortFunc(out, func(a, b abi.Quantity) int { return strings.Compare(a.Name, b.Name) })
		*get(rec) = out
		return nil
	}
}

var podFields = fields[abi.Pod]{
	"name":                 val(func(p *abi.Pod) *string { return &p.Name }),
	"namespace":            val(func(p *abi.Pod) *string { return &p.Namespace }),
	"uid":                  val(func(p *abi.Pod) *string { return &p.UID }),
	"node":                 val(func(p *abi.Pod) *string { return &p.NodeName }),
	"priority":             val(func(p *abi.Pod) *int32 { return &p.Priority }),
	"preemptNever":         val(func(p *abi.Pod) *bool { return &p.PreemptNever }),
	"created":              timestamp(func(p *abi.Pod) *int64 { return &p.CreationTime }),
	"queued":               timestamp(func(p *abi.Pod) *int64 { return &p.QueuedTime }),
	"initialAttempt":       timestamp(func(p *abi.Pod) *int64 { return &p.InitialAttemptTime }),
	"backoffExpiry":        timestamp(func(p *abi.Pod) *int64 { return &p.BackoffExpiry }),
	"attempts":             val(func(p *abi.Pod) *int32 { return &p.Attempts }),
	"lastFailureError":     val(func(p *abi.Pod) *bool { return &p.LastFailureError }),
	"unschedulablePlugins": val(func(p *abi.Pod) *[]string { return &p.UnschedulablePlugins }),
	"pendingPlugins":       val(func(p *abi.Pod) *[]string { return &p.PendingPlugins }),
	"group":                record(func(p *abi.Pod) *abi.PodGroupRef { return &p.Group }, groupRefFields),
	"labels":               kvs(func(p *abi.Pod) *[]abi.KV { return &p.Labels }),
	"requests":             quantities(func(p *abi.Pod) *[]abi.Quantity { return &p.Requests }),
	"schedulingGates":      val(func(p *abi.Pod) *[]string { return &p.SchedulingGates }),
	"nodeSelector":         kvs(func(p *abi.Pod) *[]abi.KV { return &p.NodeSelector }),
	"tolerations":          listOf(func(p *abi.Pod) *[]abi.Toleration { return &p.Tolerations }, tolerationFields),
	"hostPorts":            listOf(func(p *abi.Pod) *[]abi.HostPort { return &p.HostPorts }, hostPortFields),
	"requiredAffinity":     listOf(func(p *abi.Pod) *[]abi.NodeSelectorTerm { return &p.RequiredAffinity }, termFields),
	"claims":               val(func(p *abi.Pod) *[]string { return &p.Claims }),
	"ephemeralClaims":      val(func(p *abi.Pod) *[]string { return &p.EphemeralClaims }),
	"volumeDrivers":        val(func(p *abi.Pod) *[]string { return &p.VolumeDrivers }),
	"resourceClaims":       val(func(p *abi.Pod) *[]string { return &p.ResourceClaims }),
	"namespaceLabels":      kvs(func(p *abi.Pod) *[]abi.KV { return &p.NamespaceLabels }),
	"ownerKind":            val(func(p *abi.Pod) *string { return &p.OwnerKind }),
	// ABI minor 4.
	"podAffinity":               listOf(func(p *abi.Pod) *[]abi.PodAffinityTerm { return &p.PodAffinity }, podTermFields),
	"podAntiAffinity":           listOf(func(p *abi.Pod) *[]abi.PodAffinityTerm { return &p.PodAntiAffinity }, podTermFields),
	"preferredPodAffinity":      listOf(func(p *abi.Pod) *[]abi.PodAffinityTerm { return &p.PreferredPodAffinity }, podTermFields),
	"preferredPodAntiAffinity":  listOf(func(p *abi.Pod) *[]abi.PodAffinityTerm { return &p.PreferredPodAntiAffinity }, podTermFields),
	"topologySpreadConstraints": listOf(func(p *abi.Pod) *[]abi.SpreadConstraint { return &p.SpreadConstraints }, spreadFields),
	// addedAffinity (the profile's NodeAffinity addedAffinity terms) also
	// sets HasAddedAffinity.
	"addedAffinity": func(p *abi.Pod, raw json.RawMessage, path string) error {
		p.HasAddedAffinity = true
		return listOf(func(p *abi.Pod) *[]abi.NodeSelectorTerm { return &p.AddedAffinity }, termFields)(p, raw, path)
	},
	"requiredFeatures": val(func(p *abi.Pod) *[]string { return &p.RequiredFeatures }),
}

// podTermFields: a pod affinity term; selector is the labelSelector as
// requirements (noSelector: a nil labelSelector, which selects nothing),
// namespaceSelector likewise; noNamespaceSelector defaults to true when
// namespaceSelector is left out (see decodePod).
var podTermFields = fields[abi.PodAffinityTerm]{
	"selector":            listOf(func(t *abi.PodAffinityTerm) *[]abi.Requirement { return &t.Selector }, requirementFields),
	"noSelector":          val(func(t *abi.PodAffinityTerm) *bool { return &t.NoSelector }),
	"namespaces":          val(func(t *abi.PodAffinityTerm) *[]string { return &t.Namespaces }),
	"namespaceSelector":   listOf(func(t *abi.PodAffinityTerm) *[]abi.Requirement { return &t.NamespaceSelector }, requirementFields),
	"noNamespaceSelector": val(func(t *abi.PodAffinityTerm) *bool { return &t.NoNamespaceSelector }),
	"topologyKey":         val(func(t *abi.PodAffinityTerm) *string { return &t.TopologyKey }),
	"weight":              val(func(t *abi.PodAffinityTerm) *int32 { return &t.Weight }),
}

// spreadFields: a topology spread constraint, with the API's defaults
// applied by decodePod (minDomains 1, nodeAffinityPolicy Honor,
// nodeTaintsPolicy Ignore, whenUnsatisfiable DoNotSchedule).
var spreadFields = fields[abi.SpreadConstraint]{
	"maxSkew":            val(func(c *abi.SpreadConstraint) *int32 { return &c.MaxSkew }),
	"topologyKey":        val(func(c *abi.SpreadConstraint) *string { return &c.TopologyKey }),
	"whenUnsatisfiable":  val(func(c *abi.SpreadConstraint) *abi.SpreadAction { return &c.WhenUnsatisfiable }),
	"selector":           listOf(func(c *abi.SpreadConstraint) *[]abi.Requirement { return &c.Selector }, requirementFields),
	"noSelector":         val(func(c *abi.SpreadConstraint) *bool { return &c.NoSelector }),
	"matchLabelKeys":     val(func(c *abi.SpreadConstraint) *[]string { return &c.MatchLabelKeys }),
	"minDomains":         val(func(c *abi.SpreadConstraint) *int32 { return &c.MinDomains }),
	"nodeAffinityPolicy": val(func(c *abi.SpreadConstraint) *abi.InclusionPolicy { return &c.NodeAffinityPolicy }),
	"nodeTaintsPolicy":   val(func(c *abi.SpreadConstraint) *abi.InclusionPolicy { return &c.NodeTaintsPolicy }),
}

var groupRefFields = fields[abi.PodGroupRef]{
	"name":       val(func(g *abi.PodGroupRef) *string { return &g.Name }),
	"minCount":   val(func(g *abi.PodGroupRef) *int32 { return &g.MinCount }),
	"priority":   val(func(g *abi.PodGroupRef) *int32 { return &g.Priority }),
	"members":    val(func(g *abi.PodGroupRef) *int32 { return &g.Members }),
	"disruption": val(func(g *abi.PodGroupRef) *abi.DisruptionMode { return &g.DisruptionMode }),
}

var tolerationFields = fields[abi.Toleration]{
	"key":      val(func(t *abi.Toleration) *string { return &t.Key }),
	"value":    val(func(t *abi.Toleration) *string { return &t.Value }),
	"operator": val(func(t *abi.Toleration) *abi.TolerationOperator { return &t.Operator }),
	"effect":   val(func(t *abi.Toleration) *abi.TaintEffect { return &t.Effect }),
}

var hostPortFields = fields[abi.HostPort]{
	"hostIP":   val(func(h *abi.HostPort) *string { return &h.HostIP }),
	"port":     val(func(h *abi.HostPort) *int32 { return &h.Port }),
	"protocol": val(func(h *abi.HostPort) *abi.Protocol { return &h.Protocol }),
}

var termFields = fields[abi.NodeSelectorTerm]{
	"matchExpressions": listOf(func(t *abi.NodeSelectorTerm) *[]abi.Requirement { return &t.MatchExpressions }, requirementFields),
	"matchFields":      listOf(func(t *abi.NodeSelectorTerm) *[]abi.Requirement { return &t.MatchFields }, requirementFields),
}

var requirementFields = fields[abi.Requirement]{
	"key":      val(func(r *abi.Requirement) *string { return &r.Key }),
	"operator": val(func(r *abi.Requirement) *abi.SelectorOperator { return &r.Operator }),
	"values":   val(func(r *abi.Requirement) *[]string { return &r.Values }),
}

var nodeFields = fields[abi.Node]{
	"name":          val(func(n *abi.Node) *string { return &n.Name }),
	"unschedulable": val(func(n *abi.Node) *bool { return &n.Unschedulable }),
	"labels":        kvs(func(n *abi.Node) *[]abi.KV { return &n.Labels }),
	"taints":        listOf(func(n *abi.Node) *[]abi.Taint { return &n.Taints }, taintFields),
	"allocatable":   quantities(func(n *abi.Node) *[]abi.Quantity { return &n.Allocatable }),
	"requested":     quantities(func(n *abi.Node) *[]abi.Quantity { return &n.Requested }),
	"images":        listOf(func(n *abi.Node) *[]abi.Image { return &n.Images }, imageFields),
}

// imageFields: a container image on a node; size is in bytes, a number or
// a quantity (500Mi).
var imageFields = fields[abi.Image]{
	"name": val(func(i *abi.Image) *string { return &i.Name }),
	"size": func(i *abi.Image, raw json.RawMessage, path string) error {
		q, err := resource.ParseQuantity(strings.Trim(string(raw), `"`))
		if err != nil {
			return fmt.Errorf("%s: quantity %s: %v", path, raw, err)
		}
		i.Size = q.Value()
		return nil
	},
}

var taintFields = fields[abi.Taint]{
	"key":    val(func(t *abi.Taint) *string { return &t.Key }),
	"value":  val(func(t *abi.Taint) *string { return &t.Value }),
	"effect": val(func(t *abi.Taint) *abi.TaintEffect { return &t.Effect }),
}

// storageFields: a storage or DRA object (abi.StorageObject); capacity, when
// given, sets the limit (bytes).
var storageFields = fields[abi.StorageObject]{
	"namespace":        val(func(o *abi.StorageObject) *string { return &o.Namespace }),
	"name":             val(func(o *abi.StorageObject) *string { return &o.Name }),
	"storageClass":     val(func(o *abi.StorageObject) *string { return &o.StorageClass }),
	"volumeName":       val(func(o *abi.StorageObject) *string { return &o.VolumeName }),
	"claimNamespace":   val(func(o *abi.StorageObject) *string { return &o.ClaimNamespace }),
	"claimName":        val(func(o *abi.StorageObject) *string { return &o.ClaimName }),
	"node":             val(func(o *abi.StorageObject) *string { return &o.NodeName }),
	"driver":           val(func(o *abi.StorageObject) *string { return &o.Driver }),
	"migratedPlugins":  val(func(o *abi.StorageObject) *string { return &o.MigratedPlugins }),
	"phase":            val(func(o *abi.StorageObject) *abi.VolumePhase { return &o.Phase }),
	"bindingMode":      val(func(o *abi.StorageObject) *abi.BindingMode { return &o.BindingMode }),
	"nodeAffinity":     val(func(o *abi.StorageObject) *bool { return &o.NodeAffinity }),
	"capacityTracking": val(func(o *abi.StorageObject) *bool { return &o.CapacityTracking }),
	"capacity": func(o *abi.StorageObject, raw json.RawMessage, path string) error {
		if isNull(raw) {
			return nil
		}
		if err := json.Unmarshal(raw, &o.Capacity); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		o.HasCapacity = true
		return nil
	},
	"labels":   kvs(func(o *abi.StorageObject) *[]abi.KV { return &o.Labels }),
	"topology": listOf(func(o *abi.StorageObject) *[]abi.NodeSelectorTerm { return &o.Topology }, termFields),
	"drivers":  listOf(func(o *abi.StorageObject) *[]abi.CSIDriverLimit { return &o.Drivers }, csiDriverFields),
	// The DRA kinds (ABI minor 2).
	"allocated":     val(func(o *abi.StorageObject) *bool { return &o.Allocated }),
	"reservedFor":   val(func(o *abi.StorageObject) *int32 { return &o.ReservedFor }),
	"pool":          val(func(o *abi.StorageObject) *string { return &o.Pool }),
	"deviceClasses": val(func(o *abi.StorageObject) *[]string { return &o.DeviceClasses }),
}

// csiDriverFields: a CSINode's driver; allocatable, when given, sets the count.
var csiDriverFields = fields[abi.CSIDriverLimit]{
	"name": val(func(d *abi.CSIDriverLimit) *string { return &d.Name }),
	"allocatable": func(d *abi.CSIDriverLimit, raw json.RawMessage, path string) error {
		if isNull(raw) {
			return nil
		}
		if err := json.Unmarshal(raw, &d.Allocatable); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		d.HasAllocatable = true
		return nil
	},
}

var podGroupFields = fields[abi.PodGroup]{
	"namespace":    val(func(g *abi.PodGroup) *string { return &g.Namespace }),
	"name":         val(func(g *abi.PodGroup) *string { return &g.Name }),
	"minCount":     val(func(g *abi.PodGroup) *int32 { return &g.MinCount }),
	"priority":     val(func(g *abi.PodGroup) *int32 { return &g.Priority }),
	"preemptNever": val(func(g *abi.PodGroup) *bool { return &g.PreemptNever }),
	"disruption":   val(func(g *abi.PodGroup) *abi.DisruptionMode { return &g.DisruptionMode }),
	"members":      val(func(g *abi.PodGroup) *int32 { return &g.Members }),
}

// victimFields: a victim is a pod unless group gives the members of a pod
// group (disruption mode all).
var victimFields = fields[abi.Victim]{
	"name":         val(func(v *abi.Victim) *string { return &v.Name }),
	"namespace":    val(func(v *abi.Victim) *string { return &v.Namespace }),
	"uid":          val(func(v *abi.Victim) *string { return &v.UID }),
	"priority":     val(func(v *abi.Victim) *int32 { return &v.Priority }),
	"started":      timestamp(func(v *abi.Victim) *int64 { return &v.StartTime }),
	"group":        val(func(v *abi.Victim) *int32 { return &v.Members }),
	"pdbViolating": val(func(v *abi.Victim) *bool { return &v.PDBViolating }),
}

// eventFields: old and new are objects, each one of node, pod, podGroup or
// storage (a storage resource's object).
var eventFields = fields[abi.Event]{
	"resource": func(e *abi.Event, raw json.RawMessage, path string) error {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		if err := e.Resource.UnmarshalText([]byte(s)); err != nil || e.Resource == abi.ResourceWildcard {
			return fmt.Errorf("%s: %q: %s", path, s, wantResource) // an event is about one resource
		}
		return nil
	},
	"action": val(func(e *abi.Event) *abi.ActionType { return &e.Action }),
	"old":    object(func(e *abi.Event) *[]byte { return &e.Old }),
	"new":    object(func(e *abi.Event) *[]byte { return &e.New }),
}

// object decodes the old or new object of an event into its encoded record.
func object(get func(*abi.Event) *[]byte) field[abi.Event] {
	type encoded struct {
		rec []byte
		n   int // objects given; exactly one is right
	}
	one := func(enc func(raw json.RawMessage, path string) ([]byte, error)) field[encoded] {
		return func(o *encoded, raw json.RawMessage, path string) error {
			if isNull(raw) {
				return nil
			}
			o.n++
			var err error
			o.rec, err = enc(raw, path)
			return err
		}
	}
	objFields := fields[encoded]{
		"node": one(func(raw json.RawMessage, path string) ([]byte, error) {
			n, err := decodeNode(raw, path)
			if err != nil {
				return nil, err
			}
			return abi.AppendNode(nil, n), nil
		}),
		"pod": one(func(raw json.RawMessage, path string) ([]byte, error) {
			p, err := decodePod(raw, path)
			if err != nil {
				return nil, err
			}
			return abi.AppendPod(nil, p), nil
		}),
		"podGroup": one(func(raw json.RawMessage, path string) ([]byte, error) {
			var g abi.PodGroup
			if err := podGroupFields.decode(raw, &g, path); err != nil {
				return nil, err
			}
			return abi.AppendPodGroup(nil, &g), nil
		}),
		"storage": one(func(raw json.RawMessage, path string) ([]byte, error) {
			var o abi.StorageObject
			if err := storageFields.decode(raw, &o, path); err != nil {
				return nil, err
			}
			return abi.AppendStorage(nil, &o), nil
		}),
	}
	return func(e *abi.Event, raw json.RawMessage, path string) error {
		if isNull(raw) {
			return nil
		}
		var o encoded
		if err := objFields.decode(raw, &o, path); err != nil {
			return err
		}
		if o.n != 1 {
			return fmt.Errorf("%s: want exactly one of node, pod, podGroup, storage", path)
		}
		*get(e) = o.rec
		return nil
	}
}

// decodePod reads a pod; its UID defaults to namespace/name.
func decodePod(raw json.RawMessage, path string) (*abi.Pod, error) {
	var p abi.Pod
	if err := podFields.decode(raw, &p, path); err != nil {
		return nil, err
	}
	if p.UID == "" {
		p.UID = p.Namespace + "/" + p.Name
	}
	if err := podTermDefaults(raw, &p, path); err != nil {
		return nil, err
	}
	for i := range p.SpreadConstraints {
		c := &p.SpreadConstraints[i]
		if c.WhenUnsatisfiable == abi.SpreadUnknown {
			c.WhenUnsatisfiable = abi.SpreadDoNotSchedule
		}
		if c.MinDomains == 0 {
			c.MinDomains = 1
		}
		if c.NodeAffinityPolicy == abi.InclusionUnknown {
			c.NodeAffinityPolicy = abi.InclusionHonor
		}
		if c.NodeTaintsPolicy == abi.InclusionUnknown {
			c.NodeTaintsPolicy = abi.InclusionIgnore
		}
	}
	for i, t := range p.RequiredAffinity {
		for _, rs := range []struct {
			name string
			reqs []abi.Requirement
		}{{"matchExpressions", t.MatchExpressions}, {"matchFields", t.MatchFields}} {
			for j, r := range rs.reqs {
				if r.Operator == abi.SelectorUnknown { // left out: the operator has no default
					err := new(abi.SelectorOperator).UnmarshalText(nil)
					return nil, fmt.Errorf("%s.requiredAffinity[%d].%s[%d].operator: %w", path, i, rs.name, j, err)
				}
			}
		}
	}
	return &p, nil
}

// podTermDefaults sets NoNamespaceSelector on the pod affinity terms that
// leave namespaceSelector out, as a nil namespaceSelector is in Kubernetes.
func podTermDefaults(raw json.RawMessage, p *abi.Pod, path string) error {
	var lists map[string][]map[string]json.RawMessage
	var all map[string]json.RawMessage
	if err := json.Unmarshal(raw, &all); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	lists = map[string][]map[string]json.RawMessage{}
	for _, k := range []string{"podAffinity", "podAntiAffinity", "preferredPodAffinity", "preferredPodAntiAffinity"} {
		if r, ok := all[k]; ok {
			var terms []map[string]json.RawMessage
			if err := json.Unmarshal(r, &terms); err == nil {
				lists[k] = terms
			}
		}
	}
	for k, ts := range map[string][]abi.PodAffinityTerm{"podAffinity": p.PodAffinity, "podAntiAffinity": p.PodAntiAffinity,
		"preferredPodAffinity": p.PreferredPodAffinity, "preferredPodAntiAffinity": p.PreferredPodAntiAffinity} {
		for i := range ts {
			if i < len(lists[k]) {
				if _, ok := lists[k][i]["namespaceSelector"]; !ok {
					ts[i].NoNamespaceSelector = true
				}
			}
		}
	}
	return nil
}

// decodeNode reads a node; a taint needs an effect.
func decodeNode(raw json.RawMessage, path string) (*abi.Node, error) {
	var n abi.Node
	if err := nodeFields.decode(raw, &n, path); err != nil {
		return nil, err
	}
	for i, t := range n.Taints {
		if t.Effect == abi.EffectNone {
			return nil, fmt.Errorf("%s.taints[%d].effect: %q: want one of NoSchedule, PreferNoSchedule, NoExecute", path, i, "")
		}
	}
	return &n, nil
}

// decodeVictim reads a victim; its UID defaults to namespace/name.
func decodeVictim(raw json.RawMessage, path string) (abi.Victim, error) {
	var v abi.Victim
	if err := victimFields.decode(raw, &v, path); err != nil {
		return v, err
	}
	if v.Members > 0 {
		v.Kind = abi.VictimGroup
	} else {
		v.Kind, v.Members = abi.VictimPod, 0
	}
	if v.UID == "" {
		v.UID = v.Namespace + "/" + v.Name
	}
	return v, nil
}

const wantResource = "want one of Pod, UnscheduledPod, Node, PodGroup, PersistentVolume, PersistentVolumeClaim, " +
	"StorageClass, CSINode, CSIDriver, CSIStorageCapacity, VolumeAttachment"

// decodeEvent reads an event; resource and action are required.
func decodeEvent(raw json.RawMessage, path string) (*abi.Event, error) {
	var e abi.Event
	if err := eventFields.decode(raw, &e, path); err != nil {
		return nil, err
	}
	if e.Resource == 0 {
		return nil, fmt.Errorf("%s.resource: %q: %s", path, "", wantResource)
	}
	if e.Action == 0 {
		err := new(abi.ActionType).UnmarshalText(nil)
		return nil, fmt.Errorf("%s.action: %w", path, err)
	}
	return &e, nil
}

// podView encodes p as the host sends it.
func podView(p *abi.Pod, path string) (abi.PodView, error) {
	v, err := abi.ReadPod(abi.AppendPod(nil, p))
	if err != nil {
		return abi.PodView{}, fmt.Errorf("%s: %w", path, err)
	}
	return v, nil
}
