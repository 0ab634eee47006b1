package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/yaml"

	"github.com/wasmsched/wasmsched/abi"
	"github.com/wasmsched/wasmsched/config"
	"github.com/wasmsched/wasmsched/host/policy"
	"github.com/wasmsched/wasmsched/host/wasm"
)

// `wasmsched policy test MODULE --cases CASES.yaml` runs a table of inputs
// through one slot of a module, loaded as the scheduler loads it (sandbox
// limits from -config and -set), and compares the answers with the expected
// ones. The case file names the slot and lists cases; each case asks one
// question:
//
//	slot: queueSort                      # or backoffSort, preEnqueue, queueingHint, victimOrder
//	cases:
//	- name: higher priority first
//	  less: {a: {name: a, priority: 10}, b: {name: b, priority: 1}}
//	  want: true
//	- name: pop order                    # sort slots: the order the heap pops them
//	  sort: [{name: a, priority: 1}, {name: b, priority: 10}]
//	  want: [b, a]
//	- name: errors never pop early       # backoffSort
//	  mayPop: {name: p, lastFailureError: true}
//	  want: false
//	- name: gang member waits            # preEnqueue: admit or wait, plugin and reason (a substring) optional
//	  pod: {name: p, namespace: ns, group: {name: g, minCount: 3, members: 1}}
//	  want: wait
//	  plugin: GangScheduling
//	  reason: 1 of 3 pods exist
//	- name: a node that fits             # queueingHint: one answer per pod, queue, skip or error
//	  event: {resource: Node, action: Add, new: {node: {name: n, allocatable: {cpu: 4, pods: 110}}}}
//	  pods: [{name: p, requests: {cpu: 500m}, unschedulablePlugins: [NodeResourcesFit]}]
//	  want: [queue]
//	- name: low priority goes first      # victimOrder: names, most important first; preemptor optional
//	  victims: [{name: a, priority: 1}, {name: b, priority: 5}]
//	  want: [b, a]
//
// Pods, nodes, pod groups and victims take the fields of the abi records
// (see testdata/*.yaml and `wasmsched help`); times are RFC 3339 strings or
// Unix seconds, quantities are Kubernetes quantities (cpu: 500m, memory: 1Gi).
//
// # Notes
//
// The YAML is read with k8s.io/apimachinery's strict decoder (sigs.k8s.io/yaml):
// go.yaml.in/yaml/v3 would report a line for every error, but it is only an
// indirect dependency and importing it would change go.mod. Syntax errors
// carry the YAML line; the others name the case (with the line where it
// starts, for block-style files) and the field.
//
// A QueueingHint is asked about every listed pod; the queue would only ask
// about pods rejected by a plugin that registered the event.

// policyTestCmd parses `policy test` arguments; flags may come before or
// after the module file.
func policyTestCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("policy test", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfgFile := fs.String("config", "", "configuration file (YAML) whose sandbox limits apply")
	casesFile := fs.String("cases", "", "YAML file of test cases (required)")
	var sets setFlags
	fs.Var(&sets, "set", "override a configuration key, key=value (repeatable), e.g. -set sandbox.deadline=1s")
	var files []string
	for {
		if err := fs.Parse(args); err != nil {
			return fmt.Errorf("%w: %v", errUsage, err)
		}
		if fs.NArg() == 0 {
			break
		}
		files = append(files, fs.Arg(0))
		args = fs.Args()[1:]
	}
	if len(files) != 1 {
		return fmt.Errorf("%w: policy test takes one module file", errUsage)
	}
	if *casesFile == "" {
		return fmt.Errorf("%w: policy test needs --cases FILE", errUsage)
	}
	cfg, err := config.Load(config.Source{File: *cfgFile, Environ: os.Environ(), Overrides: sets})
	if err != nil {
		return fmt.Errorf("configuration: %w", err)
	}
	data, err := os.ReadFile(*casesFile)
	if err != nil {
		return err
	}
	suite, err := parseCases(*casesFile, data)
	if err != nil {
		return err
	}
	return runCases(ctx, files[0], suite, cfg.Sandbox, stdout, stderr)
}

// caseFile is the YAML document.
type caseFile struct {
	Slot  string            `json:"slot"`
	Cases []json.RawMessage `json:"cases"`
}

