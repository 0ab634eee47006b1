package policytest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/yaml"

	"github.com/wasmsched/wasmsched/abi"
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
	ask  string // less, sort, mayPop, pod, event or victims

	pods      []*abi.Pod    // less: a, b; sort; mayPop, pod: one; event: the pods asked
	views     []abi.PodView // pods, encoded
	event     abi.EventView
	preemptor abi.PodView // zero when the case has none
	victims   []abi.Victim

	wantBool      bool // less, mayPop
	wantNames     []string
	wantGate      abi.GateCode
	plugin        *string // of a wanted wait; nil: any
	reason        *string // a substring of a wanted wait's reason; nil: any
	wantHints     []abi.Hint
	wantHintNames []string
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
	lines := caseLines(data, len(f.Cases))
	out := &CaseFile{slot: slot}
	for i, raw := range f.Cases {
		where := fmt.Sprintf("%s: case %d", path, i+1)
		if lines != nil {
			where = fmt.Sprintf("%s:%d: case %d", path, lines[i], i+1)
		}
		c, err := parseCase(slot, raw, i, &where)
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

	Want json.RawMessage `json:"want"`
}

// parseCase reads case i; once its name is known it is added to *where.
func parseCase(slot abi.Slot, raw json.RawMessage, i int, where *string) (*Case, error) {
	var spec caseSpec
	d := json.NewDecoder(bytes.NewReader(raw))
	d.DisallowUnknownFields()
	if err := d.Decode(&spec); err != nil {
		return nil, err
	}
	c := &Case{name: spec.Name, slot: slot, plugin: spec.Plugin, reason: spec.Reason}
	if c.name != "" {
		*where += fmt.Sprintf(" (%q)", c.name)
	} else {
		c.name = "case " + strconv.Itoa(i+1)
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
		{"pod", !isNull(spec.Pod), slot == abi.SlotPreEnqueue},
		{"plugin", spec.Plugin != nil, slot == abi.SlotPreEnqueue},
		{"reason", spec.Reason != nil, slot == abi.SlotPreEnqueue},
		{"event", !isNull(spec.Event), slot == abi.SlotQueueingHint},
		{"pods", spec.Pods != nil, slot == abi.SlotQueueingHint},
		{"preemptor", !isNull(spec.Preemptor), slot == abi.SlotVictimOrder},
		{"victims", spec.Victims != nil, slot == abi.SlotVictimOrder},
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
	c.ask = asked[0]
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
	}
	return nil
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
	case "pod":
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
