package policy

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wasmsched/wasmsched/abi"
)

func view(t testing.TB, p abi.Pod) abi.PodView {
	t.Helper()
	v, err := abi.ReadPod(abi.AppendPod(nil, &p))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestPrioritySort(t *testing.T) {
	cases := []struct {
		name string
		a, b abi.Pod
		want bool
	}{
		{"higher priority first", abi.Pod{Priority: 10, QueuedTime: 5}, abi.Pod{Priority: 1, QueuedTime: 1}, true},
		{"lower priority later", abi.Pod{Priority: 1}, abi.Pod{Priority: 10}, false},
		{"equal priority: earlier queued first", abi.Pod{Priority: 3, QueuedTime: 1}, abi.Pod{Priority: 3, QueuedTime: 2}, true},
		{"equal priority: later queued later", abi.Pod{Priority: 3, QueuedTime: 2}, abi.Pod{Priority: 3, QueuedTime: 1}, false},
		{"negative priorities", abi.Pod{Priority: -1}, abi.Pod{Priority: -5}, true},
		{"extremes", abi.Pod{Priority: math.MaxInt32}, abi.Pod{Priority: math.MinInt32}, true},
		{"identical: not less", abi.Pod{Priority: 3, QueuedTime: 2}, abi.Pod{Priority: 3, QueuedTime: 2}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a, b := view(t, c.a), view(t, c.b)
			if got := (PrioritySort{}).Less(a, b); got != c.want {
				t.Errorf("Less = %v, want %v", got, c.want)
			}
			if got := (PrioritySort{}).Key(a).Less((PrioritySort{}).Key(b)); got != c.want {
				t.Errorf("Key(a) < Key(b) = %v, want %v (key must agree with Less)", got, c.want)
			}
		})
	}
}

// TestKeysAgreeWithLess checks, on random pods, that each keyed native
// default orders by key exactly as it orders by Less.
func TestKeysAgreeWithLess(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	pods := make([]abi.PodView, 300)
	for i := range pods {
		pods[i] = view(t, abi.Pod{
			Priority:      int32(r.IntN(7) - 3),
			QueuedTime:    int64(r.IntN(5)) - 2,
			BackoffExpiry: int64(r.IntN(9)) * 1e8,
		})
	}
	for _, s := range []interface {
		Sort
		Keyer
	}{PrioritySort{}, BackoffExpiry{}} {
		for i := range pods {
			for j := range pods {
				if l, k := s.Less(pods[i], pods[j]), s.Key(pods[i]).Less(s.Key(pods[j])); l != k {
					t.Fatalf("%T: pods %d, %d: Less=%v but key order=%v", s, i, j, l, k)
				}
			}
		}
	}
}

func TestBackoffExpiry(t *testing.T) {
	early, late := view(t, abi.Pod{BackoffExpiry: 1e9}), view(t, abi.Pod{BackoffExpiry: 2e9, Priority: 100})
	if !(BackoffExpiry{}).Less(early, late) || (BackoffExpiry{}).Less(late, early) {
		t.Error("backoff must order by expiry only, whatever the priority")
	}
	if !(BackoffExpiry{}).MayPop(view(t, abi.Pod{UnschedulablePlugins: []string{"NodeResourcesFit"}})) {
		t.Error("a pod that backed off after an unschedulable attempt may pop early (KEP-5142)")
	}
	if !(BackoffExpiry{}).MayPop(view(t, abi.Pod{PendingPlugins: []string{"DynamicResources"}})) {
		t.Error("a pod rejected only by a Pending plugin may pop early (it is in upstream's unschedulable heap)")
	}
	if (BackoffExpiry{}).MayPop(view(t, abi.Pod{LastFailureError: true, UnschedulablePlugins: []string{"NodeResourcesFit"}})) {
		t.Error("a pod that backed off after an error must not pop early (KEP-5142)")
	}
	if (BackoffExpiry{}).MayPop(view(t, abi.Pod{})) {
		t.Error("a pod that failed with no rejecting plugin is in upstream's error heap and must not pop early")
	}
}

func TestAdmitAndAlwaysQueue(t *testing.T) {
	if g := (Admit{}).PreEnqueue(view(t, abi.Pod{SchedulingGates: []string{"x"}})); g.Code != abi.GateAdmit {
		t.Errorf("Admit gated a pod: %+v", g)
	}
	out := []abi.Hint{abi.HintSkip, abi.HintSkip, abi.HintError}
	(AlwaysQueue{}).Hints(abi.EventView{}, make([]abi.PodView, 3), out)
	if diff := cmp.Diff([]abi.Hint{abi.HintQueue, abi.HintQueue, abi.HintQueue}, out); diff != "" {
		t.Errorf("AlwaysQueue (-want, +got):\n%s", diff)
	}
	regs := (AlwaysQueue{}).Registrations()
	if len(regs) != 1 || regs[0].Plugin != abi.PluginWildcard || regs[0].Resource != abi.ResourceWildcard || regs[0].Actions != abi.ActionAll {
		t.Errorf("AlwaysQueue must register every event for every plugin, got %+v", regs)
	}
	regs[0].Plugin = "mutated"
	if (AlwaysQueue{}).Registrations()[0].Plugin != abi.PluginWildcard {
		t.Error("Registrations must return a copy")
	}
}

func TestImportance(t *testing.T) {
	victims := []abi.Victim{
		0: {UID: "low-old", Priority: 1, StartTime: 10},
		1: {UID: "high", Priority: 5, StartTime: 50},
		2: {UID: "low-new", Priority: 1, StartTime: 20},
		3: {UID: "low-group-small", Kind: abi.VictimGroup, Priority: 1, Members: 2, StartTime: 30},
		4: {UID: "low-group-big", Kind: abi.VictimGroup, Priority: 1, Members: 8, StartTime: 40},
		5: {UID: "low-unstarted", Priority: 1},
		6: {UID: "low-group-small-older", Kind: abi.VictimGroup, Priority: 1, Members: 2, StartTime: 5},
		7: {UID: "low-old-twin-b", Priority: 1, StartTime: 10},
	}
	order := make([]uint32, len(victims))
	(Importance{}).Order(abi.PodView{}, victims, order)
	var got []string
	for _, i := range order {
		got = append(got, victims[i].UID)
	}
	want := []string{
		"high",                  // priority first
		"low-group-big",         // groups before pods, bigger first
		"low-group-small-older", // same size: earlier start
		"low-group-small",
		"low-old",        // pods: earlier start; equal start breaks on UID
		"low-old-twin-b", //
		"low-new",
		"low-unstarted", // not started: least important
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("victim order, most important first (-want, +got):\n%s", diff)
	}
	// A strict weak order: never both a>b and b>a, and irreflexive.
	for i := range victims {
		if MoreImportant(&victims[i], &victims[i]) {
			t.Errorf("%s more important than itself", victims[i].UID)
		}
		for j := range victims {
			if MoreImportant(&victims[i], &victims[j]) && MoreImportant(&victims[j], &victims[i]) {
				t.Errorf("%s and %s each more important than the other", victims[i].UID, victims[j].UID)
			}
		}
	}
}