// testCase is one case; which fields it sets depends on the slot.
type testCase struct {
	Name string `json:"name"`

	Less   *lessSpec `json:"less,omitempty"`
	Sort   []podSpec `json:"sort,omitempty"`
	MayPop *podSpec  `json:"mayPop,omitempty"`

	Pod    *podSpec `json:"pod,omitempty"`
	Plugin *string  `json:"plugin,omitempty"`
	Reason *string  `json:"reason,omitempty"`

	Event *eventSpec `json:"event,omitempty"`
	Pods  []podSpec  `json:"pods,omitempty"`

	Preemptor *podSpec     `json:"preemptor,omitempty"`
	Victims   []victimSpec `json:"victims,omitempty"`

	Want json.RawMessage `json:"want"`

	// The encoded inputs, made by prepare.
	a, b    abi.PodView   // less
	sorted  []abi.PodView // sort
	pod     abi.PodView   // mayPop, preEnqueue
	event   abi.EventView
	pods    []abi.PodView // queueingHint
	pre     abi.PodView   // victimOrder
	victims []abi.Victim
}

// prepare encodes the case's objects as the host would send them.
func (c *testCase) prepare() error {
	var err error
	switch {
	case c.Less != nil:
		if c.a, err = c.Less.A.view("less.a"); err != nil {
			return err
		}
		c.b, err = c.Less.B.view("less.b")
		return err
	case c.Sort != nil:
		c.sorted = make([]abi.PodView, len(c.Sort))
		for i := range c.Sort {
			if c.sorted[i], err = c.Sort[i].view(fmt.Sprintf("sort[%d]", i)); err != nil {
				return err
			}
		}
	case c.MayPop != nil:
		c.pod, err = c.MayPop.view("mayPop")
		return err
	case c.Pod != nil:
		c.pod, err = c.Pod.view("pod")
		return err
	case c.Event != nil:
		if c.event, err = c.Event.view(); err != nil {
			return err
		}
		c.pods = make([]abi.PodView, len(c.Pods))
		for i := range c.Pods {
			if c.pods[i], err = c.Pods[i].view(fmt.Sprintf("pods[%d]", i)); err != nil {
				return err
			}
		}
	case c.Victims != nil:
		if c.Preemptor != nil {
			if c.pre, err = c.Preemptor.view("preemptor"); err != nil {
				return err
			}
		}
		c.victims = make([]abi.Victim, len(c.Victims))
		for i := range c.Victims {
			c.victims[i] = c.Victims[i].victim()
		}
	}
	return nil
}

type lessSpec struct {
	A podSpec `json:"a"`
	B podSpec `json:"b"`
}

type podSpec struct {
	Name                 string            `json:"name"`
	Namespace            string            `json:"namespace"`
	UID                  string            `json:"uid"`
	Node                 string            `json:"node"`
	Priority             int32             `json:"priority"`
	PreemptNever         bool              `json:"preemptNever"`
	Created              timestamp         `json:"created"`
	Queued               timestamp         `json:"queued"`
	InitialAttempt       timestamp         `json:"initialAttempt"`
	BackoffExpiry        timestamp         `json:"backoffExpiry"`
	Attempts             int32             `json:"attempts"`
	LastFailureError     bool              `json:"lastFailureError"`
	UnschedulablePlugins []string          `json:"unschedulablePlugins"`
	PendingPlugins       []string          `json:"pendingPlugins"`
	Group                *groupRefSpec     `json:"group"`
	Labels               map[string]string `json:"labels"`
	Requests             quantities        `json:"requests"`
	SchedulingGates      []string          `json:"schedulingGates"`
	NodeSelector         map[string]string `json:"nodeSelector"`
	Tolerations          []tolerationSpec  `json:"tolerations"`
	HostPorts            []hostPortSpec    `json:"hostPorts"`
	RequiredAffinity     []termSpec        `json:"requiredAffinity"`
}

type groupRefSpec struct {
	Name       string `json:"name"`
	MinCount   int32  `json:"minCount"`
	Priority   int32  `json:"priority"`
	Members    int32  `json:"members"`
	Disruption string `json:"disruption"`
}

type tolerationSpec struct {
	Key      string `json:"key"`
	Value    string `json:"value"`
	Operator string `json:"operator"`
	Effect   string `json:"effect"`
}

type hostPortSpec struct {
	HostIP   string `json:"hostIP"`
	Port     int32  `json:"port"`
	Protocol string `json:"protocol"`
}

type termSpec struct {
	MatchExpressions []requirementSpec `json:"matchExpressions"`
	MatchFields      []requirementSpec `json:"matchFields"`
}

type requirementSpec struct {
	Key      string   `json:"key"`
	Operator string   `json:"operator"`
	Values   []string `json:"values"`
}

type nodeSpec struct {
	Name          string            `json:"name"`
	Unschedulable bool              `json:"unschedulable"`
	Labels        map[string]string `json:"labels"`
	Taints        []taintSpec       `json:"taints"`
	Allocatable   quantities        `json:"allocatable"`
	Requested     quantities        `json:"requested"`
}

