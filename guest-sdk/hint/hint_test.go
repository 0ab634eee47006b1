package hint

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wasmsched/wasmsched/abi"
	"github.com/wasmsched/wasmsched/guest-sdk/internal/exportcheck"
)

func TestExportNames(t *testing.T) {
	exportcheck.Check(t, ".", abi.SlotQueueingHint.RequiredExports()...)
}

func podRec(name string, unsched, pending []string) []byte {
	return abi.AppendPod(nil, &abi.Pod{Name: name, UnschedulablePlugins: unsched, PendingPlugins: pending})
}

func eventRec(res abi.EventResource, act abi.ActionType) []byte {
	return abi.AppendEvent(nil, &abi.Event{Resource: res, Action: act,
		New: abi.AppendNode(nil, &abi.Node{Name: "n1"})})
}

func views(t *testing.T, recs ...[]byte) []abi.PodView {
	t.Helper()
	var out []abi.PodView
	for _, r := range recs {
		v, err := abi.ReadPod(r)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, v)
	}
	return out
}

// answer returns a hint func with a fixed answer that counts its calls.
func answer(h abi.Hint, err error, calls *int) func(abi.EventView, abi.PodView) (abi.Hint, error) {
	return func(abi.EventView, abi.PodView) (abi.Hint, error) {
		*calls++
		return h, err
	}
}

