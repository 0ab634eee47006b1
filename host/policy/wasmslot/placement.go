package wasmslot

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/wasmsched/wasmsched/abi"
	"github.com/wasmsched/wasmsched/host/policy"
	"github.com/wasmsched/wasmsched/host/wasm"
)

var (
	_ policy.Filter = (*Filter)(nil)
	_ policy.Score  = (*Score)(nil)
	_ adapter       = (*Filter)(nil)
	_ adapter       = (*Score)(nil)
)

// placementModule is what the filter and score adapters share: the module,
// its options, and the calls that keep its instances' node records current.
//
// The placement adapters have no native fallback: a failed call returns an
// error, and the caller (the Wasm placement plugin) applies the slot's
// failure policy, because what a failed filter means (reject, or ignore) is
// the operator's choice, not the slot's.
type placementModule struct {
	slotModule
	opts abi.PlacementOptions
	pre  wasm.FuncID // FuncPreFilter or FuncPreScore; 0 when not exported
	main wasm.FuncID // FuncFilter or FuncScore
	holds
}

// holds counts the scheduling cycles that hold the module (Hold), so that
// a swap closes it only once the cycles that began with it are over: a pod
// is judged by one filter from PreFilter to its last preemption dry run.
type holds struct {
	mu      sync.Mutex
	n       int
	closing bool   // retired: no new holds; closeFn runs at the last release
	closeFn func() // what closes the module
}

// Hold keeps the module open until release is called (once; later calls
// do nothing), so that a cycle's calls all reach it even if a swap retires
// it meanwhile. It reports false, holding nothing, when the module was
// already retired: the caller reads the slot again.
func (h *holds) Hold() (release func(), ok bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closing {
		return nil, false
	}
	h.n++
	var once sync.Once
	return func() { once.Do(h.release) }, true
}

func (h *holds) release() {
	h.mu.Lock()
	h.n--
	var closeFn func()
	if h.n == 0 && h.closing {
		closeFn, h.closeFn = h.closeFn, nil
	}
	h.mu.Unlock()
	if closeFn != nil {
		closeFn()
	}
}

// closeWhenFree runs closeFn now if no cycle holds the module, else when
// the last one releases it; new holds are refused from now on.
func (h *holds) closeWhenFree(closeFn func()) {
	h.mu.Lock()
	h.closing = true
	if h.n > 0 {
		h.closeFn = closeFn
		h.mu.Unlock()
		return
	}
	h.mu.Unlock()
	closeFn()
}

// errRetired is returned by a retired adapter with no successor (its Set
// closed while the call was on its way).
var errRetired = fmt.Errorf("%w: the module was removed from the slot", policy.ErrNoModule)

func (s *placementModule) init(m *wasm.Module, slot abi.Slot, rec policy.Recorder) error {
	if err := s.slotModule.init(m, slot, rec); err != nil {
		return err
	}
	if _, minor := m.ABIVersion(); minor < abi.MinorPlacement {
		return fmt.Errorf("module %q speaks ABI 1.%d, and the %s slot needs 1.%d or later: rebuild it with the current guest SDK",
			m.Name(), minor, slot, abi.MinorPlacement)
	}
	s.main, s.pre = wasm.FuncFilter, wasm.FuncPreFilter
	if slot == abi.SlotScore {
		s.main, s.pre = wasm.FuncScore, wasm.FuncPreScore
	}
	if !m.HasFunc(s.pre) {
		s.pre = 0
	}
	if !m.HasFunc(wasm.FuncPlacementOptions) {
		return nil
	}
	inst, err := m.Acquire(context.Background())
	if err != nil {
		return err
	}
	defer m.Release(inst)
	r, err := inst.Call(wasm.FuncPlacementOptions, 0, 0)
	if err != nil {
		return fmt.Errorf("module %q: reading its placement options: %w", m.Name(), err)
	}
	out, err := inst.Output(abi.Result(r))
	if err != nil {
		return fmt.Errorf("module %q: reading its placement options: %w", m.Name(), err)
	}
	if s.opts, err = abi.DecodePlacementOptions(out); err != nil {
		return fmt.Errorf("module %q: its placement options are malformed: %w", m.Name(), err)
	}
	return nil
}

