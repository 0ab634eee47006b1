package wasmslot_test

import (
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/wasmsched/wasmsched/abi"
	fithint "github.com/wasmsched/wasmsched/guest-sdk/examples/fithint/logic"
	holdlabel "github.com/wasmsched/wasmsched/guest-sdk/examples/holdlabel/logic"
	"github.com/wasmsched/wasmsched/guest-sdk/policytest"
	"github.com/wasmsched/wasmsched/host/policy"
	"github.com/wasmsched/wasmsched/host/policy/wasmslot"
	"github.com/wasmsched/wasmsched/host/wasm"
)

// counting is a Recorder that remembers what it was told.
type counting struct {
	mu        sync.Mutex
	calls     map[abi.Slot]int
	failures  map[string]int // "slot/reason"
	fallbacks map[abi.Slot]int
	swaps     map[string]int // "slot/result"
	trips     map[abi.Slot]int
}

func newCounting() *counting {
	return &counting{calls: map[abi.Slot]int{}, failures: map[string]int{}, fallbacks: map[abi.Slot]int{},
		swaps: map[string]int{}, trips: map[abi.Slot]int{}}
}

func (c *counting) Swapped(s abi.Slot, result string) {
	c.mu.Lock()
	c.swaps[s.String()+"/"+result]++
	c.mu.Unlock()
}
func (c *counting) BreakerTripped(s abi.Slot) { c.mu.Lock(); c.trips[s]++; c.mu.Unlock() }

func (c *counting) Called(s abi.Slot) { c.mu.Lock(); c.calls[s]++; c.mu.Unlock() }
func (c *counting) Failed(s abi.Slot, why string, _ error) {
	c.mu.Lock()
	c.failures[s.String()+"/"+why]++
	c.mu.Unlock()
}
func (c *counting) FellBack(s abi.Slot, n int)      { c.mu.Lock(); c.fallbacks[s] += n; c.mu.Unlock() }
func (c *counting) Observe(abi.Slot, time.Duration) {}

// loadFaulty loads testdata/faulty.wasm into a faultRuntime: its watchdog's
// clock moves only during runCall with spins set.
func loadFaulty(t *testing.T) (*wasm.Module, *testingclock.FakeClock) {
	t.Helper()
	bin, err := os.ReadFile("testdata/faulty.wasm")
	if err != nil {
		t.Fatalf("%v (run make fixtures)", err)
	}
	rt, clk := faultRuntime(t)
	limits := wasm.DefaultLimits()
	limits.Deadline = faultDeadline
	m, err := rt.Load(context.Background(), "faulty", bin, limits)
	if err != nil {
		t.Fatal(err)
	}
	return m, clk
}

