package framework_test

import (
	"context"
	"errors"
	"testing"

	. "github.com/wasmsched/wasmsched/host/framework"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	kschedv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/wasmsched/wasmsched/abi"
)

// postFilterer is a test PostFilterPlugin returning st, logging its runs.
type postFilterer struct {
	name string
	st   *Status
	log  *callLog
}

func (p *postFilterer) Name() string { return p.name }

func (p *postFilterer) PostFilter(context.Context, *PodState, *v1.Pod) *Status {
	p.log.add(p.name)
	return p.st
}

// TestPostFilterChain checks upstream's RunPostFilterPlugins: Unschedulable
// goes on and gathers the reasons, naming the first plugin; Success,
// UnschedulableAndUnresolvable and an Error end it.
func TestPostFilterChain(t *testing.T) {
	unsched := func(r ...string) *Status { return &Status{Code: Unschedulable, Reasons: r} }
	tests := []struct {
		name     string
		statuses []*Status
		want     *Status
		ran      []string
	}{
		{name: "all unschedulable", statuses: []*Status{unsched(), unsched("b did"), unsched("c did")},
			want: &Status{Code: Unschedulable, Plugin: "a", Reasons: []string{"b did", "c did"}}, ran: []string{"a", "b", "c"}},
		{name: "success ends it", statuses: []*Status{unsched("a did"), nil, unsched()}, ran: []string{"a", "b"}},
		{name: "unresolvable ends it", statuses: []*Status{{Code: UnschedulableAndUnresolvable, Reasons: []string{"no"}}, unsched()},
			want: &Status{Code: UnschedulableAndUnresolvable, Plugin: "a", Reasons: []string{"no"}}, ran: []string{"a"}},
		{name: "an error ends it", statuses: []*Status{unsched(), {Code: Error, Err: errors.New("boom")}, unsched()},
			want: &Status{Code: Error, Plugin: "b"}, ran: []string{"a", "b"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			log := &callLog{}
			var entries []Entry
			for i, st := range tc.statuses {
				entries = append(entries, Entry{Plugin: &postFilterer{name: string(rune('a' + i)), st: st, log: log}})
			}
			p, err := NewProfile(entries...)
			if err != nil {
				t.Fatal(err)
			}
			got := p.PostFilter(context.Background(), nil, &v1.Pod{})
			if got != nil && got.Code == Error {
				if want := "boom"; got.Err == nil || got.Err.Error() != want {
					t.Errorf("error %v, want %q", got.Err, want)
				}
				got = &Status{Code: Error, Plugin: got.Plugin}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("PostFilter (-want, +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.ran, log.take()); diff != "" {
				t.Errorf("plugins run (-want, +got):\n%s", diff)
			}
		})
	}
}

// TestBuildPostFilterPerPoint checks that DynamicResources post-filters by
// default and that disabling its postFilter point leaves it out there.
func TestBuildPostFilterPerPoint(t *testing.T) {
	for _, tc := range []struct {
		name    string
		plugins *kschedv1.Plugins
		want    bool
	}{
		{name: "default", want: true},
		{name: "postFilter disabled", plugins: &kschedv1.Plugins{
			PostFilter: kschedv1.PluginSet{Disabled: []kschedv1.Plugin{{Name: abi.PluginDynamicResources}}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := build(Listers{}, Config{Plugins: tc.plugins})
			if err != nil {
				t.Fatal(err)
			}
			p, err := NewProfile(b.Entries...)
			if err != nil {
				t.Fatal(err)
			}
			if p.HasPostFilter() != tc.want {
				t.Errorf("HasPostFilter %v, want %v", p.HasPostFilter(), tc.want)
			}
			if b.PreemptionDisabled {
				t.Error("disabling DynamicResources' postFilter disabled preemption")
			}
		})
	}
}
