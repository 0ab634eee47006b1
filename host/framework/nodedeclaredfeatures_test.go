package framework

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

// Features as component-helpers v0.37.1 names them.
const (
	featureRestartAll   = "RestartAllContainersOnContainerExits"
	featureUserNSHostNw = "UserNamespacesHostNetworkSupport"
)

// Upstream's Filter cases (nodedeclaredfeatures_test.go) on real features:
// the node must declare every feature the pod needs. The kubelet publishes
// status.declaredFeatures sorted, as the library expects.
func TestFilterNodeDeclaredFeatures(t *testing.T) {
	restartAll := func(b *podBuilder) *podBuilder {
		b.p.Spec.Containers = append(b.p.Spec.Containers, v1.Container{Name: "c",
			RestartPolicyRules: []v1.ContainerRestartRule{{Action: v1.ContainerRestartRuleActionRestartAllContainers}}})
		return b
	}
	userNSHostNetwork := func(b *podBuilder) *podBuilder {
		b.p.Spec.HostNetwork, b.p.Spec.HostUsers = true, ptr.To(false)
		return b
	}
	declared := func(fs ...string) *nodeBuilder {
		n := makeNode("n", "cpu", "4")
		n.n.Status.DeclaredFeatures = fs
		return n
	}
	tests := []struct {
		name string
		pod  *podBuilder
		node *nodeBuilder
		want *Status
	}{
		{name: "pod with no requirements fits a node declaring none", pod: makePod(), node: declared()},
		{name: "node matches the requirement", pod: restartAll(makePod()), node: declared(featureRestartAll)},
		{name: "node does not match", pod: restartAll(makePod()), node: declared(featureUserNSHostNw), want: statusRequiredFeatures},
		{name: "node declares a superset", pod: restartAll(makePod()), node: declared(featureRestartAll, "Unknown", featureUserNSHostNw)},
		{name: "node declares nothing", pod: userNSHostNetwork(makePod()), node: declared(), want: statusRequiredFeatures},
		{name: "node has some but not all", pod: userNSHostNetwork(restartAll(makePod())), node: declared(featureRestartAll),
			want: statusRequiredFeatures},
		{name: "node has all", pod: userNSHostNetwork(restartAll(makePod())), node: declared(featureRestartAll, featureUserNSHostNw)},
		{name: "resources are checked first", pod: restartAll(makePod().req("cpu", "8")), node: declared(),
			want: newFitStatus(fitCPU | fitUnresolvable)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Filter(tc.pod.state(), tc.node.info())
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Filter (-want, +got):\n%s", diff)
			}
		})
	}
}