// TestWasmFallbacks: every kind of failure in every slot is answered by the
// native default and counted, and nothing panics.
func TestWasmFallbacks(t *testing.T) {
	m, clk := loadFaulty(t)
	rec := newCounting()
	hi := policytest.MakePod().Name("hi").Priority(10).Queued(time.Unix(2, 0)).BackoffExpiry(time.Unix(9, 0)).UnschedulablePlugins(abi.PluginNodeResourcesFit).View()
	lo := policytest.MakePod().Name("lo").Priority(1).Queued(time.Unix(1, 0)).BackoffExpiry(time.Unix(5, 0)).LastFailureError().View()

	qs, err := wasmslot.NewSort(m, abi.SlotQueueSort, policy.PrioritySort{}, rec)
	if err != nil {
		t.Fatal(err)
	}
	if !qs.Keyed() {
		t.Fatal("faulty computes keys for the probe pod: the adapter must be keyed")
	}
	if !qs.Less(hi, lo) || qs.Less(lo, hi) {
		t.Error("queue sort less: want PrioritySort's answer after the trap")
	}
	// The key spins; the runtime's watchdog stops it (how soon is tested in
	// host/wasm) and the adapter answers with the native key. The
	// watchdog's clock moves during this call only, so every other call
	// fails by itself, however loaded the machine.
	var key abi.SortKey
	runCall(t, clk, true, func() { key = qs.Key(hi) })
	if want := (policy.PrioritySort{}).Key(hi); key != want {
		t.Errorf("queue sort key = %v, want the native key %v", key, want)
	}

	bs, err := wasmslot.NewBackoffSort(m, policy.BackoffExpiry{}, rec)
	if err != nil {
		t.Fatal(err)
	}
	if !bs.Less(lo, hi) {
		t.Error("backoff less: want expiry order after the trap")
	}
	if bs.MayPop(lo) || !bs.MayPop(hi) {
		t.Error("backoff may-pop: want the native answer (errors never pop) after a bad output")
	}

	pe, err := wasmslot.NewPreEnqueue(m, policy.Admit{}, rec)
	if err != nil {
		t.Fatal(err)
	}
	if g := pe.PreEnqueue(hi); g.Code != abi.GateAdmit {
		t.Errorf("PreEnqueue = %+v, want the native admit after a garbage gate", g)
	}

	qh, err := wasmslot.NewQueueingHint(m, policy.AlwaysQueue{}, rec)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]abi.Registration{{Plugin: "X", Resource: abi.ResourceNode, Actions: abi.ActionAdd}}, qh.Registrations()); diff != "" {
		t.Errorf("registrations (-want, +got):\n%s", diff)
	}
	out := []abi.Hint{abi.HintSkip, abi.HintSkip}
	qh.Hints(hintEvent(), []abi.PodView{hi, lo}, out)
	if diff := cmp.Diff([]abi.Hint{abi.HintQueue, abi.HintQueue}, out); diff != "" {
		t.Errorf("hints after a guest error (-want, +got):\n%s", diff)
	}

	vo, err := wasmslot.NewVictimOrder(m, policy.Importance{}, rec)
	if err != nil {
		t.Fatal(err)
	}
	vs := []abi.Victim{{UID: "a", Priority: 1}, {UID: "b", Priority: 9}, {UID: "c", Priority: 5}}
	order := make([]uint32, 3)
	vo.Order(abi.PodView{}, vs, order)
	if diff := cmp.Diff([]uint32{1, 2, 0}, order); diff != "" {
		t.Errorf("victim order after a short permutation (-want, +got):\n%s", diff)
	}

	wantFailures := map[string]int{
		"queueSort/trap":           2, // Less(hi, lo) and Less(lo, hi)
		"queueSort/deadline":       1,
		"backoffSort/trap":         1,
		"backoffSort/bad_output":   2,
		"preEnqueue/bad_output":    1,
		"queueingHint/guest_error": 1,
		"victimOrder/bad_output":   1,
	}
	if diff := cmp.Diff(wantFailures, rec.failures); diff != "" {
		t.Errorf("failures counted (-want, +got):\n%s", diff)
	}
	wantFallbacks := map[abi.Slot]int{abi.SlotQueueSort: 3, abi.SlotBackoffSort: 3, abi.SlotPreEnqueue: 1, abi.SlotQueueingHint: 2, abi.SlotVictimOrder: 1}
	if diff := cmp.Diff(wantFallbacks, rec.fallbacks); diff != "" {
		t.Errorf("fallbacks counted (-want, +got):\n%s", diff)
	}
	if st := m.Stats(); st.Discarded < 4 {
		t.Errorf("instances discarded after traps, deadlines and bad outputs: %d, want at least 4", st.Discarded)
	}
}

func TestNewWasmRefusesModuleWithoutSlot(t *testing.T) {
	m := loadExample(t, "prioritysort")
	_, err := wasmslot.NewPreEnqueue(m, policy.Admit{}, nil)
	if err == nil || !strings.Contains(err.Error(), abi.ExportPreEnqueue) || !strings.Contains(err.Error(), `"prioritysort.wasm"`) {
		t.Errorf("NewWasmPreEnqueue on a sort module: got %v, want an error naming the module and %s", err, abi.ExportPreEnqueue)
	}
	_, err = wasmslot.NewSort(m, abi.SlotVictimOrder, policy.PrioritySort{}, nil)
	if err == nil {
		t.Error("NewWasmSort for a non-sort slot: want an error")
	}
	if _, err := wasmslot.NewSort(m, abi.SlotQueueSort, lessOnly{}, nil); err == nil || !strings.Contains(err.Error(), "keys") {
		t.Errorf("keyed module with an unkeyed fallback: got %v, want an error about keys", err)
	}
}

type lessOnly struct{}

func (lessOnly) Less(a, b abi.PodView) bool { return false }