// Options returns the module's declared options, with the default filter
// events when it declared none.
func (s *placementModule) Options() abi.PlacementOptions {
	o := s.opts
	o.FilterEvents = append([]abi.FilterEvent(nil), o.FilterEvents...)
	if len(o.FilterEvents) == 0 {
		o.FilterEvents = abi.DefaultFilterEvents()
	}
	return o
}

// get returns an instance to call, or why there is none: the breaker is
// open (the decision falls to the failure policy: counted as a fallback, as
// the other slots count theirs), the module was retired (errRetired: the
// caller hands the call to its successor), or instantiation failed (counted
// as a failure and a fallback).
func (s *placementModule) get() (*wasm.Instance, error) {
	if s.brk.isOpen() {
		s.rec.FellBack(s.slot, 1)
		return nil, fmt.Errorf("module %q is switched off: its circuit breaker opened after repeated failures (load a fixed module to serve the %s slot again)", s.mod.Name(), s.slot)
	}
	inst, err := s.mod.Acquire(context.Background())
	if err != nil {
		if s.retired.Load() {
			return nil, errRetired
		}
		s.rec.Failed(s.slot, "instantiate", err)
		s.brk.fail(&s.retired)
		s.rec.FellBack(s.slot, 1)
		return nil, err
	}
	s.rec.Called(s.slot)
	return inst, nil
}

// fail counts a failed call and returns its error.
func (s *placementModule) fail(err error) error {
	s.failed(err)
	s.rec.FellBack(s.slot, 1)
	return err
}

// concerns asks the module's pre-step about pod (true without one).
func (s *placementModule) concerns(pod abi.PodView) (bool, error) {
	if s.pre == 0 {
		return true, nil
	}
	inst, err := s.get()
	if err != nil {
		return false, err
	}
	defer s.mod.Release(inst)
	ok, err := s.callPre(inst, pod)
	if err != nil {
		return false, s.fail(err)
	}
	return ok, nil
}

func (s *placementModule) callPre(inst *wasm.Instance, pod abi.PodView) (bool, error) {
	n, err := put(inst, pod.Bytes())
	if err != nil {
		return false, err
	}
	r, err := inst.Call(s.pre, uint64(n), 0)
	if err != nil {
		return false, err
	}
	return inst.Bool(r)
}

// heldNodes is what the host knows of one instance's node records: the
// generation of the record it holds under each id. It lives on the
// instance (wasm.Instance.Value), so an instance that is discarded or
// recycled takes it along and its replacement starts empty.
type heldNodes struct {
	gen     []heldGen
	upserts []abi.NodeUpsert // scratch
}

// heldGen is the generation of the record an instance holds under an id;
// ok is false when it holds none (a generation may be 0).
type heldGen struct {
	gen int64
	ok  bool
}

// scratch is a call's reusable host-side buffers.
type scratch struct {
	ids    []uint32
	inline [][]byte
}

var scratchPool = sync.Pool{New: func() any { return new(scratch) }}

// call syncs the nodes inst lacks and calls the slot's main function on pod
// and nodes, returning its output (an alias of guest memory, valid until
// the next call into inst).
func (s *placementModule) call(inst *wasm.Instance, pod abi.PodView, nodes []policy.PlacementNode) ([]byte, error) {
	held, _ := inst.Value().(*heldNodes)
	if held == nil {
		held = &heldNodes{}
		inst.SetValue(held)
	}
	held.upserts = held.upserts[:0]
	for i := range nodes {
		n := &nodes[i]
		if n.Inline {
			continue
		}
		if int(n.ID) >= len(held.gen) {
			held.gen = append(held.gen, make([]heldGen, int(n.ID)+1-len(held.gen))...)
		}
		if h := held.gen[n.ID]; !h.ok || h.gen != n.Gen {
			held.upserts = append(held.upserts, abi.NodeUpsert{ID: n.ID, Node: n.Rec.Bytes()})
		}
	}
	if len(held.upserts) > 0 {
		if err := s.sync(inst, held); err != nil {
			return nil, err
		}
		for i := range nodes {
			if !nodes[i].Inline {
				held.gen[nodes[i].ID] = heldGen{gen: nodes[i].Gen, ok: true}
			}
		}
	}
	sc := scratchPool.Get().(*scratch)
	defer func() {
		clear(sc.inline)
		sc.ids, sc.inline = sc.ids[:0], sc.inline[:0]
		scratchPool.Put(sc)
	}()
	// The guest reads the ids first, then the inline nodes, so the inline
	// nodes must come last to keep the caller's order.
	for i := range nodes {
		switch {
		case nodes[i].Inline:
			sc.inline = append(sc.inline, nodes[i].Rec.Bytes())
		case len(sc.inline) > 0:
			return nil, errors.New("placement: inline nodes must follow the snapshot's (host bug)")
		default:
			sc.ids = append(sc.ids, nodes[i].ID)
		}
	}
	pb := pod.Bytes()
	n := abi.PlacementLen(pb, sc.ids, sc.inline)
	in, err := inst.Input(n)
	if err != nil {
		return nil, err
	}
	if b := abi.AppendPlacement(in[:0:n], pb, sc.ids, sc.inline); len(b) != n || &b[0] != &in[0] {
		return nil, fmt.Errorf("placement of %d bytes does not fill the %d reserved (host bug)", len(b), n)
	}
	r, err := inst.Call(s.main, uint64(n), 0)
	if err != nil {
		return nil, err
	}
	return inst.Output(abi.Result(r))
}

