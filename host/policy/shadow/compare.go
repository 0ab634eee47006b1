package shadow

import (
	"fmt"
	"slices"
	"strconv"

	"k8s.io/apimachinery/pkg/types"

	"github.com/wasmsched/wasmsched/abi"
	"github.com/wasmsched/wasmsched/host/policy"
	"github.com/wasmsched/wasmsched/host/queue"
)

// The queue's Observer: sampled pops for the sort shadows, attempts and
// their outcomes for the hint shadow's join.

func heapSlot(heap string) abi.Slot {
	if heap == queue.QueueBackoff {
		return abi.SlotBackoffSort
	}
	return abi.SlotQueueSort
}

// Ahead asks for a sample of the heap when the pop at hand is one the
// heap's sort shadow evaluates.
func (e *Evaluator) Ahead(heap string) int {
	if e.sample(heapSlot(heap)) == nil {
		return 0
	}
	return aheadSample
}

// Popped compares the shadow sort with the pop the queue made.
func (e *Evaluator) Popped(heap string, popped abi.PodView, ahead []abi.PodView) {
	slot := heapSlot(heap)
	c := e.slots[slot].cand.Load()
	if c == nil || len(ahead) == 0 {
		return
	}
	p := clonePod(popped)
	rest := make([]abi.PodView, len(ahead))
	for i, a := range ahead {
		rest[i] = clonePod(a)
	}
	event := "Pop"
	if slot == abi.SlotBackoffSort {
		event = "BackoffPop"
	}
	e.offer(slot, c, func() { e.comparePop(slot, c, event, p, rest) })
}

func (e *Evaluator) comparePop(slot abi.Slot, c *candidate, event string, popped abi.PodView, ahead []abi.PodView) {
	if !e.current(slot, c) {
		return
	}
	sort := c.impl.(policy.Sort)
	var first abi.PodView
	inverted := 0
	if e.call(slot, func() {
		for _, a := range ahead {
			if sort.Less(a, popped) {
				if inverted == 0 {
					first = a
				}
				inverted++
			}
		}
	}) {
		e.record(slot, c, failure(podName(popped), event, "popped", "", nil))
		return
	}
	if inverted == 0 {
		e.record(slot, c, outcome{agree: 1})
		return
	}
	e.record(slot, c, outcome{disagree: 1, kinds: map[string]int64{KindOrderInversions: int64(inverted)},
		sample: &Sample{Pod: podName(popped), Event: event, Kind: KindOrderInversions,
			Active: "popped ahead of " + podName(first),
			Shadow: fmt.Sprintf("would pop %s first (%d of %d sampled pods ahead of it)", podName(first), inverted, len(ahead)),
			Case:   lessCase(podName(first)+" before "+podName(popped), first, popped)}})
}

// Attempting starts the join of a pod's attempt with the shadow Skips
// before it.
func (e *Evaluator) Attempting(uid types.UID) {
	c := e.slots[abi.SlotQueueingHint].cand.Load()
	if c == nil {
		return
	}
	e.offer(abi.SlotQueueingHint, c, func() {
		if m, ok := e.delayed[uid]; ok {
			delete(e.delayed, uid)
			e.attempting[uid] = m
		} else {
			delete(e.attempting, uid)
		}
	})
}

// Scheduled ends the join: an attempt that only a Queue the shadow would
// have skipped brought, and that scheduled the pod, is one the shadow would
// have delayed.
func (e *Evaluator) Scheduled(uid types.UID) {
	c := e.slots[abi.SlotQueueingHint].cand.Load()
	if c == nil {
		return
	}
	e.offer(abi.SlotQueueingHint, c, func() {
		m, ok := e.attempting[uid]
		delete(e.attempting, uid)
		delete(e.delayed, uid)
		if !ok || !e.current(abi.SlotQueueingHint, m.cand) {
			return
		}
		// Counted as a kind of the disagreement already recorded when the
		// shadow answered Skip, not as a decision of its own.
		e.record(abi.SlotQueueingHint, m.cand, outcome{kinds: map[string]int64{KindWouldHaveDelayed: 1},
			sample: &Sample{Pod: m.pod, Event: m.event, Kind: KindWouldHaveDelayed, Active: "queue, and the attempt scheduled the pod", Shadow: "skip", Case: m.cas}})
	})
}

