package policytest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/yaml"

	"github.com/wasmsched/wasmsched/abi"
	"github.com/wasmsched/wasmsched/host/policy"
)

// CaseFile is a parsed case file: the slot it tests and its cases. The
// format is in the package documentation.
type CaseFile struct {
	slot  abi.Slot
	cases []Case
}

// Case is one question to a slot and the answer wanted.
type Case struct {
	name string
	slot abi.Slot
	ask  string // less, sort, mayPop, pod, event, victims, filter or score

	pods      []*abi.Pod    // less: a, b; sort; mayPop, pod: one; event: the pods asked
	views     []abi.PodView // pods, encoded
	event     abi.EventView
	preemptor abi.PodView // zero when the case has none
	victims   []abi.Victim
	nodes     *nodeTable // filter, score: the nodes the pod is placed on

	wantBool      bool // less, mayPop
	wantNames     []string
	wantGate      abi.GateCode
	plugin        *string // of a wanted wait; nil: any
	reason        *string // a substring of a wanted wait's reason; nil: any
	wantHints     []abi.Hint
	wantHintNames []string
	wantSkip      bool              // filter, score: the pre-step skips the pod
	wantVerdicts  map[string]string // filter: node name -> pass, unschedulable or unresolvable
	wantReasons   map[string]string // filter: node name -> a substring of the reason
	wantScores    map[string]int64  // score: node name -> score
}

// nodeTable is the nodes of a placement case, in order, by name.
type nodeTable struct {
	names []string
	nodes []policy.PlacementNode
}

// Result is a case's answer and the wanted one, formatted for a message,
// and whether they match.
type Result struct {
	Got, Want string
	OK        bool
}

// ReadCaseFile reads and parses the case file at path. Its errors name the
// file, the case (with its line, for block-style files) and the field.
func ReadCaseFile(path string) (*CaseFile, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return ParseCaseFile(path, data)
}

// ParseCaseFile parses a case file read from path (which only names it in
// errors). Unknown and duplicate fields are errors; each case must ask its
// slot one question and say what it wants.
func ParseCaseFile(path string, data []byte) (*CaseFile, error) {
	var f struct {
		Slot  string            `json:"slot"`
		Nodes []json.RawMessage `json:"nodes"`
		Cases []json.RawMessage `json:"cases"`
	}
	if err := yaml.UnmarshalStrict(data, &f); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	var slot abi.Slot
	if err := slot.UnmarshalText([]byte(f.Slot)); err != nil {
		return nil, fmt.Errorf("%s: slot: %w", path, err)
	}
	if len(f.Cases) == 0 {
		return nil, fmt.Errorf("%s: cases: no cases", path)
	}
	var nodes *nodeTable
	if f.Nodes != nil {
		if !slot.Placement() {
			return nil, fmt.Errorf("%s: nodes: only the cases of the filter and score slots place pods on nodes", path)
		}
		var err error
		if nodes, err = decodeNodeTable(f.Nodes, "nodes"); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
	}
	lines := caseLines(data, len(f.Cases))
	out := &CaseFile{slot: slot}
	for i, raw := range f.Cases {
		where := fmt.Sprintf("%s: case %d", path, i+1)
		if lines != nil {
			where = fmt.Sprintf("%s:%d: case %d", path, lines[i], i+1)
		}
		c, err := parseCase(slot, nodes, raw, i, &where)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", where, err)
		}
		out.cases = append(out.cases, *c)
	}
	return out, nil
}

// Slot is the slot the file's cases ask.
func (f *CaseFile) Slot() abi.Slot { return f.slot }

// Cases are the file's cases in order.
func (f *CaseFile) Cases() []Case { return f.cases }

// Name is the case's name, "case N" when the file gives none.
func (c *Case) Name() string { return c.name }