// sync sends held.upserts to inst. On a failure the instance is discarded
// (its memory no longer matches held).
func (s *placementModule) sync(inst *wasm.Instance, held *heldNodes) error {
	n := abi.NodeSyncLen(held.upserts, nil)
	in, err := inst.Input(n)
	if err != nil {
		inst.Discard()
		return err
	}
	if b := abi.AppendNodeSync(in[:0:n], false, held.upserts, nil); len(b) != n || &b[0] != &in[0] {
		inst.Discard()
		return fmt.Errorf("node sync of %d bytes does not fill the %d reserved (host bug)", len(b), n)
	}
	r, err := inst.Call(wasm.FuncNodes, uint64(n), 0)
	if err == nil {
		_, err = inst.Bool(r)
	}
	if err != nil {
		inst.Discard()
		return err
	}
	return nil
}

// smokeCall runs the placement smoke test: an empty reset sync, the pre
// step on the first smoke pod, and the main call on the smoke node sent
// inline.
func (s *placementModule) smokeCall(inst *wasm.Instance, in *policy.SmokeInput) ([]byte, error) {
	n := abi.NodeSyncLen(nil, nil)
	buf, err := inst.Input(n)
	if err != nil {
		return nil, err
	}
	abi.AppendNodeSync(buf[:0:n], true, nil, nil)
	r, err := inst.Call(wasm.FuncNodes, uint64(n), 0)
	if err != nil {
		return nil, err
	}
	if _, err := inst.Bool(r); err != nil {
		return nil, err
	}
	if s.pre != 0 {
		if _, err := s.callPre(inst, in.Pods[0]); err != nil {
			return nil, err
		}
	}
	node, ok := in.Event.NewNode()
	if !ok {
		return nil, errors.New("the smoke event has no node (host bug)")
	}
	return s.call(inst, in.Pods[0], []policy.PlacementNode{{Rec: node, Inline: true}})
}

// placementCall is a placement adapter's call: on an instance of the
// module, timed and its failure counted; handed to the module's successor
// (via) when a swap retired it on the way; an error when there is neither.
func placementCall[P any](s *placementModule, next *handoff[P], via func(P) error, call func(*wasm.Instance) error) error {
	inst, err := s.get()
	if err != nil {
		if errors.Is(err, errRetired) {
			if n, ok := next.to(&s.retired); ok {
				return via(n)
			}
		}
		return err
	}
	defer s.mod.Release(inst)
	start := time.Now()
	err = call(inst)
	s.rec.Observe(s.slot, time.Since(start))
	if err != nil {
		return s.fail(err)
	}
	return nil
}

// Filter runs the filter slot through a module: one call per pod over all
// the nodes to judge.
type Filter struct {
	placementModule
	next    handoff[policy.Filter]
	reasons interned
}

// NewFilter adapts m to the filter slot.
func NewFilter(m *wasm.Module, rec policy.Recorder) (*Filter, error) {
	s := &Filter{}
	if err := s.init(m, abi.SlotFilter, rec); err != nil {
		return nil, err
	}
	return s, nil
}

func (s *Filter) PreFilter(pod abi.PodView) (bool, error) {
	ok, err := s.concerns(pod)
	if errors.Is(err, errRetired) {
		if next, found := s.next.to(&s.retired); found {
			return next.PreFilter(pod)
		}
	}
	return ok, err
}

