package framework_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	. "github.com/wasmsched/wasmsched/host/framework"
	ft "github.com/wasmsched/wasmsched/host/framework/frameworktest"
	intree "github.com/wasmsched/wasmsched/host/framework/plugins"

	v1 "k8s.io/api/core/v1"
	kschedv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/wasmsched/wasmsched/abi"
	"github.com/wasmsched/wasmsched/host/cache"
)

// callLog records the calls of the binder plugins below, in order.
type callLog struct {
	mu    sync.Mutex
	calls []string
}

func (l *callLog) add(s string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.calls = append(l.calls, s)
}

func (l *callLog) take() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := l.calls
	l.calls = nil
	return out
}

// binder is a test plugin with a PreFilter, Reserve, PreBindPreFlight
// and PreBind. Its filter is its per-pod state; reserve, preflight and
// preBind are what its Reserve, PreBindPreFlight and PreBind return.
type binder struct {
	name                        string
	log                         *callLog
	reserve, preflight, preBind *Status
}

func (b *binder) Name() string { return b.name }

type binderFilter struct{ name string }

func (binderFilter) Filter(*cache.NodeInfo) *Status { return nil }

func (b *binder) PreFilter(*cache.PodInfo, *cache.Snapshot) (PodFilter, []string, *Status) {
	return &binderFilter{b.name}, nil, nil
}

func (b *binder) Reserve(_ context.Context, ps *PodState, pod *v1.Pod, node string) *Status {
	b.log.add(b.name + " Reserve " + pod.Name + " " + node)
	ps.Write(b.name, node)
	return b.reserve
}

func (b *binder) Unreserve(_ context.Context, _ *PodState, pod *v1.Pod, node string) {
	b.log.add(b.name + " Unreserve " + pod.Name + " " + node)
}

func (b *binder) PreBindPreFlight(_ context.Context, _ *PodState, pod *v1.Pod, node string) *Status {
	b.log.add(b.name + " PreBindPreFlight " + pod.Name + " " + node)
	return b.preflight
}

func (b *binder) PreBind(_ context.Context, ps *PodState, pod *v1.Pod, node string) *Status {
	v, _ := ps.Read(b.name)
	b.log.add(b.name + " PreBind " + pod.Name + " " + node + " reserved=" + stringOr(v))
	return b.preBind
}

func stringOr(v any) string {
	s, _ := v.(string)
	return s
}

var (
	_ ReservePlugin   = (*binder)(nil)
	_ PreBindPlugin   = (*binder)(nil)
	_ PreFilterPlugin = (*binder)(nil)
)

func binders(log *callLog, names ...string) []*binder {
	out := make([]*binder, len(names))
	for i, n := range names {
		out[i] = &binder{name: n, log: log}
	}
	return out
}

func entriesOf(bs []*binder) []Entry {
	out := make([]Entry, len(bs))
	for i, b := range bs {
		out[i] = Entry{Plugin: b}
	}
	return out
}

func reservePod() *v1.Pod {
	p := ft.MakePod().P
	p.Name = "p"
	p.Spec.NodeName = "n1"
	return p
}

func TestReserveOrderAndUnreserveReversed(t *testing.T) {
	log := &callLog{}
	prof := MustProfile(entriesOf(binders(log, "A", "B", "C"))...)
	if got, want := prof.ReservePlugins(), []string{"A", "B", "C"}; !slices.Equal(got, want) {
		t.Fatalf("ReservePlugins = %v, want %v", got, want)
	}
	pod := reservePod()
	ps, st := prof.Prepare(cache.NewPodInfo(pod), nil)
	if st != nil {
		t.Fatal(st)
	}
	ctx := context.Background()
	if st := prof.Reserve(ctx, ps, pod, "n1"); st != nil {
		t.Fatalf("Reserve = %v, want success", st)
	}
	prof.Unreserve(ctx, ps, pod, "n1")
	if st := prof.PreBind(ctx, ps, pod, "n1"); st != nil {
		t.Fatalf("PreBind = %v, want success", st)
	}
	want := []string{"A Reserve p n1", "B Reserve p n1", "C Reserve p n1",
		"C Unreserve p n1", "B Unreserve p n1", "A Unreserve p n1",
		"A PreBind p n1 reserved=n1", "B PreBind p n1 reserved=n1", "C PreBind p n1 reserved=n1"}
	if got := log.take(); !slices.Equal(got, want) {
		t.Errorf("calls:\n got %q\nwant %q", got, want)
	}
}