func randomPods(r *rand.Rand, n int) []abi.PodView {
	pods := make([]abi.PodView, n)
	for i := range pods {
		w := policytest.MakePod().UID("u"+strconv.Itoa(i)).Namespace("ns").Name("p"+strconv.Itoa(i)).
			Priority(int32(r.IntN(5)-2)).Queued(time.Unix(0, int64(r.IntN(4)))).
			BackoffExpiry(time.Unix(0, int64(r.IntN(3e9)))).
			Request("cpu", int64(r.IntN(3000))).Request("memory", int64(r.IntN(4))<<30).
			UnschedulablePlugins(fithint.Name)
		if r.IntN(3) == 0 {
			w = w.LastFailureError()
		}
		if r.IntN(4) == 0 {
			w = w.Label("example.wasmsched.io/hold", strconv.Itoa(i))
		}
		pods[i] = w.View()
	}
	return pods
}

// TestWasmAgreesWithNative runs the example modules through the adapters and
// their logic natively on the same random inputs, and finds no difference.
func TestWasmAgreesWithNative(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 2))
	pods := randomPods(r, 200)

	qs, err := wasmslot.NewSort(loadExample(t, "prioritysort"), abi.SlotQueueSort, policy.PrioritySort{}, strict(t))
	if err != nil {
		t.Fatal(err)
	}
	bs, err := wasmslot.NewBackoffSort(loadExample(t, "expirybackoff"), policy.BackoffExpiry{}, strict(t))
	if err != nil {
		t.Fatal(err)
	}
	for i, a := range pods {
		if got, want := qs.Key(a), (policy.PrioritySort{}).Key(a); got != want {
			t.Fatalf("pod %d: queue sort key %v, native %v", i, got, want)
		}
		if got, want := bs.MayPop(a), (policy.BackoffExpiry{}).MayPop(a); got != want {
			t.Fatalf("pod %d: may pop %v, native %v", i, got, want)
		}
		for j, b := range pods[:40] {
			if got, want := qs.Less(a, b), (policy.PrioritySort{}).Less(a, b); got != want {
				t.Fatalf("pods %d, %d: queue sort less %v, native %v", i, j, got, want)
			}
			if got, want := bs.Less(a, b), (policy.BackoffExpiry{}).Less(a, b); got != want {
				t.Fatalf("pods %d, %d: backoff less %v, native %v", i, j, got, want)
			}
		}
	}

	pe, err := wasmslot.NewPreEnqueue(loadExample(t, "holdlabel"), policy.Admit{}, strict(t))
	if err != nil {
		t.Fatal(err)
	}
	native := policytest.NativePreEnqueue(holdlabel.PreEnqueue)
	for i, p := range pods {
		if diff := cmp.Diff(native.PreEnqueue(p), pe.PreEnqueue(p)); diff != "" {
			t.Fatalf("pod %d: gate (-native, +wasm):\n%s", i, diff)
		}
	}

	qh, err := wasmslot.NewQueueingHint(loadExample(t, "fithint"), policy.AlwaysQueue{}, strict(t))
	if err != nil {
		t.Fatal(err)
	}
	nh := policytest.NativeQueueingHint(fithint.Plugin)
	if diff := cmp.Diff(nh.Registrations(), qh.Registrations()); diff != "" {
		t.Errorf("registrations (-native, +wasm):\n%s", diff)
	}
	for k := 0; k < 20; k++ {
		ev := policytest.NodeAdd(policytest.MakeNode().Name("n").Allocatable("cpu", int64(r.IntN(4000))).
			Allocatable("memory", int64(r.IntN(4))<<30).Requested("cpu", int64(r.IntN(1000))).Obj())
		if k%2 == 1 {
			ev = policytest.PodDelete(policytest.MakePod().Name("gone").Node("n").Request("memory", int64(r.IntN(2))).Obj())
		}
		want, got := make([]abi.Hint, len(pods)), make([]abi.Hint, len(pods))
		nh.Hints(ev, pods, want)
		qh.Hints(ev, pods, got)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("event %d: hints (-native, +wasm):\n%s", k, diff)
		}
	}

	vo, err := wasmslot.NewVictimOrder(loadExample(t, "importance"), policy.Importance{}, strict(t))
	if err != nil {
		t.Fatal(err)
	}
	vs := victims()
	want, got := make([]uint32, len(vs)), make([]uint32, len(vs))
	(policy.Importance{}).Order(abi.PodView{}, vs, want)
	vo.Order(abi.PodView{}, vs, got)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("victim order (-native default, +wasm):\n%s", diff)
	}
}