type taintSpec struct {
	Key    string `json:"key"`
	Value  string `json:"value"`
	Effect string `json:"effect"`
}

type podGroupSpec struct {
	Namespace    string `json:"namespace"`
	Name         string `json:"name"`
	MinCount     int32  `json:"minCount"`
	Priority     int32  `json:"priority"`
	PreemptNever bool   `json:"preemptNever"`
	Disruption   string `json:"disruption"`
	Members      int32  `json:"members"`
}

// objectSpec is the old or new object of an event: one of the three.
type objectSpec struct {
	Node     *nodeSpec     `json:"node"`
	Pod      *podSpec      `json:"pod"`
	PodGroup *podGroupSpec `json:"podGroup"`
}

type eventSpec struct {
	Resource string      `json:"resource"`
	Action   string      `json:"action"`
	Old      *objectSpec `json:"old"`
	New      *objectSpec `json:"new"`
}

type victimSpec struct {
	Name         string    `json:"name"`
	Namespace    string    `json:"namespace"`
	UID          string    `json:"uid"`
	Priority     int32     `json:"priority"`
	Started      timestamp `json:"started"`
	Group        int32     `json:"group"` // members of a pod-group victim; 0: a pod
	PDBViolating bool      `json:"pdbViolating"`
}

// timestamp is a time as Unix nanoseconds: an RFC 3339 string or a number
// of Unix seconds in the YAML.
type timestamp int64

func (t *timestamp) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		v, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			return fmt.Errorf("time %q: want RFC 3339 (2026-01-02T15:04:05Z) or Unix seconds", s)
		}
		*t = timestamp(v.UnixNano())
		return nil
	}
	var sec float64
	if err := json.Unmarshal(b, &sec); err != nil {
		return fmt.Errorf("time %s: want RFC 3339 (2026-01-02T15:04:05Z) or Unix seconds", b)
	}
	if math.Abs(sec) > math.MaxInt64/1e9 {
		return fmt.Errorf("time %s: out of range", b)
	}
	*t = timestamp(math.Round(sec * 1e9))
	return nil
}

// quantities are resource amounts as Kubernetes writes them; cpu becomes
// millicores and everything else base units, as in the abi records.
type quantities []abi.Quantity

func (q *quantities) UnmarshalJSON(b []byte) error {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return errors.New("want a map of resource name to quantity")
	}
	out := make(quantities, 0, len(m))
	for name, raw := range m {
		s := strings.Trim(string(raw), `"`)
		v, err := resource.ParseQuantity(s)
		if err != nil {
			return fmt.Errorf("%s: quantity %s: %v", name, raw, err)
		}
		n := v.Value()
		if name == "cpu" {
			n = v.MilliValue()
		}
		out = append(out, abi.Quantity{Name: name, Value: n})
	}
	slices.SortFunc(out, func(a, b abi.Quantity) int { return strings.Compare(a.Name, b.Name) })
	*q = out
	return nil
}

// suite is a parsed case file: the slot and its checked cases.
type suite struct {
	slot  abi.Slot
	cases []testCase
}

// parseCases reads a case file strictly (unknown and duplicate fields are
// errors) and checks that each case asks its slot a question and says what
// it wants.
func parseCases(path string, data []byte) (*suite, error) {
	var f caseFile
	if err := yaml.UnmarshalStrict(data, &f); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	slot, ok := abi.ParseSlot(f.Slot)
	if !ok {
		names := make([]string, len(abi.Slots))
		for i, s := range abi.Slots {
			names[i] = s.String()
		}
		return nil, fmt.Errorf("%s: slot: %q is not a slot: want one of %s", path, f.Slot, strings.Join(names, ", "))
	}
	if len(f.Cases) == 0 {
		return nil, fmt.Errorf("%s: cases: no cases", path)
	}
	lines := caseLines(data, len(f.Cases))
	s := &suite{slot: slot}
	for i, raw := range f.Cases {
		where := fmt.Sprintf("%s: case %d", path, i+1)
		if lines != nil {
			where = fmt.Sprintf("%s:%d: case %d", path, lines[i], i+1)
		}
		var c testCase
		d := json.NewDecoder(bytes.NewReader(raw))
		d.DisallowUnknownFields()
		if err := d.Decode(&c); err != nil {
			return nil, fmt.Errorf("%s: %w", where, err)
		}
		if c.Name != "" {
			where += fmt.Sprintf(" (%q)", c.Name)
		} else {
			c.Name = "case " + strconv.Itoa(i+1)
		}
		if err := c.check(slot); err != nil {
			return nil, fmt.Errorf("%s: %w", where, err)
		}
		if err := c.prepare(); err != nil {
			return nil, fmt.Errorf("%s: %w", where, err)
		}
		s.cases = append(s.cases, c)
	}
	return s, nil
}