// Tee wraps the serving policies in's functions install, so that each
// decision of a slot with a shadow is also handed to the shadow. The sorts
// are not wrapped (the queue's Observer sees their pops); a nil placement
// policy (an empty slot) is installed as it is.
func (e *Evaluator) Tee(in policy.Installer) policy.Installer {
	out := in
	if f := in.PreEnqueue; f != nil {
		out.PreEnqueue = func(p policy.PreEnqueue) { f(&teePreEnqueue{p, e}) }
	}
	if f := in.QueueingHint; f != nil {
		out.QueueingHint = func(p policy.QueueingHint) { f(&teeHint{p, e}) }
	}
	if f := in.VictimOrder; f != nil {
		out.VictimOrder = func(p policy.VictimOrder) { f(&teeVictims{p, e}) }
	}
	if f := in.Filter; f != nil {
		out.Filter = func(p policy.Filter) {
			if p == nil {
				f(nil)
				return
			}
			f(&teeFilter{p, e})
		}
	}
	if f := in.Score; f != nil {
		out.Score = func(p policy.Score) {
			if p == nil {
				f(nil)
				return
			}
			f(&teeScore{p, e})
		}
	}
	return out
}

type teePreEnqueue struct {
	in policy.PreEnqueue
	e  *Evaluator
}

func (t *teePreEnqueue) PreEnqueue(p abi.PodView) abi.Gate {
	g := t.in.PreEnqueue(p)
	if c := t.e.sample(abi.SlotPreEnqueue); c != nil {
		pod := clonePod(p)
		t.e.offer(abi.SlotPreEnqueue, c, func() { t.e.compareGate(c, pod, g) })
	}
	return g
}

func gateWords(g abi.Gate) string {
	if g.Code == abi.GateAdmit {
		return "admit"
	}
	if g.Reason == "" {
		return "hold"
	}
	return "hold: " + g.Reason
}

func (e *Evaluator) compareGate(c *candidate, pod abi.PodView, active abi.Gate) {
	const slot = abi.SlotPreEnqueue
	if !e.current(slot, c) {
		return
	}
	var g abi.Gate
	if e.call(slot, func() { g = c.impl.(policy.PreEnqueue).PreEnqueue(pod) }) {
		e.record(slot, c, failure(podName(pod), "PreEnqueue", gateWords(active), gateCase(podName(pod), pod, active), nil))
		return
	}
	if (g.Code == abi.GateAdmit) == (active.Code == abi.GateAdmit) {
		e.record(slot, c, outcome{agree: 1})
		return
	}
	kind := KindWouldHold
	if g.Code == abi.GateAdmit {
		kind = KindWouldAdmit
	}
	e.record(slot, c, outcome{disagree: 1, kinds: map[string]int64{kind: 1},
		sample: &Sample{Pod: podName(pod), Event: "PreEnqueue", Active: gateWords(active), Shadow: gateWords(g), Kind: kind,
			Case: gateCase(podName(pod), pod, active)}})
}

type teeHint struct {
	policy.QueueingHint
	e *Evaluator
}

func (t *teeHint) Hints(ev abi.EventView, pods []abi.PodView, out []abi.Hint) {
	t.QueueingHint.Hints(ev, pods, out)
	c := t.e.sample(abi.SlotQueueingHint)
	if c == nil {
		return
	}
	evc, err := abi.ReadEvent(append([]byte(nil), ev.Bytes()...))
	if err != nil {
		return
	}
	cp := make([]abi.PodView, len(pods))
	for i, p := range pods {
		cp[i] = clonePod(p)
	}
	active := slices.Clone(out)
	t.e.offer(abi.SlotQueueingHint, c, func() { t.e.compareHints(c, evc, cp, active) })
}