// TestWasmSortHammer calls one adapter from many goroutines (run with -race):
// instances are pooled per goroutine and every answer stays right.
func TestWasmSortHammer(t *testing.T) {
	qs, err := wasmslot.NewSort(loadExample(t, "prioritysort"), abi.SlotQueueSort, policy.PrioritySort{}, strict(t))
	if err != nil {
		t.Fatal(err)
	}
	pods := randomPods(rand.New(rand.NewPCG(9, 9)), 64)
	var wg sync.WaitGroup
	errs := make(chan string, 8)
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 2000; i++ {
				a, b := pods[(g+i)%len(pods)], pods[(g*7+i*3)%len(pods)]
				if qs.Less(a, b) != (policy.PrioritySort{}).Less(a, b) || qs.Key(a) != (policy.PrioritySort{}).Key(a) {
					errs <- "goroutine " + strconv.Itoa(g) + ": wrong answer"
					return
				}
			}
		}(g)
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	if st := qs.Module().Stats(); st.Live != st.Free {
		t.Errorf("after all calls returned: %d live instances but %d free (leaked instances)", st.Live, st.Free)
	}
}

// skipAll is a QueueingHint fallback that skips every pod, so that a test
// can tell its answer from the adapter's own Queue.
type skipAll struct{}

func (skipAll) Registrations() []abi.Registration { return nil }
func (skipAll) Hints(_ abi.EventView, _ []abi.PodView, out []abi.Hint) {
	for i := range out {
		out[i] = abi.HintSkip
	}
}

// TestWasmHintOlderMinor: a module built against ABI minor 0 (faulty.wasm)
// cannot read storage records, so the adapter queues the pods of a storage
// event itself, without calling it (no failure, no fallback), and still
// calls it for the events it knows.
func TestWasmHintOlderMinor(t *testing.T) {
	m, _ := loadFaulty(t)
	if _, minor := m.ABIVersion(); minor >= abi.MinorStorage {
		t.Fatalf("faulty.wasm speaks minor %d; this test needs one older than %d", minor, abi.MinorStorage)
	}
	rec := newCounting()
	qh, err := wasmslot.NewQueueingHint(m, skipAll{}, rec)
	if err != nil {
		t.Fatal(err)
	}
	pod := policytest.MakePod().Name("p").UnschedulablePlugins(abi.PluginVolumeBinding).View()
	c := abi.StorageObject{Namespace: "default", Name: "data"}
	ev := policytest.MakeEvent(&abi.Event{Resource: abi.ResourcePersistentVolumeClaim, Action: abi.ActionAdd, New: abi.AppendStorage(nil, &c)})
	out := []abi.Hint{abi.HintSkip}
	qh.Hints(ev, []abi.PodView{pod}, out)
	if out[0] != abi.HintQueue || len(rec.failures) != 0 || rec.fallbacks[abi.SlotQueueingHint] != 0 {
		t.Errorf("storage event for a minor-0 module: hint %v, failures %v, fallbacks %v; want Queue without calling it",
			out[0], rec.failures, rec.fallbacks)
	}
	qh.Hints(hintEvent(), []abi.PodView{pod}, out)
	if out[0] != abi.HintSkip || rec.failures["queueingHint/guest_error"] != 1 {
		t.Errorf("node event for a minor-0 module: hint %v, failures %v; want the module called (it fails) and the fallback's Skip",
			out[0], rec.failures)
	}
}