func TestDecide(t *testing.T) {
	nodeAdd := []Event{{abi.ResourceNode, abi.ActionAdd}}
	boom := errors.New("boom")
	var calls int
	pods := [][]byte{
		podRec("fit", []string{"Fit"}, nil),
		podRec("pending-fit", nil, []string{"Fit"}),
		podRec("taint", []string{"Taint"}, nil),
		podRec("fit-and-taint", []string{"Taint", "Fit"}, nil),
		podRec("nobody", nil, nil),
	}
	cases := []struct {
		name      string
		plugins   []Plugin
		res       abi.EventResource
		act       abi.ActionType
		want      []abi.Hint
		wantCalls int
	}{
		{
			name:    "only the plugins that rejected the pod run",
			plugins: []Plugin{{Name: "Fit", Events: nodeAdd, Hint: answer(abi.HintQueue, nil, &calls)}},
			res:     abi.ResourceNode, act: abi.ActionAdd,
			want:      []abi.Hint{abi.HintQueue, abi.HintQueue, abi.HintSkip, abi.HintQueue, abi.HintSkip},
			wantCalls: 3,
		},
		{
			name:    "skip from the only applicable plugin",
			plugins: []Plugin{{Name: "Fit", Events: nodeAdd, Hint: answer(abi.HintSkip, nil, &calls)}},
			res:     abi.ResourceNode, act: abi.ActionAdd,
			want:      []abi.Hint{abi.HintSkip, abi.HintSkip, abi.HintSkip, abi.HintSkip, abi.HintSkip},
			wantCalls: 3,
		},
		{
			name:    "event resource does not match",
			plugins: []Plugin{{Name: "Fit", Events: nodeAdd, Hint: answer(abi.HintQueue, nil, &calls)}},
			res:     abi.ResourcePod, act: abi.ActionAdd,
			want: []abi.Hint{abi.HintSkip, abi.HintSkip, abi.HintSkip, abi.HintSkip, abi.HintSkip},
		},
		{
			name:    "actions do not overlap",
			plugins: []Plugin{{Name: "Fit", Events: nodeAdd, Hint: answer(abi.HintQueue, nil, &calls)}},
			res:     abi.ResourceNode, act: abi.ActionUpdateNodeLabel | abi.ActionUpdateNodeTaint,
			want: []abi.Hint{abi.HintSkip, abi.HintSkip, abi.HintSkip, abi.HintSkip, abi.HintSkip},
		},
		{
			name: "actions overlap in one bit; second event of the plugin",
			plugins: []Plugin{{Name: "Fit", Events: []Event{{abi.ResourcePod, abi.ActionDelete}, {abi.ResourceNode, abi.ActionUpdateNodeAllocatable | abi.ActionAdd}},
				Hint: answer(abi.HintQueue, nil, &calls)}},
			res: abi.ResourceNode, act: abi.ActionUpdateNodeAllocatable | abi.ActionUpdateNodeLabel,
			want:      []abi.Hint{abi.HintQueue, abi.HintQueue, abi.HintSkip, abi.HintQueue, abi.HintSkip},
			wantCalls: 3,
		},
		{
			name:    "wildcard resource",
			plugins: []Plugin{{Name: "Fit", Events: []Event{{abi.ResourceWildcard, abi.ActionAll}}, Hint: answer(abi.HintQueue, nil, &calls)}},
			res:     abi.ResourcePodGroup, act: abi.ActionDelete,
			want:      []abi.Hint{abi.HintQueue, abi.HintQueue, abi.HintSkip, abi.HintQueue, abi.HintSkip},
			wantCalls: 3,
		},
		{
			name:    "wildcard plugin applies to every pod",
			plugins: []Plugin{{Name: abi.PluginWildcard, Events: nodeAdd, Hint: answer(abi.HintQueue, nil, &calls)}},
			res:     abi.ResourceNode, act: abi.ActionAdd,
			want:      []abi.Hint{abi.HintQueue, abi.HintQueue, abi.HintQueue, abi.HintQueue, abi.HintQueue},
			wantCalls: 5,
		},
		{
			name: "any queue wins; later hints are not run",
			plugins: []Plugin{
				{Name: "Taint", Events: nodeAdd, Hint: answer(abi.HintQueue, nil, &calls)},
				{Name: "Fit", Events: nodeAdd, Hint: answer(abi.HintSkip, nil, &calls)},
			},
			res: abi.ResourceNode, act: abi.ActionAdd,
			// fit: Fit skips; pending-fit: Fit skips; taint: Taint queues;
			// fit-and-taint: Taint queues first, Fit is not asked.
			want:      []abi.Hint{abi.HintSkip, abi.HintSkip, abi.HintQueue, abi.HintQueue, abi.HintSkip},
			wantCalls: 4,
		},
		{
			name: "an error is HintError unless another plugin queues",
			plugins: []Plugin{
				{Name: "Fit", Events: nodeAdd, Hint: answer(abi.HintSkip, boom, &calls)},
				{Name: "Taint", Events: nodeAdd, Hint: answer(abi.HintQueue, nil, &calls)},
			},
			res: abi.ResourceNode, act: abi.ActionAdd,
			want:      []abi.Hint{abi.HintError, abi.HintError, abi.HintQueue, abi.HintQueue, abi.HintSkip},
			wantCalls: 5,
		},
		{
			name:    "an error with a queue answer is still an error",
			plugins: []Plugin{{Name: "Fit", Events: nodeAdd, Hint: answer(abi.HintQueue, boom, &calls)}},
			res:     abi.ResourceNode, act: abi.ActionAdd,
			want:      []abi.Hint{abi.HintError, abi.HintError, abi.HintSkip, abi.HintError, abi.HintSkip},
			wantCalls: 3,
		},
		{
			name:    "a hint answering HintError or garbage is an error",
			plugins: []Plugin{{Name: "Fit", Events: nodeAdd, Hint: answer(7, nil, &calls)}, {Name: "Taint", Events: nodeAdd, Hint: answer(abi.HintError, nil, &calls)}},
			res:     abi.ResourceNode, act: abi.ActionAdd,
			want:      []abi.Hint{abi.HintError, abi.HintError, abi.HintError, abi.HintError, abi.HintSkip},
			wantCalls: 5,
		},
		{
			name:    "nil hint queues",
			plugins: []Plugin{{Name: "Fit", Events: nodeAdd}},
			res:     abi.ResourceNode, act: abi.ActionAdd,
			want: []abi.Hint{abi.HintQueue, abi.HintQueue, abi.HintSkip, abi.HintQueue, abi.HintSkip},
		},
		{
			name: "no plugins",
			res:  abi.ResourceNode, act: abi.ActionAdd,
			want: []abi.Hint{abi.HintSkip, abi.HintSkip, abi.HintSkip, abi.HintSkip, abi.HintSkip},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ev := eventRec(c.res, c.act)
			batch, err := abi.ReadHintBatch(abi.AppendHintBatch(nil, ev, pods))
			if err != nil {
				t.Fatal(err)
			}
			calls = 0
			got := make([]abi.Hint, batch.Len())
			if err := Decide(c.plugins, batch, got); err != nil {
				t.Fatalf("Decide: %v", err)
			}
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("Decide (-want, +got):\n%s", diff)
			}
			if calls != c.wantCalls {
				t.Errorf("hints ran %d times, want %d", calls, c.wantCalls)
			}

			// The native entry point decides identically.
			evView, err := abi.ReadEvent(ev)
			if err != nil {
				t.Fatal(err)
			}
			native := make([]abi.Hint, len(pods))
			DecidePods(c.plugins, evView, views(t, pods...), native)
			if diff := cmp.Diff(c.want, native); diff != "" {
				t.Errorf("DecidePods (-want, +got):\n%s", diff)
			}
		})
	}
}

