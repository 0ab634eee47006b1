package dynamicresources_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	kschedv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/wasmsched/wasmsched/abi"
	"github.com/wasmsched/wasmsched/host/cache"
	"github.com/wasmsched/wasmsched/host/framework"
	ft "github.com/wasmsched/wasmsched/host/framework/frameworktest"
	"github.com/wasmsched/wasmsched/host/framework/plugins"
	"github.com/wasmsched/wasmsched/host/framework/plugins/dynamicresources"
)

// The tests of DynamicResources in the in-tree registry's profile: its
// extended resources in NodeResourcesFit's filter, and the Handle's claim
// recorder.

// reasonInsufficient is NodeResourcesFit's ReasonInsufficient (upstream's
// "Insufficient <resource>"), its package being another plugin's.
const reasonInsufficient = "Insufficient "

// defaultFit is NodeResourcesFit of the in-tree registry's profile built
// over l with c.
func defaultFit(t *testing.T, l framework.Listers, c framework.Config) framework.PreFilterPlugin {
	t.Helper()
	b, err := plugins.InTree().Build(framework.NewHandle(framework.HandleOptions{Listers: l}), c)
	if err != nil {
		t.Fatal(err)
	}
	var fit framework.PreFilterPlugin
	for _, e := range b.Entries {
		if e.Plugin.Name() == abi.PluginNodeResourcesFit {
			fit = e.Plugin.(framework.PreFilterPlugin)
		}
	}
	return fit
}

// TestNodeResourcesFitDRAExtended checks that NodeResourcesFit leaves an
// extended resource a DeviceClass maps (explicitly or by the implicit
// deviceclass.resource.kubernetes.io/ name) to DynamicResources on a node
// that does not advertise it, and checks it as before otherwise.
func TestNodeResourcesFitDRAExtended(t *testing.T) {
	// NodeResourcesFit with upstream's default args (its zero value) and the
	// DeviceClasses, as the in-tree registry builds it with DynamicResources'
	// filter on.
	fit := defaultFit(t, framework.Listers{DeviceClasses: dynamicresources.ClassLister(t, dynamicresources.ExtClass())}, framework.Config{})
	insufficient := func(name string, code framework.Code) *framework.Status {
		return &framework.Status{Code: code, Plugin: abi.PluginNodeResourcesFit, Reasons: []string{reasonInsufficient + name}}
	}
	tests := []struct {
		name string
		pod  *ft.PodBuilder
		node *ft.NodeBuilder
		want *framework.Status
	}{
		{name: "mapped, node without it", pod: ft.MakePod().Req(dynamicresources.ExtGPU, "2"), node: ft.MakeNode("n", "cpu", "4")},
		{name: "implicit name, node without it", pod: ft.MakePod().Req("deviceclass.resource.kubernetes.io/gpu", "1"),
			node: ft.MakeNode("n", "cpu", "4")},
		{name: "not mapped, node without it", pod: ft.MakePod().Req("other.wasmsched.test/fpga", "1"), node: ft.MakeNode("n", "cpu", "4"),
			want: insufficient("other.wasmsched.test/fpga", framework.UnschedulableAndUnresolvable)},
		{name: "implicit name of a class that does not exist", pod: ft.MakePod().Req("deviceclass.resource.kubernetes.io/tpu", "1"),
			node: ft.MakeNode("n", "cpu", "4"), want: insufficient("deviceclass.resource.kubernetes.io/tpu", framework.UnschedulableAndUnresolvable)},
		{name: "mapped, node advertises too few (device plugin)", pod: ft.MakePod().Req(dynamicresources.ExtGPU, "2"), node: ft.MakeNode("n", dynamicresources.ExtGPU, "1"),
			want: insufficient(dynamicresources.ExtGPU, framework.UnschedulableAndUnresolvable)},
		{name: "mapped, node advertises enough", pod: ft.MakePod().Req(dynamicresources.ExtGPU, "2"), node: ft.MakeNode("n", dynamicresources.ExtGPU, "2")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ps := mustPrepareProfile(t, ft.MustProfile(framework.Entry{Plugin: fit, NoScore: true}), tc.pod.Info())
			if diff := cmp.Diff(tc.want, framework.Filter(ps, tc.node.Info())); diff != "" {
				t.Errorf("Filter (-want, +got):\n%s", diff)
			}
		})
	}

	// A profile whose DynamicResources filter is off must not leave the
	// resource to it.
	l := framework.Listers{DeviceClasses: dynamicresources.ClassLister(t, dynamicresources.ExtClass())}
	for _, disable := range []bool{false, true} {
		var c framework.Config
		if disable {
			c.Plugins = &kschedv1.Plugins{Filter: kschedv1.PluginSet{Disabled: []kschedv1.Plugin{{Name: abi.PluginDynamicResources}}}}
		}
		fit := defaultFit(t, l, c)
		ps := mustPrepareProfile(t, ft.MustProfile(framework.Entry{Plugin: fit, NoScore: true}), ft.MakePod().Req(dynamicresources.ExtGPU, "1").Info())
		st := framework.Filter(ps, ft.MakeNode("n", "cpu", "4").Info())
		if (st == nil) == disable {
			t.Errorf("DynamicResources filter disabled %v: NodeResourcesFit's Filter = %v", disable, st)
		}
	}
}

func mustPrepareProfile(t *testing.T, p *framework.Profile, pi *cache.PodInfo) *framework.PodState {
	t.Helper()
	ps, st := p.Prepare(pi, nil)
	if st != nil {
		t.Fatalf("Prepare: %v", st.Message())
	}
	return ps
}

// TestBuildClaimRecorder checks that Build hands the Handle's claim
// recorder to DynamicResources.
func TestBuildClaimRecorder(t *testing.T) {
	counter := dynamicresources.NewClaimCounter()
	b, err := plugins.InTree().Build(framework.NewHandle(framework.HandleOptions{Claims: counter}), framework.Config{})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range b.Entries {
		if claims, ok := dynamicresources.ClaimsOf(e.Plugin); ok {
			if claims != counter {
				t.Errorf("DynamicResources counts claims with %T, want the Config's", claims)
			}
			return
		}
	}
	t.Error("no DynamicResources in the default profile")
}