// TestWasmHintMinor0Module: the built-in hints module as built against ABI
// 1.0 (testdata/hints-abi1.0.wasm, policies/hints/hints.wasm of that
// version, kept as it was) still loads and decides the node events it knows
// on the records of today's host (pods with claims, a longer fixed part),
// and the storage events it cannot read are queued for it.
func TestWasmHintMinor0Module(t *testing.T) {
	m := policytest.LoadModule(t, filepath.Join("testdata", "hints-abi1.0.wasm"), testLimits())
	if major, minor := m.ABIVersion(); major != abi.VersionMajor || minor != 0 {
		t.Fatalf("the fixture speaks ABI %d.%d, want %d.0", major, minor, abi.VersionMajor)
	}
	rec := newCounting()
	qh, err := wasmslot.NewQueueingHint(m, skipAll{}, rec)
	if err != nil {
		t.Fatal(err)
	}
	fit := func(name string, cpu int64) abi.PodView {
		return policytest.MakePod().Name(name).Request("cpu", cpu).Claim("data").EphemeralClaim(name + "-scratch").
			UnschedulablePlugins(abi.PluginNodeResourcesFit).View()
	}
	pods := []abi.PodView{fit("small", 500), fit("big", 8000)}
	out := make([]abi.Hint, 2)
	qh.Hints(policytest.NodeAdd(policytest.MakeNode().Name("n1").Allocatable("cpu", 4000).Allocatable("pods", 110).Obj()), pods, out)
	if diff := cmp.Diff([]abi.Hint{abi.HintQueue, abi.HintSkip}, out); diff != "" {
		t.Errorf("node added, decided by the minor-0 module (-want, +got):\n%s", diff)
	}
	c := abi.StorageObject{Namespace: "default", Name: "data"}
	qh.Hints(policytest.StorageAdd(abi.ResourcePersistentVolumeClaim, &c), pods, out)
	if diff := cmp.Diff([]abi.Hint{abi.HintQueue, abi.HintQueue}, out); diff != "" {
		t.Errorf("claim added, for a minor-0 module (-want, +got):\n%s", diff)
	}
	if len(rec.failures) != 0 || rec.fallbacks[abi.SlotQueueingHint] != 0 {
		t.Errorf("failures %v, fallbacks %v; want none", rec.failures, rec.fallbacks)
	}
}

// TestWasmHintMinor1Module: the hints module as built against ABI 1.1
// (testdata/hints-abi1.1.wasm, policies/hints/hints.wasm of that version,
// kept as it was) decides the storage events it knows on today's records
// (a longer pod record with resource claims, a longer storage record), and
// the DRA events it cannot read are queued for it.
func TestWasmHintMinor1Module(t *testing.T) {
	m := policytest.LoadModule(t, filepath.Join("testdata", "hints-abi1.1.wasm"), testLimits())
	if major, minor := m.ABIVersion(); major != abi.VersionMajor || minor != 1 {
		t.Fatalf("the fixture speaks ABI %d.%d, want %d.1", major, minor, abi.VersionMajor)
	}
	rec := newCounting()
	qh, err := wasmslot.NewQueueingHint(m, skipAll{}, rec)
	if err != nil {
		t.Fatal(err)
	}
	pod := func(name, claim string) abi.PodView {
		return policytest.MakePod().Namespace("default").Name(name).Claim(claim).ResourceClaim(name+"-gpu").ResourceClaim("").
			UnschedulablePlugins(abi.PluginVolumeBinding, abi.PluginDynamicResources).View()
	}
	pods := []abi.PodView{pod("user", "data"), pod("other", "logs")}
	out := make([]abi.Hint, 2)
	c := abi.StorageObject{Namespace: "default", Name: "data", Allocated: true, Pool: "p", DeviceClasses: []string{"x"}}
	qh.Hints(policytest.StorageAdd(abi.ResourcePersistentVolumeClaim, &c), pods, out)
	if diff := cmp.Diff([]abi.Hint{abi.HintQueue, abi.HintSkip}, out); diff != "" {
		t.Errorf("claim added, decided by the minor-1 module (-want, +got):\n%s", diff)
	}
	rc := abi.StorageObject{Namespace: "default", Name: "nobody-gpu"}
	qh.Hints(policytest.StorageAdd(abi.ResourceResourceClaim, &rc), pods, out)
	if diff := cmp.Diff([]abi.Hint{abi.HintQueue, abi.HintQueue}, out); diff != "" {
		t.Errorf("ResourceClaim added, for a minor-1 module (-want, +got):\n%s", diff)
	}
	if len(rec.failures) != 0 || rec.fallbacks[abi.SlotQueueingHint] != 0 {
		t.Errorf("failures %v, fallbacks %v; want none", rec.failures, rec.fallbacks)
	}
}