func TestReserveAndPreBindStopAtFirstFailure(t *testing.T) {
	shared := &Status{Code: Unschedulable, Reasons: []string{"volume taken"}}
	for _, tc := range []struct {
		name      string
		status    *Status
		wantCode  Code
		wantMsg   string
		wantCalls int
	}{
		{"rejected", shared, Unschedulable, "volume taken", 2},
		{"pending", &Status{Code: Pending, Reasons: []string{"waiting"}}, Pending, "waiting", 2},
		{"unresolvable", &Status{Code: UnschedulableAndUnresolvable, Reasons: []string{"gone"}}, UnschedulableAndUnresolvable, "gone", 2},
		{"error", &Status{Code: Error, Err: errors.New("boom")}, Error, "running %s plugin \"B\": boom", 2},
		{"error without err", &Status{Code: Error, Reasons: []string{"bad"}}, Error, "running %s plugin \"B\": bad", 2},
		{"success status", &Status{Code: Success}, Success, "", 3},
	} {
		for _, point := range []string{LabelReserve, LabelPreBind} {
			t.Run(tc.name+" "+point, func(t *testing.T) {
				log := &callLog{}
				bs := binders(log, "A", "B", "C")
				if point == LabelReserve {
					bs[1].reserve = tc.status
				} else {
					bs[1].preBind = tc.status
				}
				prof := MustProfile(entriesOf(bs)...)
				pod := reservePod()
				ps, _ := prof.Prepare(cache.NewPodInfo(pod), nil)
				var st *Status
				if point == LabelReserve {
					st = prof.Reserve(context.Background(), ps, pod, "n1")
				} else {
					st = prof.PreBind(context.Background(), ps, pod, "n1")
				}
				if got := len(log.take()); got != tc.wantCalls {
					t.Errorf("%d plugins ran, want %d", got, tc.wantCalls)
				}
				if tc.wantCode == Success {
					if st != nil {
						t.Fatalf("status %+v, want success", st)
					}
					return
				}
				if st == nil || st.Code != tc.wantCode || st.Plugin != "B" {
					t.Fatalf("status %+v, want code %v from plugin B", st, tc.wantCode)
				}
				want := tc.wantMsg
				if tc.wantCode == Error {
					want = fmt.Sprintf(want, point)
				}
				if got := st.Message(); got != want {
					t.Errorf("message %q, want %q", got, want)
				}
				if shared.Plugin != "" {
					t.Errorf("the plugin's shared status was changed: %+v", shared)
				}
			})
		}
	}
}

func TestReserveDisabledPerPoint(t *testing.T) {
	log := &callLog{}
	bs := binders(log, "A", "B", "C")
	prof := MustProfile(Entry{Plugin: bs[0], NoReserve: true}, Entry{Plugin: bs[1], NoPreBind: true}, Entry{Plugin: bs[2]})
	if got, want := prof.ReservePlugins(), []string{"B", "C"}; !slices.Equal(got, want) {
		t.Errorf("ReservePlugins = %v, want %v", got, want)
	}
	if got, want := prof.PreBindPlugins(), []string{"A", "C"}; !slices.Equal(got, want) {
		t.Errorf("PreBindPlugins = %v, want %v", got, want)
	}
	if !prof.HasReserve() || !prof.HasPreBind() {
		t.Error("HasReserve/HasPreBind false with such plugins")
	}
	pod := reservePod()
	ps, _ := prof.Prepare(cache.NewPodInfo(pod), nil)
	ctx := context.Background()
	_ = prof.Reserve(ctx, ps, pod, "n1")
	prof.Unreserve(ctx, ps, pod, "n1")
	_ = prof.PreBind(ctx, ps, pod, "n1")
	want := []string{"B Reserve p n1", "C Reserve p n1", "C Unreserve p n1", "B Unreserve p n1",
		"A PreBind p n1 reserved=", "C PreBind p n1 reserved=n1"}
	if got := log.take(); !slices.Equal(got, want) {
		t.Errorf("calls:\n got %q\nwant %q", got, want)
	}
}

// TestDefaultProfileReservesVolumesOnly checks that VolumeBinding and
// DynamicResources are the default profile's reserve and preBind plugins,
// and that a pod without claims costs them no allocation at those points.
func TestDefaultProfileReservesVolumesOnly(t *testing.T) {
	want := []string{abi.PluginVolumeBinding, abi.PluginDynamicResources}
	if got := defaultProfile().ReservePlugins(); !slices.Equal(got, want) {
		t.Errorf("ReservePlugins = %v, want %v", got, want)
	}
	if got := defaultProfile().PreBindPlugins(); !slices.Equal(got, want) {
		t.Errorf("PreBindPlugins = %v, want %v", got, want)
	}
	pod := reservePod()
	ps, st := prepare(cache.NewPodInfo(pod), nil)
	if st != nil {
		t.Fatalf("Prepare: %v", st.Message())
	}
	ctx := context.Background()
	allocs := testing.AllocsPerRun(100, func() {
		if st := defaultProfile().Reserve(ctx, ps, pod, "n1"); st != nil {
			t.Fatalf("Reserve: %v", st.Message())
		}
		if st := defaultProfile().PreBind(ctx, ps, pod, "n1"); st != nil {
			t.Fatalf("PreBind: %v", st.Message())
		}
		defaultProfile().Unreserve(ctx, ps, pod, "n1")
	})
	if allocs != 0 {
		t.Errorf("Reserve, PreBind and Unreserve of a pod without claims allocate %v times, want 0", allocs)
	}
}

