// The Filter tests run the whole default profile (the order of the filters
// is asserted), so they are an external test: the registry imports this
// package.
package nodedeclaredfeatures_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/wasmsched/wasmsched/abi"
	"github.com/wasmsched/wasmsched/host/framework"
	ft "github.com/wasmsched/wasmsched/host/framework/frameworktest"
	"github.com/wasmsched/wasmsched/host/framework/plugins"
	"github.com/wasmsched/wasmsched/host/framework/plugins/nodedeclaredfeatures"
)

// statusRequiredFeatures is the plugin's rejection.
var statusRequiredFeatures = &framework.Status{Code: framework.UnschedulableAndUnresolvable,
	Plugin: abi.PluginNodeDeclaredFeatures, Reasons: []string{nodedeclaredfeatures.ReasonRequiredFeatures}}

// state is the pod's state under the default profile, on no snapshot.
func state(t *testing.T, b *ft.PodBuilder) *framework.PodState {
	t.Helper()
	p, err := plugins.InTree().Default(framework.NewHandle(framework.HandleOptions{}))
	if err != nil {
		t.Fatalf("default profile: %v", err)
	}
	ps, st := p.Prepare(b.Info(), nil)
	if st != nil {
		t.Fatalf("Prepare: %+v", st)
	}
	return ps
}

// Features as component-helpers v0.37.1 names them.
const (
	featureRestartAll   = "RestartAllContainersOnContainerExits"
	featureUserNSHostNw = "UserNamespacesHostNetworkSupport"
)

// Upstream's Filter cases (nodedeclaredfeatures_test.go) on real features:
// the node must declare every feature the pod needs. The kubelet publishes
// status.declaredFeatures sorted, as the library expects.
func TestFilterNodeDeclaredFeatures(t *testing.T) {
	restartAll := func(b *ft.PodBuilder) *ft.PodBuilder {
		b.P.Spec.Containers = append(b.P.Spec.Containers, v1.Container{Name: "c",
			RestartPolicyRules: []v1.ContainerRestartRule{{Action: v1.ContainerRestartRuleActionRestartAllContainers}}})
		return b
	}
	userNSHostNetwork := func(b *ft.PodBuilder) *ft.PodBuilder {
		b.P.Spec.HostNetwork, b.P.Spec.HostUsers = true, ptr.To(false)
		return b
	}
	declared := func(fs ...string) *ft.NodeBuilder {
		n := ft.MakeNode("n", "cpu", "4")
		n.N.Status.DeclaredFeatures = fs
		return n
	}
	tests := []struct {
		name string
		pod  *ft.PodBuilder
		node *ft.NodeBuilder
		want *framework.Status
	}{
		{name: "pod with no requirements fits a node declaring none", pod: ft.MakePod(), node: declared()},
		{name: "node matches the requirement", pod: restartAll(ft.MakePod()), node: declared(featureRestartAll)},
		{name: "node does not match", pod: restartAll(ft.MakePod()), node: declared(featureUserNSHostNw), want: statusRequiredFeatures},
		{name: "node declares a superset", pod: restartAll(ft.MakePod()), node: declared(featureRestartAll, "Unknown", featureUserNSHostNw)},
		{name: "node declares nothing", pod: userNSHostNetwork(ft.MakePod()), node: declared(), want: statusRequiredFeatures},
		{name: "node has some but not all", pod: userNSHostNetwork(restartAll(ft.MakePod())), node: declared(featureRestartAll),
			want: statusRequiredFeatures},
		{name: "node has all", pod: userNSHostNetwork(restartAll(ft.MakePod())), node: declared(featureRestartAll, featureUserNSHostNw)},
		{name: "resources are checked first", pod: restartAll(ft.MakePod().Req("cpu", "8")), node: declared(),
			want: &framework.Status{Code: framework.UnschedulableAndUnresolvable, Plugin: abi.PluginNodeResourcesFit,
				Reasons: []string{"Insufficient cpu"}}}, // NodeResourcesFit's
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := framework.Filter(state(t, tc.pod), tc.node.Info())
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Filter (-want, +got):\n%s", diff)
			}
		})
	}
}
