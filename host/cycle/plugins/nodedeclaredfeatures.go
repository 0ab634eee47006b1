package plugins

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/version"
	ndf "k8s.io/component-helpers/nodedeclaredfeatures"

	"github.com/wasmsched/wasmsched/abi"
)

// ReasonRequiredFeatures is upstream's NodeDeclaredFeatures reason.
const ReasonRequiredFeatures = "node(s) didn't match Pod's required features"

// targetVersion is the Kubernetes version whose features a pod may need:
// the version wasmsched schedules for, as upstream passes its own. A feature
// with a MaxVersion below it is assumed on every node.
var targetVersion = version.MustParse("v1.37.1")

var statusRequiredFeatures = &Status{Code: UnschedulableAndUnresolvable, Plugin: abi.PluginNodeDeclaredFeatures,
	Reasons: []string{ReasonRequiredFeatures}}

// requiredFeatures is upstream's NodeDeclaredFeatures PreFilter: the node
// features that pod's spec needs (component-helpers infers them, e.g.
// RestartAllContainers from a container's restartPolicyRules), nil when it
// needs none, which skips the filter.
func requiredFeatures(pod *v1.Pod) (ndf.FeatureSet, *Status) {
	reqs, err := ndf.DefaultFramework.InferForPodScheduling(&ndf.PodInfo{Spec: &pod.Spec}, targetVersion)
	if err != nil {
		return ndf.FeatureSet{}, &Status{Code: Error, Plugin: abi.PluginNodeDeclaredFeatures,
			Err: fmt.Errorf("infer the node features pod %s/%s needs: %w", pod.Namespace, pod.Name, err)}
	}
	return reqs, nil
}

// declaredFeatures is the NodeDeclaredFeatures filter: the node must declare
// every feature the pod needs in status.declaredFeatures. Only pods that
// need a feature reach it, so mapping the node's list here (upstream keeps
// it mapped in its NodeInfo) costs nothing to the others.
func (ps *PodState) declaredFeatures(node *v1.Node) *Status {
	m, err := ndf.DefaultFramework.MatchNode(ps.features, node)
	if err != nil {
		return &Status{Code: Error, Plugin: abi.PluginNodeDeclaredFeatures,
			Err: fmt.Errorf("match the declared features of node %s: %w", node.Name, err)}
	}
	if !m.IsMatch {
		return statusRequiredFeatures
	}
	return nil
}