func TestDecideMalformed(t *testing.T) {
	good := podRec("p", []string{"Fit"}, nil)
	ev := eventRec(abi.ResourceNode, abi.ActionAdd)
	cases := []struct {
		name  string
		batch []byte
		out   int
	}{
		{"no event", abi.AppendHintBatch(nil, nil, [][]byte{good}), 1},
		{"event is not an event", abi.AppendHintBatch(nil, good, [][]byte{good}), 1},
		{"pod is not a pod", abi.AppendHintBatch(nil, ev, [][]byte{ev}), 1},
		{"output length differs", abi.AppendHintBatch(nil, ev, [][]byte{good}), 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			batch, err := abi.ReadHintBatch(c.batch)
			if err != nil {
				t.Fatal(err)
			}
			if err := Decide(nil, batch, make([]abi.Hint, c.out)); err == nil {
				t.Error("Decide succeeded, want an error")
			}
		})
	}
}

func TestDecideDoesNotAllocate(t *testing.T) {
	plugins := []Plugin{{Name: "Fit", Events: []Event{{abi.ResourceNode, abi.ActionAdd}},
		Hint: func(ev abi.EventView, p abi.PodView) (abi.Hint, error) {
			if n, ok := ev.NewNode(); ok && n.Name() == "n1" {
				return abi.HintQueue, nil
			}
			return abi.HintSkip, nil
		}}}
	var pods [][]byte
	for range 50 {
		pods = append(pods, podRec("p", []string{"Other", "Fit"}, []string{"X"}))
	}
	batch, err := abi.ReadHintBatch(abi.AppendHintBatch(nil, eventRec(abi.ResourceNode, abi.ActionAdd), pods))
	if err != nil {
		t.Fatal(err)
	}
	out := make([]abi.Hint, len(pods))
	if allocs := testing.AllocsPerRun(100, func() { _ = Decide(plugins, batch, out) }); allocs != 0 {
		t.Errorf("Decide allocates %v times per batch, want 0", allocs)
	}
}

func TestRegistrations(t *testing.T) {
	plugins := []Plugin{
		{Name: "Fit", Events: []Event{{abi.ResourceNode, abi.ActionAdd | abi.ActionUpdateNodeAllocatable}, {abi.ResourcePod, abi.ActionDelete}}},
		{Name: abi.PluginWildcard, Events: []Event{{abi.ResourceWildcard, abi.ActionAll}}},
		{Name: "Silent"},
	}
	got, err := Registrations(plugins)
	if err != nil {
		t.Fatal(err)
	}
	want := []abi.Registration{
		{Plugin: "Fit", Resource: abi.ResourceNode, Actions: abi.ActionAdd | abi.ActionUpdateNodeAllocatable},
		{Plugin: "Fit", Resource: abi.ResourcePod, Actions: abi.ActionDelete},
		{Plugin: abi.PluginWildcard, Resource: abi.ResourceWildcard, Actions: abi.ActionAll},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Registrations (-want, +got):\n%s", diff)
	}

	for _, c := range []struct {
		name   string
		plugin Plugin
		want   string
	}{
		{"empty name", Plugin{Events: []Event{{abi.ResourceNode, abi.ActionAdd}}}, "empty plugin name"},
		{"unknown resource", Plugin{Name: "P", Events: []Event{{42, abi.ActionAdd}}}, "unknown resource"},
		{"no actions", Plugin{Name: "P", Events: []Event{{abi.ResourceNode, 0}}}, "invalid actions"},
	} {
		if _, err := Registrations([]Plugin{c.plugin}); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: Registrations error = %v, want one containing %q", c.name, err, c.want)
		}
	}
}

func TestRegister(t *testing.T) {
	defer func() { registered, regs = nil, nil }()
	Register(Plugin{Name: "A", Events: []Event{{abi.ResourceNode, abi.ActionAdd}}})
	Register(Plugin{Name: "B", Events: []Event{{abi.ResourcePod, abi.ActionDelete}}})
	if len(registered) != 2 || len(regs) != 2 {
		t.Errorf("after two Register calls: %d plugins, %d registrations; want 2, 2", len(registered), len(regs))
	}
	defer func() {
		if recover() == nil {
			t.Error("Register of an invalid plugin did not panic")
		}
		if len(registered) != 2 {
			t.Errorf("a failed Register changed the plugins: %d, want 2", len(registered))
		}
	}()
	Register(Plugin{Events: []Event{{abi.ResourceNode, abi.ActionAdd}}})
}

func TestTooManyPlugins(t *testing.T) {
	plugins := make([]Plugin, maxPlugins+1)
	for i := range plugins {
		plugins[i] = Plugin{Name: "p" + string(rune('A'+i%26)) + string(rune('a'+i/26)), Events: []Event{{Resource: abi.ResourceNode, Actions: abi.ActionAdd}}}
	}
	if _, err := Registrations(plugins); err == nil {
		t.Errorf("%d plugins: want an error", len(plugins))
	}
	if _, err := Registrations(plugins[:maxPlugins]); err != nil {
		t.Errorf("%d plugins: %v", maxPlugins, err)
	}
}