// TestBuildReservePreBindPerPoint checks that a configuration's reserve
// and preBind lists decide, per plugin, whether its Reserve and PreBind
// run, as for the other points (entryFor is Build's entry for a plugin).
func TestBuildReservePreBindPerPoint(t *testing.T) {
	for _, tc := range []struct {
		name                   string
		plugins                *kschedv1.Plugins
		wantNoRes, wantNoBind  bool
		wantNoFilter, disabled bool
	}{
		{name: "default", plugins: nil},
		{name: "reserve disabled", plugins: &kschedv1.Plugins{
			Reserve: kschedv1.PluginSet{Disabled: []kschedv1.Plugin{{Name: abi.PluginVolumeBinding}}}}, wantNoRes: true},
		{name: "every reserve disabled", plugins: &kschedv1.Plugins{
			Reserve: kschedv1.PluginSet{Disabled: []kschedv1.Plugin{{Name: abi.PluginWildcard}}}}, wantNoRes: true},
		{name: "preBind disabled", plugins: &kschedv1.Plugins{
			PreBind: kschedv1.PluginSet{Disabled: []kschedv1.Plugin{{Name: abi.PluginVolumeBinding}}}}, wantNoBind: true},
		{name: "only reserve and preBind left", plugins: &kschedv1.Plugins{
			PreFilter: kschedv1.PluginSet{Disabled: []kschedv1.Plugin{{Name: abi.PluginVolumeBinding}}},
			Filter:    kschedv1.PluginSet{Disabled: []kschedv1.Plugin{{Name: abi.PluginVolumeBinding}}}}, wantNoFilter: true},
		{name: "disabled everywhere", plugins: &kschedv1.Plugins{
			MultiPoint: kschedv1.PluginSet{Disabled: []kschedv1.Plugin{{Name: abi.PluginVolumeBinding}}}}, disabled: true},
		{name: "enabled at reserve alone", plugins: &kschedv1.Plugins{
			MultiPoint: kschedv1.PluginSet{Disabled: []kschedv1.Plugin{{Name: abi.PluginVolumeBinding}}},
			Reserve:    kschedv1.PluginSet{Enabled: []kschedv1.Plugin{{Name: abi.PluginVolumeBinding}}}},
			wantNoBind: true, wantNoFilter: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			eff, err := intree.InTree().Effective(Config{Plugins: tc.plugins})
			if err != nil {
				t.Fatal(err)
			}
			on := func(pt Point) bool { return slices.Contains(eff[pt], abi.PluginVolumeBinding) }
			p := &binder{name: abi.PluginVolumeBinding, log: &callLog{}}
			e, ok := EntryFor(p, on(PointPreFilter), on, 1)
			if ok == tc.disabled {
				t.Fatalf("entry kept %v, want %v", ok, !tc.disabled)
			}
			if !ok {
				return
			}
			if e.NoReserve != tc.wantNoRes || e.NoPreBind != tc.wantNoBind || e.NoFilter != tc.wantNoFilter || e.NoPreFilter != tc.wantNoFilter {
				t.Errorf("entry %+v, want NoReserve %v NoPreBind %v NoPreFilter/NoFilter %v", e, tc.wantNoRes, tc.wantNoBind, tc.wantNoFilter)
			}
			prof, err := NewProfile(e)
			if err != nil {
				t.Fatal(err)
			}
			if prof.HasReserve() == tc.wantNoRes || prof.HasPreBind() == tc.wantNoBind {
				t.Errorf("profile reserves %v, pre-binds %v", prof.ReservePlugins(), prof.PreBindPlugins())
			}
		})
	}
	if _, err := build(Listers{}, Config{Plugins: &kschedv1.Plugins{
		Reserve: kschedv1.PluginSet{Enabled: []kschedv1.Plugin{{Name: abi.PluginNodePorts}}}}}); err == nil {
		t.Error("Build accepted NodePorts at reserve, which it does not implement")
	}
}