func hintWords(h abi.Hint) string {
	switch h {
	case abi.HintSkip:
		return "skip"
	case abi.HintQueue:
		return "queue"
	}
	return "error (queue)"
}

func (e *Evaluator) compareHints(c *candidate, ev abi.EventView, pods []abi.PodView, active []abi.Hint) {
	const slot = abi.SlotQueueingHint
	if !e.current(slot, c) {
		return
	}
	h := c.impl.(policy.QueueingHint)
	regs := h.Registrations()
	out := make([]abi.Hint, len(pods))
	if e.call(slot, func() { h.Hints(ev, pods, out) }) {
		label := queue.EventLabel(ev.Resource(), ev.Action())
		e.record(slot, c, failure(podName(pods[0]), label, hintWords(active[0]), hintCase(podName(pods[0])+" on "+label, ev, pods[0], active[0]), nil))
		return
	}
	label := queue.EventLabel(ev.Resource(), ev.Action())
	var o outcome
	for i, p := range pods {
		// A shadow that does not register the event for a plugin that
		// rejected the pod would not have been asked: that is a Skip.
		sh := out[i]
		if !registered(regs, ev, p) {
			sh = abi.HintSkip
		}
		aq, sq := active[i] != abi.HintSkip, sh == abi.HintQueue || sh == abi.HintError
		uid := types.UID(p.UID())
		if aq == sq {
			o.agree++
			if sq {
				delete(e.delayed, uid) // the shadow would have queued it too
			}
			continue
		}
		cas := hintCase(podName(p)+" on "+label, ev, p, active[i])
		kind := KindExtraAttempts
		if aq {
			kind = KindWouldSkip
			e.mark(uid, hintMark{cand: c, event: label, pod: podName(p), cas: cas})
		}
		o.count(kind)
		o.disagree++
		o.sample = &Sample{Pod: podName(p), Event: label, Active: hintWords(active[i]), Shadow: hintWords(sh), Kind: kind, Case: cas}
	}
	e.record(slot, c, o)
}

func (o *outcome) count(kind string) {
	if o.kinds == nil {
		o.kinds = map[string]int64{}
	}
	o.kinds[kind]++
}

// mark remembers that the shadow would have skipped uid, until its next
// attempt; the join is bounded (maxJoin pods), past which it starts afresh.
func (e *Evaluator) mark(uid types.UID, m hintMark) {
	if len(e.delayed) >= maxJoin {
		clear(e.delayed)
	}
	if len(e.attempting) >= maxJoin {
		clear(e.attempting)
	}
	e.delayed[uid] = m
}

// registered reports whether regs cover ev for a plugin that rejected p (or
// any plugin, a wildcard registration).
func registered(regs []abi.Registration, ev abi.EventView, p abi.PodView) bool {
	res, act := ev.Resource(), ev.Action()
	for _, r := range regs {
		if !r.Resource.Matches(res) || r.Actions&act == 0 {
			continue
		}
		if r.Plugin == abi.PluginWildcard || has(p.UnschedulablePlugins(), r.Plugin) || has(p.PendingPlugins(), r.Plugin) {
			return true
		}
	}
	return false
}

func has(l abi.StrList, s string) bool {
	for i := range l.Len() {
		if l.At(i) == s {
			return true
		}
	}
	return false
}

type teeVictims struct {
	policy.VictimOrder
	e *Evaluator
}

func (t *teeVictims) Order(preemptor abi.PodView, victims []abi.Victim, order []uint32) {
	t.VictimOrder.Order(preemptor, victims, order)
	c := t.e.sample(abi.SlotVictimOrder)
	if c == nil || len(victims) == 0 {
		return
	}
	var pre abi.PodView
	if len(preemptor.Bytes()) > 0 {
		pre = clonePod(preemptor)
	}
	vs, active := slices.Clone(victims), slices.Clone(order)
	t.e.offer(abi.SlotVictimOrder, c, func() { t.e.compareVictims(c, pre, vs, active) })
}

