package queue

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"

	"github.com/wasmsched/wasmsched/abi"
	"github.com/wasmsched/wasmsched/guest-sdk/policytest"
	"github.com/wasmsched/wasmsched/host/podview"
	"github.com/wasmsched/wasmsched/host/policy"
	"github.com/wasmsched/wasmsched/host/policy/wasmslot"
	"github.com/wasmsched/wasmsched/host/wasm"
	"github.com/wasmsched/wasmsched/policies"
)

// The queue with the reference policy modules loaded as Wasm, as the
// scheduler loads them (cmd/wasmsched/slots.go): the built-in backoffpop
// (KEP-5142) here, the built-in hints (KEP-4247) in wasmhints_test.go.
// Every module call goes through the host's real runtime and slot adapters,
// and a failed call or a native fallback fails the test (policytest.Strict).

// loadBuiltin loads the built-in module of slot (policies.Builtin) into a
// fresh runtime closed when tb ends. The per-call deadline is raised from
// the default 100 ms: these tests are about what the module decides, and a
// loaded machine under -race must not turn a slow call into a fallback.
func loadBuiltin(tb testing.TB, slot abi.Slot) *wasm.Module {
	tb.Helper()
	b := policies.Builtin(slot)
	if b.Name == "" {
		tb.Fatalf("no built-in module for slot %s", slot)
	}
	ctx := context.Background()
	rt, err := wasm.NewRuntime(ctx)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if err := rt.Close(ctx); err != nil {
			tb.Errorf("closing the runtime: %v", err)
		}
	})
	limits := wasm.DefaultLimits()
	limits.Deadline = 10 * time.Second
	m, err := rt.Load(ctx, "builtin:"+b.Name, b.Wasm, limits)
	if err != nil {
		tb.Fatalf("loading the built-in %s module: %v", b.Name, err)
	}
	return m
}

// slotRecorder fails the test on every failed call and every native
// fallback (policytest.Strict), and counts the calls into the module so
// that a test can check the module was asked at all.
type slotRecorder struct {
	policy.Recorder
	mu    sync.Mutex
	calls map[abi.Slot]int
}

func newSlotRecorder(tb testing.TB) *slotRecorder {
	return &slotRecorder{Recorder: policytest.Strict(tb), calls: map[abi.Slot]int{}}
}

func (r *slotRecorder) Called(s abi.Slot) {
	r.mu.Lock()
	r.calls[s]++
	r.mu.Unlock()
}

func (r *slotRecorder) called(s abi.Slot) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.calls[s]
}

// sortSlots are the queue-sort and backoff-sort slots of one run.
type sortSlots struct {
	name    string
	opts    []Option
	backoff policy.BackoffSort
	// verify checks, once the run is over, that the module answered.
	verify func(t *testing.T)
}

func nativeSortSlots() sortSlots {
	return sortSlots{name: "native", backoff: policy.BackoffExpiry{}, verify: func(*testing.T) {}}
}

// wasmSortSlots builds both slots from the built-in backoffpop module, with
// the native defaults as fallbacks, as cmd/wasmsched does.
func wasmSortSlots(t *testing.T) sortSlots {
	t.Helper()
	m := loadBuiltin(t, abi.SlotQueueSort)
	rec := newSlotRecorder(t)
	s, err := wasmslot.NewSort(m, abi.SlotQueueSort, policy.PrioritySort{}, rec)
	if err != nil {
		t.Fatal(err)
	}
	bs, err := wasmslot.NewBackoffSort(m, policy.BackoffExpiry{}, rec)
	if err != nil {
		t.Fatal(err)
	}
	if !s.Keyed() || !bs.Keyed() {
		t.Fatalf("backoffpop computes sort keys, but the adapters say keyed=%v (queue sort), %v (backoff sort)", s.Keyed(), bs.Keyed())
	}
	return sortSlots{
		name: "wasm", opts: []Option{WithSort(s), WithBackoffSort(bs)}, backoff: bs,
		verify: func(t *testing.T) {
			t.Helper()
			for _, slot := range []abi.Slot{abi.SlotQueueSort, abi.SlotBackoffSort} {
				if rec.called(slot) == 0 {
					t.Errorf("the module was never called for the %s slot", slot)
				}
			}
		},
	}
}

// forSortSlots runs body with the native defaults and with backoffpop.
func forSortSlots(t *testing.T, body func(t *testing.T, s sortSlots)) {
	t.Helper()
	t.Run("native", func(t *testing.T) { body(t, nativeSortSlots()) })
	t.Run("wasm", func(t *testing.T) {
		s := wasmSortSlots(t)
		body(t, s)
		s.verify(t)
	})
}