func (s *Filter) Filter(pod abi.PodView, nodes []policy.PlacementNode, out []policy.FilterVerdict) error {
	if len(nodes) == 0 {
		return nil
	}
	return placementCall(&s.placementModule, &s.next,
		func(next policy.Filter) error { return next.Filter(pod, nodes, out) },
		func(inst *wasm.Instance) error { return s.filter(inst, pod, nodes, out) })
}

func (s *Filter) filter(inst *wasm.Instance, pod abi.PodView, nodes []policy.PlacementNode, out []policy.FilterVerdict) error {
	res, err := s.call(inst, pod, nodes)
	if err != nil {
		return err
	}
	v, err := abi.ReadVerdicts(res, len(nodes))
	if err != nil {
		return badOutput(inst, s.mod, s.slot, abi.ExportFilter, err.Error())
	}
	var local [8]string
	reasons := local[:0]
	for j := range v.NumReasons() {
		reasons = append(reasons, s.reasons.get(v.Reason(j)))
	}
	for i := range nodes {
		code := v.Code(i)
		if code == abi.FilterPass {
			out[i] = policy.FilterVerdict{}
			continue
		}
		out[i] = policy.FilterVerdict{Code: code, Reason: reasons[v.ReasonIndex(i)]}
	}
	return nil
}

// Score runs the score slot through a module: one call per pod over the
// feasible nodes.
type Score struct {
	placementModule
	next handoff[policy.Score]
}

// NewScore adapts m to the score slot.
func NewScore(m *wasm.Module, rec policy.Recorder) (*Score, error) {
	s := &Score{}
	if err := s.init(m, abi.SlotScore, rec); err != nil {
		return nil, err
	}
	return s, nil
}

func (s *Score) PreScore(pod abi.PodView) (bool, error) {
	ok, err := s.concerns(pod)
	if errors.Is(err, errRetired) {
		if next, found := s.next.to(&s.retired); found {
			return next.PreScore(pod)
		}
	}
	return ok, err
}

func (s *Score) Score(pod abi.PodView, nodes []policy.PlacementNode, out []int64) error {
	if len(nodes) == 0 {
		return nil
	}
	return placementCall(&s.placementModule, &s.next,
		func(next policy.Score) error { return next.Score(pod, nodes, out) },
		func(inst *wasm.Instance) error { return s.score(inst, pod, nodes, out) })
}

func (s *Score) score(inst *wasm.Instance, pod abi.PodView, nodes []policy.PlacementNode, out []int64) error {
	res, err := s.call(inst, pod, nodes)
	if err != nil {
		return err
	}
	if err := abi.DecodeScores(res, out[:len(nodes)]); err != nil {
		return badOutput(inst, s.mod, s.slot, abi.ExportScore, err.Error())
	}
	return nil
}

func (s *Filter) retire(next any) {
	s.next.set(next)
	s.retired.Store(true)
}

func (s *Score) retire(next any) {
	s.next.set(next)
	s.retired.Store(true)
}

func (s *Filter) smoke(inst *wasm.Instance, in *policy.SmokeInput) error {
	res, err := s.smokeCall(inst, in)
	if err != nil {
		return err
	}
	if _, err := abi.ReadVerdicts(res, 1); err != nil {
		return badOutput(inst, s.mod, s.slot, abi.ExportFilter, err.Error())
	}
	return nil
}

func (s *Score) smoke(inst *wasm.Instance, in *policy.SmokeInput) error {
	res, err := s.smokeCall(inst, in)
	if err != nil {
		return err
	}
	var one [1]int64
	if err := abi.DecodeScores(res, one[:]); err != nil {
		return badOutput(inst, s.mod, s.slot, abi.ExportScore, err.Error())
	}
	return nil
}

// interned keeps one copy of each rejection reason a module gave, so that
// verdicts do not copy the same text out of guest memory per node and per
// pod. It is bounded: a module that invents a new reason per node cannot
// grow it past maxInterned.
type interned struct {
	mu sync.Mutex
	m  map[string]string
}

const maxInterned = 4096

// get returns a host-owned copy of s (which may alias guest memory).
func (c *interned) get(s string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if v, ok := c.m[s]; ok {
		return v
	}
	if c.m == nil || len(c.m) >= maxInterned {
		c.m = make(map[string]string)
	}
	v := strings.Clone(s)
	c.m[v] = v
	return v
}