func (e *Evaluator) compareVictims(c *candidate, pre abi.PodView, victims []abi.Victim, active []uint32) {
	const slot = abi.SlotVictimOrder
	if !e.current(slot, c) {
		return
	}
	pod := ""
	if len(pre.Bytes()) > 0 {
		pod = podName(pre)
	}
	order := make([]uint32, len(victims))
	if e.call(slot, func() { c.impl.(policy.VictimOrder).Order(pre, victims, order) }) || !permutation(order) {
		e.record(slot, c, failure(pod, "Preemption", victimWords(victims, active), victimsCase("victims of "+pod, pre, victims, active), nil))
		return
	}
	if slices.Equal(order, active) {
		e.record(slot, c, outcome{agree: 1})
		return
	}
	o := outcome{disagree: 1, kinds: map[string]int64{KindVictimOrderDiffers: 1}}
	kind := KindVictimOrderDiffers
	// Preemption evicts the least important first: the last of the order.
	// The set differs when the shadow's least important is another pod.
	if active[len(active)-1] != order[len(order)-1] {
		o.kinds[KindVictimSetDiffers] = 1
		kind = KindVictimSetDiffers
	}
	o.sample = &Sample{Pod: pod, Event: "Preemption", Active: victimWords(victims, active), Shadow: victimWords(victims, order), Kind: kind,
		Case: victimsCase("victims of "+pod, pre, victims, active)}
	e.record(slot, c, o)
}

func permutation(order []uint32) bool {
	seen := make([]bool, len(order))
	for _, i := range order {
		if int(i) >= len(order) || seen[i] {
			return false
		}
		seen[i] = true
	}
	return true
}

// victimWords lists the victims in order, most important first, at most
// five.
func victimWords(victims []abi.Victim, order []uint32) string {
	s := "most important first:"
	for n, i := range order {
		if n == 5 {
			s += " ... (" + strconv.Itoa(len(order)) + ")"
			break
		}
		if int(i) < len(victims) {
			s += " " + victims[i].Namespace + "/" + victims[i].Name
		}
	}
	return s
}

// holder is the placement adapters' hold (see wasmplacement): a tee keeps
// it so that a cycle still holds the module it began with.
type holder interface {
	Hold() (release func(), ok bool)
}

func hold(p any) (func(), bool) {
	if h, ok := p.(holder); ok {
		return h.Hold()
	}
	return func() {}, true
}

type teeFilter struct {
	in policy.Filter
	e  *Evaluator
}

func (t *teeFilter) Hold() (func(), bool)                    { return hold(t.in) }
func (t *teeFilter) Options() abi.PlacementOptions           { return t.in.Options() }
func (t *teeFilter) PreFilter(pod abi.PodView) (bool, error) { return t.in.PreFilter(pod) }

func (t *teeFilter) Filter(pod abi.PodView, nodes []policy.PlacementNode, out []policy.FilterVerdict) error {
	if err := t.in.Filter(pod, nodes, out); err != nil {
		return err
	}
	if c := t.e.sample(abi.SlotFilter); c != nil {
		// Node records are built anew when a node changes, never changed in
		// place: the copy of the slice keeps them.
		p, ns, vs := clonePod(pod), slices.Clone(nodes), slices.Clone(out)
		t.e.offer(abi.SlotFilter, c, func() { t.e.compareFilter(c, p, ns, vs) })
	}
	return nil
}

func feasible(vs []policy.FilterVerdict) int {
	n := 0
	for _, v := range vs {
		if v.Code == abi.FilterPass {
			n++
		}
	}
	return n
}