// caseLines finds the line on which each item of the top-level cases list
// starts, or returns nil when the file is not laid out as a block list of
// n items (then errors name the case by number only).
func caseLines(data []byte, n int) []int {
	var lines []int
	in, indent := false, -1
	for i, l := range strings.Split(string(data), "\n") {
		trimmed := strings.TrimLeft(l, " ")
		switch {
		case strings.HasPrefix(l, "cases:"):
			in = true
			continue
		case !in || trimmed == "" || strings.HasPrefix(trimmed, "#"):
			continue
		case len(trimmed) == len(l) && !strings.HasPrefix(l, "- "):
			in = false // the next top-level key
			continue
		}
		if strings.HasPrefix(trimmed, "- ") || trimmed == "-" {
			if ind := len(l) - len(trimmed); indent < 0 || ind == indent {
				indent = ind
				lines = append(lines, i+1)
			}
		}
	}
	if len(lines) != n {
		return nil
	}
	return lines
}

// questions lists the questions a slot's cases may ask.
var questions = map[abi.Slot]string{
	abi.SlotQueueSort:    "less or sort",
	abi.SlotBackoffSort:  "less, sort or mayPop",
	abi.SlotPreEnqueue:   "pod",
	abi.SlotQueueingHint: "event and pods",
	abi.SlotVictimOrder:  "victims (and optionally preemptor)",
}

func (c *testCase) check(slot abi.Slot) error {
	var asked []string
	for _, q := range []struct {
		name string
		set  bool
		ok   bool
	}{
		{"less", c.Less != nil, slot == abi.SlotQueueSort || slot == abi.SlotBackoffSort},
		{"sort", c.Sort != nil, slot == abi.SlotQueueSort || slot == abi.SlotBackoffSort},
		{"mayPop", c.MayPop != nil, slot == abi.SlotBackoffSort},
		{"pod", c.Pod != nil, slot == abi.SlotPreEnqueue},
		{"plugin", c.Plugin != nil, slot == abi.SlotPreEnqueue},
		{"reason", c.Reason != nil, slot == abi.SlotPreEnqueue},
		{"event", c.Event != nil, slot == abi.SlotQueueingHint},
		{"pods", c.Pods != nil, slot == abi.SlotQueueingHint},
		{"preemptor", c.Preemptor != nil, slot == abi.SlotVictimOrder},
		{"victims", c.Victims != nil, slot == abi.SlotVictimOrder},
	} {
		if !q.set {
			continue
		}
		if !q.ok {
			return fmt.Errorf("%s: not a question for the %s slot, whose cases ask %s", q.name, slot, questions[slot])
		}
		if q.name != "plugin" && q.name != "reason" && q.name != "preemptor" && q.name != "pods" {
			asked = append(asked, q.name)
		}
	}
	if len(asked) != 1 {
		what := "nothing"
		if len(asked) > 1 {
			what = strings.Join(asked, " and ")
		}
		return fmt.Errorf("a %s case asks one of %s, this one asks %s", slot, questions[slot], what)
	}
	if len(c.Want) == 0 {
		return errors.New("want: missing")
	}
	switch asked[0] {
	case "less", "mayPop":
		var b bool
		return wantAs(c.Want, &b, "true or false")
	case "sort":
		return c.wantNames(len(c.Sort), "sort")
	case "pod":
		var s string
		if err := wantAs(c.Want, &s, "admit or wait"); err != nil {
			return err
		}
		if s != "admit" && s != "wait" {
			return fmt.Errorf("want: %q: want admit or wait", s)
		}
		if s == "admit" && (c.Plugin != nil || c.Reason != nil) {
			return errors.New("plugin, reason: only a wait has them")
		}
	case "event":
		var hs []string
		if err := wantAs(c.Want, &hs, "a list of queue, skip or error, one per pod"); err != nil {
			return err
		}
		if len(hs) != len(c.Pods) {
			return fmt.Errorf("want: %d hints for %d pods: want one per pod", len(hs), len(c.Pods))
		}
		for i, h := range hs {
			if _, ok := parseHint(h); !ok {
				return fmt.Errorf("want[%d]: %q: want queue, skip or error", i, h)
			}
		}
	case "victims":
		return c.wantNames(len(c.Victims), "victims")
	}
	return nil
}

func wantAs(raw json.RawMessage, v any, what string) error {
	if err := json.Unmarshal(raw, v); err != nil {
		return fmt.Errorf("want: %s: want %s", raw, what)
	}
	return nil
}