// wrapped is how the cycle's timed profile wraps plugins and filters.
type wrappedPlugin struct{ inner *binder }

func (w *wrappedPlugin) Name() string   { return w.inner.Name() }
func (w *wrappedPlugin) Unwrap() Plugin { return w.inner }
func (w *wrappedPlugin) PreFilter(pi *cache.PodInfo, s *cache.Snapshot) (PodFilter, []string, *Status) {
	f, n, st := w.inner.PreFilter(pi, s)
	return &wrappedFilter{f}, n, st
}

type wrappedFilter struct{ inner PodFilter }

func (w *wrappedFilter) Filter(ni *cache.NodeInfo) *Status { return w.inner.Filter(ni) }
func (w *wrappedFilter) Unwrap() PodFilter                 { return w.inner }

func TestPodStatePluginFilterAndData(t *testing.T) {
	log := &callLog{}
	bs := binders(log, "A", "B")
	prof := MustProfile(Entry{Plugin: &wrappedPlugin{bs[0]}, NoFilter: true}, Entry{Plugin: bs[1]},
		Entry{Plugin: counting{limit: 1}})
	pod := reservePod()
	ps, st := prof.Prepare(cache.NewPodInfo(pod), nil)
	if st != nil {
		t.Fatal(st)
	}
	for _, name := range []string{"A", "B"} {
		f, ok := ps.PluginFilter(name).(*binderFilter)
		if !ok || f.name != name {
			t.Errorf("PluginFilter(%s) = %#v, want the plugin's own filter", name, ps.PluginFilter(name))
		}
	}
	if f := ps.PluginFilter("Counting"); f != nil {
		t.Errorf("PluginFilter kept %#v of a plugin that neither reserves nor pre-binds", f)
	}
	if got := prof.ReservePlugins(); !slices.Equal(got, []string{"A", "B"}) {
		t.Errorf("the wrapped plugin's Reserve was not found: %v", got)
	}
	if _, ok := ps.Read("x"); ok {
		t.Error("Read found a key never written")
	}
	ps.Write("x", 1)
	if v, ok := ps.Read("x"); !ok || v != 1 {
		t.Errorf("Read = %v, %v after Write", v, ok)
	}
	ps.Delete("x")
	if _, ok := ps.Read("x"); ok {
		t.Error("Read found a deleted key")
	}
	if plain := MustProfile(Entry{Plugin: counting{limit: 1}}); plain.Keeps() {
		t.Error("a profile without reserve or preBind keeps filters")
	}
}

type fakeTimer struct {
	mu  sync.Mutex
	obs []string
}

func (f *fakeTimer) Now() time.Time { return time.Time{} }
func (f *fakeTimer) Observe(plugin, point string, code Code, _ time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.obs = append(f.obs, plugin+" "+point+" "+code.String())
}

func TestPluginTimer(t *testing.T) {
	log := &callLog{}
	bs := binders(log, "A", "B")
	bs[1].preBind = &Status{Code: Error, Err: errors.New("boom")}
	plain := MustProfile(entriesOf(bs)...)
	timer := &fakeTimer{}
	timed := plain.WithPluginTimer(timer)
	pod := reservePod()
	ps, _ := timed.Prepare(cache.NewPodInfo(pod), nil)
	ctx := context.Background()
	_ = plain.Reserve(ctx, ps, pod, "n1")
	if len(timer.obs) != 0 {
		t.Fatalf("the plain profile was timed: %v", timer.obs)
	}
	_ = timed.Reserve(ctx, ps, pod, "n1")
	timed.Unreserve(ctx, ps, pod, "n1")
	_ = timed.PreBind(ctx, ps, pod, "n1")
	want := []string{"A Reserve Success", "B Reserve Success", "B Unreserve Success", "A Unreserve Success",
		"A PreBind Success", "B PreBind Error"}
	if !slices.Equal(timer.obs, want) {
		t.Errorf("observed:\n got %q\nwant %q", timer.obs, want)
	}
}