func (e *Evaluator) compareFilter(c *candidate, pod abi.PodView, nodes []policy.PlacementNode, active []policy.FilterVerdict) {
	const slot = abi.SlotFilter
	if !e.current(slot, c) {
		return
	}
	f := c.impl.(policy.Filter)
	out := make([]policy.FilterVerdict, len(nodes))
	concerned, err := f.PreFilter(pod)
	if err == nil && concerned {
		err = f.Filter(pod, nodes, out)
	}
	if err != nil {
		e.record(slot, c, failure(podName(pod), "Filter", fmt.Sprintf("%d of %d nodes pass", feasible(active), len(nodes)),
			filterCase(podName(pod)+" on "+nodes[0].Rec.Name(), pod, nodes[0], active[0]), err))
		return
	}
	differ, first := 0, -1
	for i := range nodes {
		if (out[i].Code == abi.FilterPass) != (active[i].Code == abi.FilterPass) {
			if first < 0 {
				first = i
			}
			differ++
		}
	}
	if differ == 0 {
		e.record(slot, c, outcome{agree: 1})
		return
	}
	e.record(slot, c, outcome{disagree: 1, kinds: map[string]int64{KindFeasibleDiffers: 1},
		sample: &Sample{Pod: podName(pod), Event: "Filter", Kind: KindFeasibleDiffers,
			Active: fmt.Sprintf("%d of %d nodes pass; %s: %s", feasible(active), len(nodes), nodes[first].Rec.Name(), verdictWords(active[first])),
			Shadow: fmt.Sprintf("%d of %d nodes pass; %s: %s", feasible(out), len(nodes), nodes[first].Rec.Name(), verdictWords(out[first])),
			Case:   filterCase(podName(pod)+" on "+nodes[first].Rec.Name(), pod, nodes[first], active[first])}})
}

func verdictWords(v policy.FilterVerdict) string {
	if v.Code == abi.FilterPass {
		return "pass"
	}
	if v.Reason == "" {
		return "reject"
	}
	return "reject (" + v.Reason + ")"
}

type teeScore struct {
	in policy.Score
	e  *Evaluator
}

func (t *teeScore) Hold() (func(), bool)                   { return hold(t.in) }
func (t *teeScore) Options() abi.PlacementOptions          { return t.in.Options() }
func (t *teeScore) PreScore(pod abi.PodView) (bool, error) { return t.in.PreScore(pod) }

func (t *teeScore) Score(pod abi.PodView, nodes []policy.PlacementNode, out []int64) error {
	if err := t.in.Score(pod, nodes, out); err != nil {
		return err
	}
	if c := t.e.sample(abi.SlotScore); c != nil && len(nodes) > 1 {
		p, ns, sc := clonePod(pod), slices.Clone(nodes), slices.Clone(out)
		t.e.offer(abi.SlotScore, c, func() { t.e.compareScore(c, p, ns, sc) })
	}
	return nil
}

// top is the index of the highest score, the first of equals.
func top(scores []int64) int {
	best := 0
	for i, s := range scores {
		if s > scores[best] {
			best = i
		}
	}
	return best
}

func (e *Evaluator) compareScore(c *candidate, pod abi.PodView, nodes []policy.PlacementNode, active []int64) {
	const slot = abi.SlotScore
	if !e.current(slot, c) {
		return
	}
	s := c.impl.(policy.Score)
	out := make([]int64, len(nodes))
	concerned, err := s.PreScore(pod)
	if err == nil && concerned {
		err = s.Score(pod, nodes, out)
	}
	a := top(active)
	if err != nil {
		e.record(slot, c, failure(podName(pod), "Score", "ranks "+nodes[a].Rec.Name()+" first", "", err))
		return
	}
	b := top(out)
	if !concerned || out[b] == out[a] {
		// The serving policy's first is among the shadow's firsts, or the
		// shadow has no preference: same choice.
		e.record(slot, c, outcome{agree: 1})
		return
	}
	e.record(slot, c, outcome{disagree: 1, kinds: map[string]int64{KindChosenNodeDiffers: 1},
		sample: &Sample{Pod: podName(pod), Event: "Score", Kind: KindChosenNodeDiffers,
			Active: fmt.Sprintf("ranks %s first (%d)", nodes[a].Rec.Name(), active[a]),
			Shadow: fmt.Sprintf("ranks %s first (%d; %d for %s)", nodes[b].Rec.Name(), out[b], out[a], nodes[a].Rec.Name()),
			Case:   scoreCase(podName(pod)+" on "+nodes[a].Rec.Name()+" and "+nodes[b].Rec.Name(), pod, nodes[a], nodes[b], active[a], active[b])}})
}