// wantNames checks a wanted order: a permutation of the n names listed.
func (c *testCase) wantNames(n int, field string) error {
	var names []string
	if err := wantAs(c.Want, &names, "a list of names"); err != nil {
		return err
	}
	if len(names) != n {
		return fmt.Errorf("want: %d names for %d in %s: want every name once", len(names), n, field)
	}
	return nil
}

func parseHint(s string) (abi.Hint, bool) {
	switch s {
	case "skip":
		return abi.HintSkip, true
	case "queue":
		return abi.HintQueue, true
	case "error":
		return abi.HintError, true
	}
	return 0, false
}

func hintName(h abi.Hint) string {
	switch h {
	case abi.HintSkip:
		return "skip"
	case abi.HintQueue:
		return "queue"
	case abi.HintError:
		return "error"
	}
	return strconv.Itoa(int(h))
}

// Conversions to the abi records. Errors name the field.

func (p *podSpec) pod(field string) (*abi.Pod, error) {
	out := &abi.Pod{
		UID: p.UID, Namespace: p.Namespace, Name: p.Name, NodeName: p.Node,
		Priority: p.Priority, PreemptNever: p.PreemptNever,
		CreationTime: int64(p.Created), QueuedTime: int64(p.Queued),
		InitialAttemptTime: int64(p.InitialAttempt), BackoffExpiry: int64(p.BackoffExpiry),
		Attempts: p.Attempts, LastFailureError: p.LastFailureError,
		UnschedulablePlugins: p.UnschedulablePlugins, PendingPlugins: p.PendingPlugins,
		Labels: kvs(p.Labels), Requests: p.Requests, SchedulingGates: p.SchedulingGates,
		NodeSelector: kvs(p.NodeSelector),
	}
	if out.UID == "" {
		out.UID = p.Namespace + "/" + p.Name
	}
	if g := p.Group; g != nil {
		d, err := parseDisruption(g.Disruption)
		if err != nil {
			return nil, fmt.Errorf("%s.group.disruption: %w", field, err)
		}
		out.Group = abi.PodGroupRef{Name: g.Name, MinCount: g.MinCount, Priority: g.Priority, Members: g.Members, DisruptionMode: d}
	}
	for i, t := range p.Tolerations {
		op, err := parseEnum(t.Operator, map[string]abi.TolerationOperator{
			"": abi.TolerationEqual, "Equal": abi.TolerationEqual, "Exists": abi.TolerationExists, "Lt": abi.TolerationLt, "Gt": abi.TolerationGt})
		if err != nil {
			return nil, fmt.Errorf("%s.tolerations[%d].operator: %w", field, i, err)
		}
		eff, err := parseEffect(t.Effect, true)
		if err != nil {
			return nil, fmt.Errorf("%s.tolerations[%d].effect: %w", field, i, err)
		}
		out.Tolerations = append(out.Tolerations, abi.Toleration{Key: t.Key, Value: t.Value, Operator: op, Effect: eff})
	}
	for i, hp := range p.HostPorts {
		proto, err := parseEnum(hp.Protocol, map[string]abi.Protocol{"": abi.ProtocolTCP, "TCP": abi.ProtocolTCP, "UDP": abi.ProtocolUDP, "SCTP": abi.ProtocolSCTP})
		if err != nil {
			return nil, fmt.Errorf("%s.hostPorts[%d].protocol: %w", field, i, err)
		}
		out.HostPorts = append(out.HostPorts, abi.HostPort{HostIP: hp.HostIP, Port: hp.Port, Protocol: proto})
	}
	for i, t := range p.RequiredAffinity {
		var term abi.NodeSelectorTerm
		var err error
		if term.MatchExpressions, err = requirements(t.MatchExpressions, fmt.Sprintf("%s.requiredAffinity[%d].matchExpressions", field, i)); err != nil {
			return nil, err
		}
		if term.MatchFields, err = requirements(t.MatchFields, fmt.Sprintf("%s.requiredAffinity[%d].matchFields", field, i)); err != nil {
			return nil, err
		}
		out.RequiredAffinity = append(out.RequiredAffinity, term)
	}
	return out, nil
}

func (p *podSpec) view(field string) (abi.PodView, error) {
	pod, err := p.pod(field)
	if err != nil {
		return abi.PodView{}, err
	}
	v, err := abi.ReadPod(abi.AppendPod(nil, pod))
	if err != nil {
		return abi.PodView{}, fmt.Errorf("%s: %w", field, err)
	}
	return v, nil
}