// backoffFailure is a pod handed back, rejected by a plugin, at a time after
// t0: its first backoff is 1 s.
type backoffFailure struct {
	at   time.Duration
	name string
	prio int32
}

// TestWasmBackoffpopWindows: KEP-5142's ordering of backoffQ, read through
// pops from backoffQ on an empty activeQ and through the backoff flush.
// Backoff expiries are truncated to 1-second windows; the earlier window
// goes first whatever the priority, and inside a window the higher priority
// goes first even when its backoff ends later (the KEP's case), then the pod
// queued earlier.
func TestWasmBackoffpopWindows(t *testing.T) {
	cases := []struct {
		name     string
		failures []backoffFailure
		want     []string
	}{
		{
			name:     "one window: high priority first, though the low one's backoff ends 0.5 s earlier",
			failures: []backoffFailure{{100 * time.Millisecond, "low", 1}, {600 * time.Millisecond, "high", 10}},
			want:     []string{"high", "low"},
		},
		{
			name:     "two windows: the earlier window first, whatever the priority",
			failures: []backoffFailure{{200 * time.Millisecond, "low", 1}, {1100 * time.Millisecond, "high", 10}},
			want:     []string{"low", "high"},
		},
		{
			name:     "one window, equal priority: queued earlier first",
			failures: []backoffFailure{{100 * time.Millisecond, "first", 5}, {900 * time.Millisecond, "second", 5}},
			want:     []string{"first", "second"},
		},
		{
			// 0.999 s + 1 s = 1.999 s: window 1 s. 1.0 s + 1 s = 2.0 s: window 2 s.
			name:     "an expiry on a whole second opens its window",
			failures: []backoffFailure{{999 * time.Millisecond, "low", 1}, {time.Second, "high", 10}},
			want:     []string{"low", "high"},
		},
		{
			name: "two windows of two",
			failures: []backoffFailure{{200 * time.Millisecond, "low", 1}, {700 * time.Millisecond, "high", 10},
				{1300 * time.Millisecond, "late", 100}, {1350 * time.Millisecond, "late-low", -1}},
			want: []string{"high", "low", "late", "late-low"},
		},
	}
	forSortSlots(t, func(t *testing.T, s sortSlots) {
		for _, c := range cases {
			t.Run(c.name+"/pop from backoffQ", func(t *testing.T) {
				e := newEnv(t, s.opts...)
				backOffAll(t, e, c.failures)
				// Every pod is still in its window: only pops from backoffQ
				// can take them.
				if diff := cmp.Diff(c.want, e.popNames(t)); diff != "" {
					t.Errorf("pop order from backoffQ (-want, +got):\n%s", diff)
				}
				if n := e.rec.incomingOf(QueueActive, EventPopFromBackoffQ); n != len(c.want) {
					t.Errorf("incoming{active, PopFromBackoffQ} = %d, want %d", n, len(c.want))
				}
				e.check(t)
			})
			t.Run(c.name+"/flush", func(t *testing.T) {
				// The flush moves a window as a whole once it is over, and
				// activeQ orders it again by the queue sort.
				e := newEnv(t, s.opts...)
				backOffAll(t, e, c.failures)
				var got []string
				for now := 2 * time.Second; now <= 4*time.Second; now += time.Second {
					e.clk.SetTime(t0.Add(now))
					e.q.flushBackoffCompleted()
					active := e.q.activeNames()
					got = append(got, active...)
					for range active { // activeQ first: these, not backoffQ's
						e.popPod(t)
					}
				}
				if diff := cmp.Diff(c.want, got); diff != "" {
					t.Errorf("activeQ after the flushes at 2 s, 3 s and 4 s (-want, +got):\n%s", diff)
				}
				if n := e.rec.incomingOf(QueueActive, EventBackoffComplete); n != len(c.want) {
					t.Errorf("incoming{active, BackoffComplete} = %d, want %d", n, len(c.want))
				}
				e.check(t)
			})
		}
	})
}

// backOffAll hands each pod back at its time, rejected by a plugin with an
// event during its attempt, so that it backs off for 1 s (its first attempt),
// and checks the window its expiry is cached as.
func backOffAll(t *testing.T, e *env, failures []backoffFailure) {
	t.Helper()
	for _, f := range failures {
		e.clk.SetTime(t0.Add(f.at))
		p := e.backOff(t, makePod(f.name).priority(f.prio).obj())
		if got := e.where(p.uid); got != "backoff" {
			t.Fatalf("%s is %s after its failure, want backoff", f.name, got)
		}
		want := t0.Add(f.at + time.Second).Truncate(time.Second)
		if got := time.Unix(0, p.View().BackoffExpiry()); !got.Equal(want) {
			t.Errorf("%s: backoff expiry %v, want the start of its window, %v", f.name, got, want)
		}
	}
}