// RunCases runs the case file at path against p as [Run] does: natively, then
// against p.WasmPath in the host runtime. Each case is a subtest.
//
//	func TestCases(t *testing.T) {
//		policytest.RunCases(t, module, "testdata/cases.yaml")
//	}
func RunCases(t *testing.T, p Policy, path string) {
	t.Helper()
	f, err := ReadCaseFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !p.implements(f.slot) {
		t.Fatalf("%s asks the %s slot, which the policytest.Policy does not implement", path, f.slot)
	}
	Run(t, p, func(t *testing.T, s Slots) {
		for i := range f.cases {
			c := &f.cases[i]
			t.Run(c.name, func(t *testing.T) {
				if r := c.Run(s); !r.OK {
					t.Errorf("got %s, want %s", r.Got, r.Want)
				}
			})
		}
	})
}

// caseSpec is a case as written; the objects decode into abi records later,
// once the case is known to ask its slot one question.
type caseSpec struct {
	Name string `json:"name"`

	Less *struct {
		A json.RawMessage `json:"a"`
		B json.RawMessage `json:"b"`
	} `json:"less"`
	Sort   []json.RawMessage `json:"sort"`
	MayPop json.RawMessage   `json:"mayPop"`

	Pod    json.RawMessage `json:"pod"`
	Plugin *string         `json:"plugin"`
	Reason *string         `json:"reason"`

	Event json.RawMessage   `json:"event"`
	Pods  []json.RawMessage `json:"pods"`

	Preemptor json.RawMessage   `json:"preemptor"`
	Victims   []json.RawMessage `json:"victims"`

	Nodes   []json.RawMessage `json:"nodes"`
	Reasons map[string]string `json:"reasons"`

	Want json.RawMessage `json:"want"`
}

// parseCase reads case i, whose nodes are the file's unless it has its own;
// once its name is known it is added to *where.
func parseCase(slot abi.Slot, nodes *nodeTable, raw json.RawMessage, i int, where *string) (*Case, error) {
	var spec caseSpec
	d := json.NewDecoder(bytes.NewReader(raw))
	d.DisallowUnknownFields()
	if err := d.Decode(&spec); err != nil {
		return nil, err
	}
	c := &Case{name: spec.Name, slot: slot, plugin: spec.Plugin, reason: spec.Reason, nodes: nodes}
	if c.name != "" {
		*where += fmt.Sprintf(" (%q)", c.name)
	} else {
		c.name = "case " + strconv.Itoa(i+1)
	}
	if spec.Nodes != nil && slot.Placement() {
		var err error
		if c.nodes, err = decodeNodeTable(spec.Nodes, "nodes"); err != nil {
			return nil, err
		}
	}
	if err := c.check(&spec); err != nil {
		return nil, err
	}
	if err := c.decode(&spec); err != nil {
		return nil, err
	}
	return c, nil
}

// questions lists the questions a slot's cases may ask.
var questions = map[abi.Slot]string{
	abi.SlotQueueSort:    "less or sort",
	abi.SlotBackoffSort:  "less, sort or mayPop",
	abi.SlotPreEnqueue:   "pod",
	abi.SlotQueueingHint: "event and pods",
	abi.SlotVictimOrder:  "victims (and optionally preemptor)",
	abi.SlotFilter:       "pod (placed on the file's nodes or the case's)",
	abi.SlotScore:        "pod (placed on the file's nodes or the case's)",
}