func requirements(rs []requirementSpec, field string) ([]abi.Requirement, error) {
	var out []abi.Requirement
	for i, r := range rs {
		op, err := parseEnum(r.Operator, map[string]abi.SelectorOperator{
			"In": abi.SelectorIn, "NotIn": abi.SelectorNotIn, "Exists": abi.SelectorExists,
			"DoesNotExist": abi.SelectorDoesNotExist, "Gt": abi.SelectorGt, "Lt": abi.SelectorLt})
		if err != nil {
			return nil, fmt.Errorf("%s[%d].operator: %w", field, i, err)
		}
		out = append(out, abi.Requirement{Key: r.Key, Operator: op, Values: r.Values})
	}
	return out, nil
}

func (n *nodeSpec) node(field string) (*abi.Node, error) {
	out := &abi.Node{Name: n.Name, Unschedulable: n.Unschedulable, Labels: kvs(n.Labels), Allocatable: n.Allocatable, Requested: n.Requested}
	for i, t := range n.Taints {
		eff, err := parseEffect(t.Effect, false)
		if err != nil {
			return nil, fmt.Errorf("%s.taints[%d].effect: %w", field, i, err)
		}
		out.Taints = append(out.Taints, abi.Taint{Key: t.Key, Value: t.Value, Effect: eff})
	}
	return out, nil
}

func (g *podGroupSpec) podGroup(field string) (*abi.PodGroup, error) {
	d, err := parseDisruption(g.Disruption)
	if err != nil {
		return nil, fmt.Errorf("%s.disruption: %w", field, err)
	}
	return &abi.PodGroup{Namespace: g.Namespace, Name: g.Name, MinCount: g.MinCount, Priority: g.Priority,
		PreemptNever: g.PreemptNever, DisruptionMode: d, Members: g.Members}, nil
}

// record encodes the object of an event.
func (o *objectSpec) record(field string) ([]byte, error) {
	if o == nil {
		return nil, nil
	}
	set := 0
	for _, b := range []bool{o.Node != nil, o.Pod != nil, o.PodGroup != nil} {
		if b {
			set++
		}
	}
	if set != 1 {
		return nil, fmt.Errorf("%s: want exactly one of node, pod, podGroup", field)
	}
	switch {
	case o.Node != nil:
		n, err := o.Node.node(field + ".node")
		if err != nil {
			return nil, err
		}
		return abi.AppendNode(nil, n), nil
	case o.Pod != nil:
		p, err := o.Pod.pod(field + ".pod")
		if err != nil {
			return nil, err
		}
		return abi.AppendPod(nil, p), nil
	}
	g, err := o.PodGroup.podGroup(field + ".podGroup")
	if err != nil {
		return nil, err
	}
	return abi.AppendPodGroup(nil, g), nil
}

func (e *eventSpec) view() (abi.EventView, error) {
	res, err := parseEnum(e.Resource, map[string]abi.EventResource{
		"Pod": abi.ResourcePod, "UnscheduledPod": abi.ResourceUnscheduledPod, "Node": abi.ResourceNode, "PodGroup": abi.ResourcePodGroup})
	if err != nil {
		return abi.EventView{}, fmt.Errorf("event.resource: %w", err)
	}
	act, err := parseActions(e.Action)
	if err != nil {
		return abi.EventView{}, fmt.Errorf("event.action: %w", err)
	}
	old, err := e.Old.record("event.old")
	if err != nil {
		return abi.EventView{}, err
	}
	nw, err := e.New.record("event.new")
	if err != nil {
		return abi.EventView{}, err
	}
	v, err := abi.ReadEvent(abi.AppendEvent(nil, &abi.Event{Resource: res, Action: act, Old: old, New: nw}))
	if err != nil {
		return abi.EventView{}, fmt.Errorf("event: %w", err)
	}
	return v, nil
}

// parseActions reads action names joined by "|" (Add, UpdateNodeLabel, ...),
// or All or Update.
func parseActions(s string) (abi.ActionType, error) {
	var a abi.ActionType
	for _, name := range strings.Split(s, "|") {
		name = strings.TrimSpace(name)
		switch name {
		case "All":
			a |= abi.ActionAll
			continue
		case "Update":
			a |= abi.ActionUpdate
			continue
		}
		found := false
		for bit := abi.ActionType(1); bit != 0 && bit&abi.ActionAll != 0; bit <<= 1 {
			if bit.String() == name {
				a |= bit
				found = true
				break
			}
		}
		if !found {
			return 0, fmt.Errorf("%q is not an action: want names such as Add, Delete, UpdateNodeLabel, joined by |", name)
		}
	}
	return a, nil
}