// TestWasmBackoffpopPopFromBackoffQ: KEP-5142's pop from backoffQ. With
// activeQ empty, a pod backing off after an unschedulable attempt is popped
// at once; one backing off after an error is not: Pop blocks until its
// backoff is over and the flush (Run, on the fake clock) moves it.
func TestWasmBackoffpopPopFromBackoffQ(t *testing.T) {
	forSortSlots(t, func(t *testing.T, s sortSlots) {
		e := newEnv(t, s.opts...)
		// "s" fails with an error at 0.1 s: window [1 s, 2 s).
		e.clk.SetTime(t0.Add(100 * time.Millisecond))
		sp := e.fail(t, makePod("s").priority(1).obj(), podview.Plugins{}, nil)
		// At 1.2 s "e" fails with an error and "u" is rejected by a plugin
		// (an event during its attempt makes it back off): both in window
		// [2 s, 3 s). "e" outranks both.
		e.clk.SetTime(t0.Add(1200 * time.Millisecond))
		ep := e.fail(t, makePod("e").priority(100).obj(), podview.Plugins{}, nil)
		up := e.backOff(t, makePod("u").priority(0).obj())
		for _, c := range []struct {
			p       *Pod
			where   string
			mayPop  bool
			errored bool
		}{{sp, "errorBackoff", false, true}, {ep, "errorBackoff", false, true}, {up, "backoff", true, false}} {
			if got := e.where(c.p.uid); got != c.where {
				t.Fatalf("%s is %s, want %s", c.p.obj.Name, got, c.where)
			}
			// The slot agrees with the heap the queue chose.
			if got := s.backoff.MayPop(c.p.View()); got != c.mayPop {
				t.Errorf("%s slot MayPop(%s) = %v, want %v", s.name, c.p.obj.Name, got, c.mayPop)
			}
			if got := c.p.View().LastFailureError(); got != c.errored {
				t.Errorf("%s: LastFailureError = %v, want %v", c.p.obj.Name, got, c.errored)
			}
		}

		// activeQ is empty: "u" is popped at once, 1.8 s before its backoff
		// ends, and counts as an attempt.
		if en := e.tryPop(t); en != Entity(up) {
			t.Fatalf("popped %v, want u from backoffQ", en)
		}
		if up.Attempts() != 2 {
			t.Errorf("u: %d attempts, want 2", up.Attempts())
		}
		if n := e.rec.incomingOf(QueueActive, EventPopFromBackoffQ); n != 1 {
			t.Errorf("incoming{active, PopFromBackoffQ} = %d, want 1", n)
		}
		e.q.Done(up.uid)
		// The error heap is never popped early, not even "s", whose window
		// is the current one.
		if en := e.tryPop(t); en != nil {
			t.Fatalf("popped %s, want nothing: pods backing off after an error are not popped early", nameOf(en))
		}

		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { e.q.Run(ctx); close(done) }()
		defer func() { cancel(); <-done }()
		type result struct {
			en  Entity
			err error
		}
		popped := make(chan result, 1)
		pop := func() {
			go func() {
				en, err := e.q.Pop(ctx)
				popped <- result{en, err}
			}()
		}
		wait := func(want *Pod, when string) {
			t.Helper()
			select {
			case r := <-popped:
				if r.err != nil || r.en != Entity(want) {
					t.Fatalf("%s: Pop returned %v, %v; want %s", when, r.en, r.err, want.obj.Name)
				}
			case <-time.After(popTimeout):
				t.Fatalf("%s: Pop did not return %s", when, want.obj.Name)
			}
		}

		pop()
		e.waitForWaiters(t, 2) // Run's alignment timer and leftover ticker
		// 2 s: the first flush. "s" (window 1 s) is over and released; "e"
		// (window 2 s) is not, though it would pop first.
		e.clk.Step(800 * time.Millisecond)
		wait(sp, "the flush at 2 s")
		if st, _ := e.q.PodState(ep.uid); st.Queue != QueueBackoff {
			t.Fatalf("after the flush at 2 s, e is in %q, want %q", st.Queue, QueueBackoff)
		}
		e.q.Done(sp.uid)

		pop()
		e.waitForWaiters(t, 2) // the backoff ticker replaced the timer
		e.clk.Step(time.Second)
		wait(ep, "the flush at 3 s")
		e.q.Done(ep.uid)
		if n := e.rec.incomingOf(QueueActive, EventBackoffComplete); n != 2 {
			t.Errorf("incoming{active, BackoffComplete} = %d, want 2", n)
		}
		e.check(t)
	})
}