// check finds the question the case asks, which must be one its slot
// answers, and reads the wanted answer.
func (c *Case) check(spec *caseSpec) error {
	slot := c.slot
	var asked []string
	for _, q := range []struct {
		name string
		set  bool
		ok   bool
	}{
		{"less", spec.Less != nil, slot == abi.SlotQueueSort || slot == abi.SlotBackoffSort},
		{"sort", spec.Sort != nil, slot == abi.SlotQueueSort || slot == abi.SlotBackoffSort},
		{"mayPop", !isNull(spec.MayPop), slot == abi.SlotBackoffSort},
		{"pod", !isNull(spec.Pod), slot == abi.SlotPreEnqueue || slot.Placement()},
		{"plugin", spec.Plugin != nil, slot == abi.SlotPreEnqueue},
		{"reason", spec.Reason != nil, slot == abi.SlotPreEnqueue},
		{"event", !isNull(spec.Event), slot == abi.SlotQueueingHint},
		{"pods", spec.Pods != nil, slot == abi.SlotQueueingHint},
		{"preemptor", !isNull(spec.Preemptor), slot == abi.SlotVictimOrder},
		{"victims", spec.Victims != nil, slot == abi.SlotVictimOrder},
		{"nodes", spec.Nodes != nil, slot.Placement()},
		{"reasons", spec.Reasons != nil, slot == abi.SlotFilter},
	} {
		if !q.set {
			continue
		}
		if !q.ok {
			return fmt.Errorf("%s: not a question for the %s slot, whose cases ask %s", q.name, slot, questions[slot])
		}
		if q.name != "plugin" && q.name != "reason" && q.name != "preemptor" && q.name != "pods" && q.name != "nodes" && q.name != "reasons" {
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
	c.ask = asked[0]
	if slot.Placement() {
		c.ask = slot.String() // filter or score
		if c.nodes == nil {
			return errors.New("nodes: a " + slot.String() + " case needs nodes, the file's or its own")
		}
	}
	if len(spec.Want) == 0 {
		return errNoWant
	}
	switch c.ask {
	case "less", "mayPop":
		return wantAs(spec.Want, &c.wantBool, "true or false")
	case "sort":
		return c.readNames(spec.Want, len(spec.Sort), "sort")
	case "pod":
		var s string
		if err := wantAs(spec.Want, &s, "admit or wait"); err != nil {
			return err
		}
		if err := c.wantGate.UnmarshalText([]byte(s)); err != nil {
			return fmt.Errorf("want: %q: want admit or wait", s)
		}
		if c.wantGate == abi.GateAdmit && (c.plugin != nil || c.reason != nil) {
			return errors.New("plugin, reason: only a wait has them")
		}
	case "event":
		if err := wantAs(spec.Want, &c.wantHintNames, "a list of queue, skip or error, one per pod"); err != nil {
			return err
		}
		if len(c.wantHintNames) != len(spec.Pods) {
			return fmt.Errorf("want: %d hints for %d pods: want one per pod", len(c.wantHintNames), len(spec.Pods))
		}
		c.wantHints = make([]abi.Hint, len(c.wantHintNames))
		for i, h := range c.wantHintNames {
			if err := c.wantHints[i].UnmarshalText([]byte(h)); err != nil {
				return fmt.Errorf("want[%d]: %q: want queue, skip or error", i, h)
			}
		}
	case "victims":
		return c.readNames(spec.Want, len(spec.Victims), "victims")
	case "filter":
		return c.readVerdicts(spec)
	case "score":
		return c.readScores(spec.Want)
	}
	return nil
}

// readSkip reads a wanted skip: the pre-step says the pod is none of the
// slot's business.
func (c *Case) readSkip(want json.RawMessage) (bool, error) {
	var s string
	if json.Unmarshal(want, &s) != nil {
		return false, nil
	}
	if s != "skip" {
		return false, fmt.Errorf("want: %q: want skip, or a map of node name to %s", s, c.wantPerNode())
	}
	c.wantSkip = true
	return true, nil
}

func (c *Case) wantPerNode() string {
	if c.slot == abi.SlotFilter {
		return "pass, unschedulable or unresolvable"
	}
	return "score"
}

// checkNames checks that the names of a per-node map are the case's nodes,
// all of them when all is set.
func (c *Case) checkNames(field string, names []string, all bool) error {
	for _, n := range names {
		if !slices.Contains(c.nodes.names, n) {
			return fmt.Errorf("%s: %q is not one of the nodes %s", field, n, list(c.nodes.names))
		}
	}
	if all && len(names) != len(c.nodes.names) {
		return fmt.Errorf("%s: %d nodes of %d: want an answer for every node %s", field, len(names), len(c.nodes.names), list(c.nodes.names))
	}
	return nil
}

// readVerdicts reads a filter case's wanted answer and reasons.
func (c *Case) readVerdicts(spec *caseSpec) error {
	skip, err := c.readSkip(spec.Want)
	if err != nil || skip {
		if skip && spec.Reasons != nil {
			return errors.New("reasons: a skipped pod has none")
		}
		return err
	}
	if err := wantAs(spec.Want, &c.wantVerdicts, "skip, or a map of node name to "+c.wantPerNode()); err != nil {
		return err
	}
	if err := c.checkNames("want", slices.Collect(maps.Keys(c.wantVerdicts)), true); err != nil {
		return err
	}
	for n, v := range c.wantVerdicts {
		if _, ok := filterCodes[v]; !ok {
			return fmt.Errorf("want: %s: %q: want %s", n, v, c.wantPerNode())
		}
	}
	if err := c.checkNames("reasons", slices.Collect(maps.Keys(spec.Reasons)), false); err != nil {
		return err
	}
	for n := range spec.Reasons {
		if c.wantVerdicts[n] == "pass" {
			return fmt.Errorf("reasons: %s: the node is wanted to pass, which has no reason", n)
		}
	}
	c.wantReasons = spec.Reasons
	return nil
}

// filterCodes are the names of the filter codes in case files.
var filterCodes = map[string]abi.FilterCode{
	"pass":          abi.FilterPass,
	"unschedulable": abi.FilterUnschedulable,
	"unresolvable":  abi.FilterUnresolvable,
}

// readScores reads a score case's wanted answer.
func (c *Case) readScores(want json.RawMessage) error {
	if skip, err := c.readSkip(want); err != nil || skip {
		return err
	}
	if err := wantAs(want, &c.wantScores, "skip, or a map of node name to score"); err != nil {
		return err
	}
	return c.checkNames("want", slices.Collect(maps.Keys(c.wantScores)), true)
}

// readNames reads a wanted order: a permutation of the n names listed.
func (c *Case) readNames(want json.RawMessage, n int, field string) error {
	if err := wantAs(want, &c.wantNames, "a list of names"); err != nil {
		return err
	}
	if len(c.wantNames) != n {
		return fmt.Errorf("want: %d names for %d in %s: want every name once", len(c.wantNames), n, field)
	}
	return nil
}

// decode reads the objects of the case's question into abi records and
// encodes them as the host sends them.
func (c *Case) decode(spec *caseSpec) error {
	addPod := func(raw json.RawMessage, path string) error {
		p, err := decodePod(raw, path)
		if err != nil {
			return err
		}
		v, err := podView(p, path)
		if err != nil {
			return err
		}
		c.pods, c.views = append(c.pods, p), append(c.views, v)
		return nil
	}
	var err error
	switch c.ask {
	case "less":
		if err = addPod(spec.Less.A, "less.a"); err == nil {
			err = addPod(spec.Less.B, "less.b")
		}
	case "sort":
		for i, raw := range spec.Sort {
			if err = addPod(raw, fmt.Sprintf("sort[%d]", i)); err != nil {
				break
			}
		}
	case "mayPop":
		err = addPod(spec.MayPop, "mayPop")
	case "pod", "filter", "score":
		err = addPod(spec.Pod, "pod")
	case "event":
		var e *abi.Event
		if e, err = decodeEvent(spec.Event, "event"); err != nil {
			return err
		}
		if c.event, err = abi.ReadEvent(abi.AppendEvent(nil, e)); err != nil {
			return fmt.Errorf("event: %w", err)
		}
		for i, raw := range spec.Pods {
			if err = addPod(raw, fmt.Sprintf("pods[%d]", i)); err != nil {
				break
			}
		}
	case "victims":
		if !isNull(spec.Preemptor) {
			p, err := decodePod(spec.Preemptor, "preemptor")
			if err != nil {
				return err
			}
			if c.preemptor, err = podView(p, "preemptor"); err != nil {
				return err
			}
		}
		c.victims = make([]abi.Victim, len(spec.Victims))
		for i, raw := range spec.Victims {
			if c.victims[i], err = decodeVictim(raw, fmt.Sprintf("victims[%d]", i)); err != nil {
				break
			}
		}
	}
	return err
}

// decodeNodeTable reads the nodes of a placement case, each with a name of
// its own, and gives them placement ids.
func decodeNodeTable(raws []json.RawMessage, path string) (*nodeTable, error) {
	if len(raws) == 0 {
		return nil, fmt.Errorf("%s: no nodes", path)
	}
	t := &nodeTable{}
	for i, raw := range raws {
		at := fmt.Sprintf("%s[%d]", path, i)
		n, err := decodeNode(raw, at)
		if err != nil {
			return nil, err
		}
		switch {
		case n.Name == "":
			return nil, fmt.Errorf("%s.name: missing: the wanted answers name the nodes", at)
		case slices.Contains(t.names, n.Name):
			return nil, fmt.Errorf("%s.name: %q: another node has that name", at, n.Name)
		}
		v, err := abi.ReadNode(abi.AppendNode(nil, n))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", at, err)
		}
		t.names = append(t.names, n.Name)
		t.nodes = append(t.nodes, placementNode(v))
	}
	return t, nil
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

// Run asks s the case's question. A slot of s the case needs is nil: the
// case fails, saying so.
func (c *Case) Run(s Slots) Result {
	var sort Sort
	switch c.slot {
	case abi.SlotQueueSort:
		if s.QueueSort != nil {
			sort = s.QueueSort
		}
	case abi.SlotBackoffSort:
		if s.BackoffSort != nil {
			sort = s.BackoffSort
		}
	}
	missing := func(want string) Result {
		return Result{Got: "no answer: the policy has no " + c.slot.String() + " slot", Want: want}
	}
	switch c.ask {
	case "less":
		want := strconv.FormatBool(c.wantBool)
		if sort == nil {
			return missing(want)
		}
		g := sort.Less(c.views[0], c.views[1])
		return Result{Got: strconv.FormatBool(g), Want: want, OK: g == c.wantBool}
	case "sort":
		want := list(c.wantNames)
		if sort == nil {
			return missing(want)
		}
		byLess, byKey := sortOrder(sort, c.pods)
		if byKey != nil && !slices.Equal(byLess, byKey) {
			return Result{Got: fmt.Sprintf("%s by less but %s by sort key", list(byLess), list(byKey)), Want: want}
		}
		return Result{Got: list(byLess), Want: want, OK: slices.Equal(byLess, c.wantNames)}
	case "mayPop":
		want := strconv.FormatBool(c.wantBool)
		if s.BackoffSort == nil {
			return missing(want)
		}
		g := s.BackoffSort.MayPop(c.views[0])
		return Result{Got: strconv.FormatBool(g), Want: want, OK: g == c.wantBool}
	case "pod":
		want := c.wantGateString()
		if s.PreEnqueue == nil {
			return missing(want)
		}
		g := s.PreEnqueue.PreEnqueue(c.views[0])
		return Result{Got: gateString(g), Want: want, OK: c.gateMatches(g)}
	case "filter":
		want := c.wantFilterString()
		if s.Filter == nil {
			return missing(want)
		}
		out, err := verdicts(s.Filter, c.views[0], c.nodes.nodes)
		return c.filterResult(out, err, want)
	case "score":
		want := c.wantScoreString()
		if s.Score == nil {
			return missing(want)
		}
		out, err := scores(s.Score, c.views[0], c.nodes.nodes)
		return c.scoreResult(out, err, want)
	case "event":
		want := list(c.wantHintNames)
		if s.QueueingHint == nil {
			return missing(want)
		}
		out := make([]abi.Hint, len(c.views))
		s.QueueingHint.Hints(c.event, c.views, out)
		got := make([]string, len(out))
		for i, h := range out {
			got[i] = hintName(h)
		}
		return Result{Got: list(got), Want: want, OK: slices.Equal(out, c.wantHints)}
	}
	want := list(c.wantNames)
	if s.VictimOrder == nil {
		return missing(want)
	}
	order := make([]uint32, len(c.victims))
	s.VictimOrder.Order(c.preemptor, c.victims, order)
	got := make([]string, len(order))
	for i, k := range order {
		got[i] = c.victims[k].Name
	}
	return Result{Got: list(got), Want: want, OK: slices.Equal(got, c.wantNames)}
}

func list(s []string) string { return "[" + strings.Join(s, " ") + "]" }

// perNode formats one answer per node of the case, in node order.
func (c *Case) perNode(answer func(i int, name string) string) string {
	parts := make([]string, len(c.nodes.names))
	for i, n := range c.nodes.names {
		parts[i] = n + ": " + answer(i, n)
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

func (c *Case) wantFilterString() string {
	if c.wantSkip {
		return "skip"
	}
	return c.perNode(func(_ int, n string) string {
		if r, ok := c.wantReasons[n]; ok {
			return fmt.Sprintf("%s (reason containing %q)", c.wantVerdicts[n], r)
		}
		return c.wantVerdicts[n]
	})
}

func (c *Case) filterResult(out []policy.FilterVerdict, err error, want string) Result {
	switch {
	case err != nil:
		return Result{Got: "error: " + err.Error(), Want: want}
	case out == nil:
		return Result{Got: "skip", Want: want, OK: c.wantSkip}
	}
	ok := !c.wantSkip
	got := c.perNode(func(i int, n string) string {
		v := out[i]
		name := "unknown code " + strconv.Itoa(int(v.Code))
		for k, code := range filterCodes {
			if code == v.Code {
				name = k
			}
		}
		if ok && (filterCodes[c.wantVerdicts[n]] != v.Code || !strings.Contains(v.Reason, c.wantReasons[n])) {
			ok = false
		}
		if v.Code == abi.FilterPass {
			return name
		}
		return fmt.Sprintf("%s (%q)", name, v.Reason)
	})
	return Result{Got: got, Want: want, OK: ok}
}

func (c *Case) wantScoreString() string {
	if c.wantSkip {
		return "skip"
	}
	return c.perNode(func(_ int, n string) string { return strconv.FormatInt(c.wantScores[n], 10) })
}

func (c *Case) scoreResult(out []int64, err error, want string) Result {
	switch {
	case err != nil:
		return Result{Got: "error: " + err.Error(), Want: want}
	case out == nil:
		return Result{Got: "skip", Want: want, OK: c.wantSkip}
	}
	ok := !c.wantSkip
	got := c.perNode(func(i int, n string) string {
		if ok && out[i] != c.wantScores[n] {
			ok = false
		}
		return strconv.FormatInt(out[i], 10)
	})
	return Result{Got: got, Want: want, OK: ok}
}

func hintName(h abi.Hint) string {
	if b, err := h.MarshalText(); err == nil {
		return string(b)
	}
	return strconv.Itoa(int(h))
}

func gateString(g abi.Gate) string {
	if g.Code == abi.GateAdmit {
		return "admit"
	}
	return fmt.Sprintf("wait (plugin %s: %q)", g.Plugin, g.Reason)
}

func (c *Case) wantGateString() string {
	if c.wantGate == abi.GateAdmit {
		return "admit"
	}
	var parts []string
	if c.plugin != nil {
		parts = append(parts, "plugin "+*c.plugin)
	}
	if c.reason != nil {
		parts = append(parts, fmt.Sprintf("reason containing %q", *c.reason))
	}
	if len(parts) == 0 {
		return "wait"
	}
	return "wait (" + strings.Join(parts, ", ") + ")"
}

func (c *Case) gateMatches(g abi.Gate) bool {
	if c.wantGate == abi.GateAdmit {
		return g.Code == abi.GateAdmit
	}
	return g.Code == abi.GateWait &&
		(c.plugin == nil || g.Plugin == *c.plugin) &&
		(c.reason == nil || strings.Contains(g.Reason, *c.reason))
}

// wantAs decodes the wanted answer, or says what it should have been.
func wantAs(raw json.RawMessage, v any, what string) error {
	if err := json.Unmarshal(raw, v); err != nil {
		return fmt.Errorf("want: %s: want %s", raw, what)
	}
	return nil
}

var errNoWant = errors.New("want: missing")