func (v *victimSpec) victim() abi.Victim {
	out := abi.Victim{Kind: abi.VictimPod, Priority: v.Priority, StartTime: int64(v.Started), PDBViolating: v.PDBViolating,
		UID: v.UID, Namespace: v.Namespace, Name: v.Name}
	if v.Group > 0 {
		out.Kind, out.Members = abi.VictimGroup, v.Group
	}
	if out.UID == "" {
		out.UID = v.Namespace + "/" + v.Name
	}
	return out
}

func kvs(m map[string]string) []abi.KV {
	out := make([]abi.KV, 0, len(m))
	for k, v := range m {
		out = append(out, abi.KV{Key: k, Value: v})
	}
	slices.SortFunc(out, func(a, b abi.KV) int { return strings.Compare(a.Key, b.Key) })
	return out
}

func parseEnum[T any](s string, values map[string]T) (T, error) {
	if v, ok := values[s]; ok {
		return v, nil
	}
	var names []string
	for n := range values {
		if n != "" {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	var zero T
	return zero, fmt.Errorf("%q: want one of %s", s, strings.Join(names, ", "))
}

func parseEffect(s string, allowNone bool) (abi.TaintEffect, error) {
	m := map[string]abi.TaintEffect{"NoSchedule": abi.EffectNoSchedule, "PreferNoSchedule": abi.EffectPreferNoSchedule, "NoExecute": abi.EffectNoExecute}
	if allowNone {
		m[""] = abi.EffectNone
	}
	return parseEnum(s, m)
}

func parseDisruption(s string) (abi.DisruptionMode, error) {
	return parseEnum(s, map[string]abi.DisruptionMode{"": abi.DisruptionSingle, "Single": abi.DisruptionSingle, "All": abi.DisruptionAll})
}

// caseRecorder collects the failed calls of one case. It embeds
// policy.Discard for the Recorder methods it does not need.
type caseRecorder struct {
	policy.Discard
	failures []string
}

func (r *caseRecorder) Failed(_ abi.Slot, reason string, err error) {
	r.failures = append(r.failures, reason+": "+err.Error())
}

// caseSlots are the adapters of the slot under test; the native defaults
// answer a failed call, and the case then fails.
type caseSlots struct {
	sort    *policy.WasmSort
	backoff *policy.WasmBackoffSort
	pre     *policy.WasmPreEnqueue
	hint    *policy.WasmQueueingHint
	victims *policy.WasmVictimOrder
}

func buildSlot(m *wasm.Module, slot abi.Slot, rec policy.Recorder) (*caseSlots, error) {
	var s caseSlots
	var err error
	switch slot {
	case abi.SlotQueueSort:
		s.sort, err = policy.NewWasmSort(m, slot, policy.PrioritySort{}, rec)
	case abi.SlotBackoffSort:
		s.backoff, err = policy.NewWasmBackoffSort(m, policy.BackoffExpiry{}, rec)
		if err == nil {
			s.sort = s.backoff.WasmSort
		}
	case abi.SlotPreEnqueue:
		s.pre, err = policy.NewWasmPreEnqueue(m, policy.Admit{}, rec)
	case abi.SlotQueueingHint:
		s.hint, err = policy.NewWasmQueueingHint(m, policy.AlwaysQueue{}, rec)
	case abi.SlotVictimOrder:
		s.victims, err = policy.NewWasmVictimOrder(m, policy.Importance{}, rec)
	}
	if err != nil {
		return nil, err
	}
	return &s, nil
}

func runCases(ctx context.Context, path string, s *suite, sandbox config.Sandbox, w, stderr io.Writer) error {
	lf, err := loadFile(ctx, path, sandbox, stderr)
	if err != nil {
		return err
	}
	defer lf.rt.Close(context.Background())
	m := lf.m
	rec := &caseRecorder{}
	slots, err := buildSlot(m, s.slot, rec)
	if err != nil {
		return fmt.Errorf("slot %s: %w", s.slot, err)
	}
	failed := 0
	for i := range s.cases {
		c := &s.cases[i]
		rec.failures = rec.failures[:0]
		got, want, ok := slots.run(c)
		switch {
		case len(rec.failures) > 0:
			failed++
			fmt.Fprintf(w, "FAIL  %s: the module failed (%s); the native default answered %s, want %s\n",
				c.Name, strings.Join(rec.failures, "; "), got, want)
		case !ok:
			failed++
			fmt.Fprintf(w, "FAIL  %s: got %s, want %s\n", c.Name, got, want)
		default:
			fmt.Fprintf(w, "PASS  %s: %s\n", c.Name, got)
		}
	}
	noun := "cases"
	if len(s.cases) == 1 {
		noun = "case"
	}
	fmt.Fprintf(w, "%s %s: %d %s, %d passed, %d failed\n", path, s.slot, len(s.cases), noun, len(s.cases)-failed, failed)
	if failed > 0 {
		return fmt.Errorf("%d of %d cases failed", failed, len(s.cases))
	}
	return nil
}

// run asks the case's question and returns the answer and the wanted one,
// formatted, and whether they match.
func (s *caseSlots) run(c *testCase) (got, want string, ok bool) {
	switch {
	case c.Less != nil:
		var w bool
		_ = json.Unmarshal(c.Want, &w)
		g := s.sort.Less(c.a, c.b)
		return strconv.FormatBool(g), strconv.FormatBool(w), g == w
	case c.Sort != nil:
		return s.sortCase(c)
	case c.MayPop != nil:
		var w bool
		_ = json.Unmarshal(c.Want, &w)
		g := s.backoff.MayPop(c.pod)
		return strconv.FormatBool(g), strconv.FormatBool(w), g == w
	case c.Pod != nil:
		g := s.pre.PreEnqueue(c.pod)
		return gateString(g), wantGate(c), gateMatches(g, c)
	case c.Event != nil:
		out := make([]abi.Hint, len(c.pods))
		s.hint.Hints(c.event, c.pods, out)
		var w []string
		_ = json.Unmarshal(c.Want, &w)
		g := make([]string, len(out))
		for i, h := range out {
			g[i] = hintName(h)
		}
		return list(g), list(w), slices.Equal(g, w)
	}
	order := make([]uint32, len(c.victims))
	s.victims.Order(c.pre, c.victims, order)
	g := make([]string, len(order))
	for i, k := range order {
		g[i] = c.victims[k].Name
	}
	var w []string
	_ = json.Unmarshal(c.Want, &w)
	return list(g), list(w), slices.Equal(g, w)
}

// sortCase orders the pods as the heap pops them: by Less, and when the
// module computes sort keys also by key, which must give the same order (the
// host's heaps compare keys).
func (s *caseSlots) sortCase(c *testCase) (got, want string, ok bool) {
	type item struct {
		name string
		view abi.PodView
		key  abi.SortKey
	}
	items := make([]item, len(c.Sort))
	for i := range c.Sort {
		items[i] = item{name: c.Sort[i].Name, view: c.sorted[i]}
	}
	byLess := slices.Clone(items)
	slices.SortStableFunc(byLess, func(a, b item) int {
		switch {
		case s.sort.Less(a.view, b.view):
			return -1
		case s.sort.Less(b.view, a.view):
			return 1
		}
		return 0
	})
	names := func(is []item) []string {
		out := make([]string, len(is))
		for i, it := range is {
			out[i] = it.name
		}
		return out
	}
	var w []string
	_ = json.Unmarshal(c.Want, &w)
	g := names(byLess)
	if s.sort.Keyed() {
		byKey := slices.Clone(items)
		for i := range byKey {
			byKey[i].key = s.sort.Key(byKey[i].view)
		}
		slices.SortStableFunc(byKey, func(a, b item) int {
			switch {
			case a.key.Less(b.key):
				return -1
			case b.key.Less(a.key):
				return 1
			}
			return 0
		})
		if k := names(byKey); !slices.Equal(k, g) {
			return fmt.Sprintf("%s by less but %s by sort key", list(g), list(k)), list(w), false
		}
	}
	return list(g), list(w), slices.Equal(g, w)
}

func list(s []string) string { return "[" + strings.Join(s, " ") + "]" }

func gateString(g abi.Gate) string {
	if g.Code == abi.GateAdmit {
		return "admit"
	}
	return fmt.Sprintf("wait (plugin %s: %q)", g.Plugin, g.Reason)
}

func wantGate(c *testCase) string {
	var w string
	_ = json.Unmarshal(c.Want, &w)
	if w == "admit" {
		return w
	}
	var parts []string
	if c.Plugin != nil {
		parts = append(parts, "plugin "+*c.Plugin)
	}
	if c.Reason != nil {
		parts = append(parts, fmt.Sprintf("reason containing %q", *c.Reason))
	}
	if len(parts) == 0 {
		return w
	}
	return w + " (" + strings.Join(parts, ", ") + ")"
}

func gateMatches(g abi.Gate, c *testCase) bool {
	var w string
	_ = json.Unmarshal(c.Want, &w)
	if w == "admit" {
		return g.Code == abi.GateAdmit
	}
	return g.Code == abi.GateWait &&
		(c.Plugin == nil || g.Plugin == *c.Plugin) &&
		(c.Reason == nil || strings.Contains(g.Reason, *c.Reason))
}