// PreBindPreFlight is upstream's RunPreBindPreFlights: work if any plugin
// has some, Skip if none has, an Error naming the plugin for a failure or
// a code a preflight may not return; PreBind then leaves out the plugins
// that answered Skip.
func TestPreBindPreFlight(t *testing.T) {
	skip := &Status{Code: Skip}
	for _, tc := range []struct {
		name        string
		preflight   []*Status // A, B, C
		wantCode    Code      // -1: nil (work)
		wantErr     string
		wantPreBind []string
	}{
		{name: "all have work", preflight: []*Status{nil, nil, nil}, wantCode: -1,
			wantPreBind: []string{"A", "B", "C"}},
		{name: "one has work", preflight: []*Status{skip, nil, skip}, wantCode: -1, wantPreBind: []string{"B"}},
		{name: "none has work", preflight: []*Status{skip, skip, skip}, wantCode: Skip},
		{name: "an error", preflight: []*Status{nil, {Code: Error, Err: errors.New("boom")}, nil}, wantCode: Error,
			wantErr: `running PreBindPreFlight "B": boom`},
		{name: "a rejection is unsupported", preflight: []*Status{skip, skip, {Code: Unschedulable, Reasons: []string{"no"}}},
			wantCode: Error,
			wantErr:  `PreBindPreFlight C returned "Unschedulable", which is unsupported. It is supposed to return Success, Skip, or Error status`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			log := &callLog{}
			bs := binders(log, "A", "B", "C")
			for i, b := range bs {
				b.preflight = tc.preflight[i]
			}
			prof := MustProfile(entriesOf(bs)...)
			pod := reservePod()
			ps, st := prof.Prepare(cache.NewPodInfo(pod), nil)
			if st != nil {
				t.Fatal(st)
			}
			ctx := context.Background()
			st = prof.PreBindPreFlight(ctx, ps, pod, "n1")
			switch {
			case tc.wantCode < 0 && st != nil:
				t.Fatalf("PreBindPreFlight = %v, want nil (work)", st)
			case tc.wantCode >= 0 && (st == nil || st.Code != tc.wantCode):
				t.Fatalf("PreBindPreFlight = %v, want code %v", st, tc.wantCode)
			case tc.wantErr != "":
				if st.Err == nil || st.Err.Error() != tc.wantErr {
					t.Fatalf("PreBindPreFlight error = %v, want %q", st.Err, tc.wantErr)
				}
				return
			}
			log.take()
			if st := prof.PreBind(ctx, ps, pod, "n1"); st != nil {
				t.Fatalf("PreBind = %v", st)
			}
			var ran []string
			for _, c := range log.take() {
				ran = append(ran, c[:1])
			}
			if !slices.Equal(ran, tc.wantPreBind) {
				t.Errorf("PreBind ran %v, want %v", ran, tc.wantPreBind)
			}
		})
	}
}

// detaching is a PreFilter whose filter records Detach.
type detaching struct{ detached *int }

func (detaching) Name() string { return "Detaching" }
func (d detaching) PreFilter(*cache.PodInfo, *cache.Snapshot) (PodFilter, []string, *Status) {
	return detachingFilter(d), nil, nil
}

// detachingFilter keeps counts (a PodUpdater), so that a state with it
// clones it for nominated pods.
type detachingFilter detaching

func (detachingFilter) Filter(*cache.NodeInfo) *Status            { return nil }
func (f detachingFilter) Detach()                                 { *f.detached++ }
func (f detachingFilter) Clone() PodFilter                        { return f }
func (detachingFilter) AddPod(*cache.PodInfo, *cache.NodeInfo)    {}
func (detachingFilter) RemovePod(*cache.PodInfo, *cache.NodeInfo) {}

// timedDetaching wraps detaching's filter as the cycle's timed profile
// does.
type timedDetaching struct{ detaching }

func (timedDetaching) Name() string { return "TimedDetaching" }

func (w timedDetaching) PreFilter(pi *cache.PodInfo, s *cache.Snapshot) (PodFilter, []string, *Status) {
	f, n, st := w.detaching.PreFilter(pi, s)
	return &wrappedFilter{f}, n, st
}

func TestPodStateDetach(t *testing.T) {
	var plain, wrapped int
	prof := MustProfile(Entry{Plugin: detaching{&plain}}, Entry{Plugin: timedDetaching{detaching{&wrapped}}},
		Entry{Plugin: counting{limit: 1}})
	ps, st := prof.Prepare(cache.NewPodInfo(reservePod()), nil)
	if st != nil {
		t.Fatal(st)
	}
	ps.Detach()
	if plain != 1 || wrapped != 1 {
		t.Errorf("Detach reached the filter %d times, the wrapped one %d times; want once each", plain, wrapped)
	}
	// The state of a node with nominated pods is a clone, detached too
	// (the wrapped filter, no PodUpdater, is shared with it).
	ni := ft.MakeNode("n1", "cpu", "4").Info()
	ps.AddNominated(ni, []*cache.PodInfo{ft.MakePod().Req("cpu", "1").Info()})
	ps.Detach()
	if plain != 3 || wrapped != 3 {
		t.Errorf("with a nominated node, Detach reached the filters %d and %d times; want 3 each (twice more)", plain, wrapped)
	}
}