// TestWasmBackoffpopMatchesNative runs one generated scenario per seed
// against the queue with the native defaults and with backoffpop, and
// compares everything Pop returned, in order, and where from (activeQ or
// backoffQ), and every 10 steps the whole order of activeQ and of the
// unschedulable-backoff heap. The scenario mixes a few hundred pods of colliding and extreme
// priorities, hand-backs (bound, rejected, pending, error) with events in
// between, updates and deletes, and clock steps on, next to and across
// window boundaries followed by the flushes Run would make.
func TestWasmBackoffpopMatchesNative(t *testing.T) {
	pods := 300
	if raceEnabled {
		pods = 100
	}
	w := wasmSortSlots(t)
	total := 0
	for _, seed := range []uint64{1, 2, 3} {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			native := sortScenario(t, seed, pods, nil)
			wasm := sortScenario(t, seed, pods, w.opts)
			if i := firstTraceDifference(native.trace, wasm.trace); i >= 0 {
				lo := max(i-5, 0)
				t.Fatalf("trace entry %d differs (seed %d): native %q, wasm %q\nbefore it:\n%s", i, seed,
					traceAt(native.trace, i), traceAt(wasm.trace, i), strings.Join(native.trace[lo:i], "\n"))
			}
			if native.fromBackoff == 0 || native.blocked == 0 || native.errors == 0 || native.pending == 0 {
				t.Errorf("the scenario is too tame: %+v", native.sortScenarioCounts)
			}
			t.Logf("%d pods: %d Pops and %d heap orders identical; %+v",
				pods, native.pops, len(native.trace)-native.pops, native.sortScenarioCounts)
			total += native.pops
		})
	}
	w.verify(t)
	t.Logf("%d pops compared", total)
}

func firstTraceDifference(a, b []string) int {
	for i := range max(len(a), len(b)) {
		if traceAt(a, i) != traceAt(b, i) {
			return i
		}
	}
	return -1
}

func traceAt(s []string, i int) string {
	if i < len(s) {
		return s[i]
	}
	return "<end>"
}

type sortScenarioCounts struct {
	pops, fromBackoff, blocked, errors, pending, events, updates, deletes, leftovers int
}

type sortScenarioResult struct {
	// trace has one entry per Pop: "name/active", "name/backoff", or "-"
	// when Pop would block; and every 10 steps the order of activeQ and of
	// the unschedulable-backoff heap.
	trace []string
	sortScenarioCounts
}

// sortScenario drives a queue built with opts through the scenario of seed.
// Every decision comes from the seeded generator, so two queues that pop
// alike see the same scenario.
func sortScenario(t *testing.T, seed uint64, pods int, opts []Option) sortScenarioResult {
	t.Helper()
	e := newEnv(t, opts...)
	rng := rand.New(rand.NewPCG(seed, 5142))
	// Colliding priorities make the queue-time and window tie-breaks decide.
	prios := []int32{-2147483648, -10, 0, 0, 0, 1, 5, 5, 100, 2147483647}
	steps := []time.Duration{0, 1, time.Millisecond, 250 * time.Millisecond, 999 * time.Millisecond,
		time.Second, 1001 * time.Millisecond, 2500 * time.Millisecond, 4 * time.Second, 11 * time.Second}
	var res sortScenarioResult
	held := map[string]*v1.Pod{} // queued, not in flight
	var heldNames []string       // held's keys, sorted, for reproducible picks
	hold := func(p *v1.Pod) {
		if _, ok := held[p.Name]; !ok {
			i, _ := slices.BinarySearch(heldNames, p.Name)
			heldNames = slices.Insert(heldNames, i, p.Name)
		}
		held[p.Name] = p
	}
	release := func(name string) {
		delete(held, name)
		if i, ok := slices.BinarySearch(heldNames, name); ok {
			heldNames = slices.Delete(heldNames, i, i+1)
		}
	}
	var inflight []*Pod
	popOne := func() {
		before := e.rec.incomingOf(QueueActive, EventPopFromBackoffQ)
		res.pops++
		en := e.tryPop(t)
		if en == nil {
			res.trace = append(res.trace, "-")
			res.blocked++
			return
		}
		p := en.(*Pod)
		from := "active"
		if e.rec.incomingOf(QueueActive, EventPopFromBackoffQ) > before {
			from = "backoff"
			res.fromBackoff++
		}
		res.trace = append(res.trace, p.obj.Name+"/"+from)
		release(p.obj.Name)
		inflight = append(inflight, p)
	}
	handBack := func(i int) {
		p := inflight[i]
		inflight = slices.Delete(inflight, i, i+1)
		var rejected podview.Plugins
		switch r := rng.IntN(100); {
		case r < 20:
			e.q.Done(p.uid)
			return
		case r < 55:
			rejected = rejectedBy([]string{fit, abi.PluginNodeAffinity}[rng.IntN(2)])
		case r < 65:
			rejected = podview.Plugins{Pending: []string{"Gate"}}
			res.pending++
		case r < 75:
			rejected = podview.Plugins{Unschedulable: []string{fit}, Pending: []string{"Gate"}}
			res.pending++
		default:
			res.errors++ // no rejecting plugin
		}
		if err := e.q.AddUnschedulableIfNotPresent(p, rejected); err != nil {
			t.Fatal(err)
		}
		hold(p.obj)
	}

	created, ops := 0, 0
	for created < pods || ops < 10*pods {
		ops++
		switch r := rng.IntN(100); {
		case r < 20 && created < pods:
			created++
			p := makePod(fmt.Sprintf("p%04d", created)).priority(prios[rng.IntN(len(prios))]).obj()
			e.q.Add(p)
			hold(p)
		case r < 45:
			popOne()
		case r < 70:
			if len(inflight) > 0 {
				handBack(rng.IntN(len(inflight)))
			}
		case r < 78:
			// The default QueueingHint slot queues every pod on every event.
			e.q.MoveOnEvent(nodeAdd(makeNode("n", 1000)))
			res.events++
		case r < 92:
			e.clk.Step(steps[rng.IntN(len(steps))])
			if rng.IntN(4) == 0 {
				e.clk.SetTime(e.clk.Now().Truncate(time.Second).Add(time.Second)) // on a boundary
			}
			e.q.flushBackoffCompleted()
		case r < 94:
			e.clk.Step(DefaultMaxInUnschedulable + time.Duration(rng.IntN(30))*time.Second)
			e.q.flushLeftovers()
			e.q.flushBackoffCompleted()
			res.leftovers++
		case r < 98:
			if len(heldNames) > 0 {
				old := held[heldNames[rng.IntN(len(heldNames))]]
				p := old.DeepCopy()
				prio := prios[rng.IntN(len(prios))]
				p.Spec.Priority = &prio
				p.ResourceVersion = strconv.Itoa(ops)
				e.q.Update(old, p)
				hold(p)
				res.updates++
			}
		default:
			if len(heldNames) > 0 {
				name := heldNames[rng.IntN(len(heldNames))]
				e.q.Delete(held[name])
				release(name)
				res.deletes++
			}
		}
		if ops%10 == 0 {
			// The heaps' whole order, not only their heads.
			res.trace = append(res.trace, "activeQ "+strings.Join(e.q.activeNames(), ","),
				"backoffQ "+strings.Join(e.q.backoffNames(), ","))
		}
		if ops%100 == 0 {
			e.check(t)
		}
	}
	// Drain: bind everything in flight, then release whatever waits.
	for _, p := range inflight {
		e.q.Done(p.uid)
	}
	for range 10 {
		e.clk.Step(DefaultMaxInUnschedulable + time.Second)
		e.q.flushLeftovers()
		e.q.flushBackoffCompleted()
		for {
			en := e.tryPop(t)
			if en == nil {
				break
			}
			res.trace = append(res.trace, nameOf(en)+"/drain")
			res.pops++
			e.q.Done(en.(*Pod).uid)
		}
	}
	if s := e.q.Stats(); s != (Stats{}) {
		t.Fatalf("the queue holds pods after the drain: %+v", s)
	}
	e.check(t)
	return res
}

// backoffNames lists the unschedulable-backoff heap in pop order without
// popping.
func (q *Queue) backoffNames() []string {
	q.amu.Lock()
	defer q.amu.Unlock()
	h := newHeap(q.backoffSort, q.sort)
	for _, he := range q.backoff.es {
		c := *he.e
		c.hidx = -1
		h.push(&c)
	}
	var names []string
	for h.len() > 0 {
		names = append(names, nameOf(h.pop().pod))
	}
	return names
}
