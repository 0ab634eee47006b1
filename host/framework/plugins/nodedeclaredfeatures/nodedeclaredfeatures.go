// Package nodedeclaredfeatures is upstream's NodeDeclaredFeatures plugin
// (pkg/scheduler/framework/plugins/nodedeclaredfeatures, GA in v1.37): the
// node must declare in status.declaredFeatures every feature the pod's spec
// needs. Extension points: PreFilter, Filter. Rejects:
// UnschedulableAndUnresolvable (ReasonRequiredFeatures). No score; last in
// the profile, as upstream.
package nodedeclaredfeatures

import (
	"fmt"

	"k8s.io/apimachinery/pkg/util/version"
	ndf "k8s.io/component-helpers/nodedeclaredfeatures"

	"github.com/wasmsched/wasmsched/abi"
	"github.com/wasmsched/wasmsched/host/cache"
	"github.com/wasmsched/wasmsched/host/framework"
)

// ReasonRequiredFeatures is upstream's NodeDeclaredFeatures reason.
const ReasonRequiredFeatures = "node(s) didn't match Pod's required features"

// targetVersion is the Kubernetes version whose features a pod may need:
// the version wasmsched schedules for, as upstream passes its own. A feature
// with a MaxVersion below it is assumed on every node.
var targetVersion = version.MustParse("v1.37.1")

var statusRequiredFeatures = &framework.Status{Code: framework.UnschedulableAndUnresolvable, Plugin: abi.PluginNodeDeclaredFeatures,
	Reasons: []string{ReasonRequiredFeatures}}

// nodeDeclaredFeatures is upstream's NodeDeclaredFeatures plugin (GA in
// v1.37): the node must declare in status.declaredFeatures every feature
// the pod's spec needs.
//
// Extension points: PreFilter (the features the pod needs, which
// component-helpers infers, e.g. RestartAllContainers from a container's
// restartPolicyRules; skips a pod that needs none), Filter. Rejects:
// UnschedulableAndUnresolvable (ReasonRequiredFeatures), Error when the
// features cannot be inferred or matched. No score. Last in the profile, as
// upstream.
type nodeDeclaredFeatures struct{}

var _ framework.PreFilterPlugin = nodeDeclaredFeatures{}

func (nodeDeclaredFeatures) Name() string { return abi.PluginNodeDeclaredFeatures }

func (nodeDeclaredFeatures) PreFilter(pod *cache.PodInfo, _ *cache.Snapshot) (framework.PodFilter, []string, *framework.Status) {
	reqs, err := ndf.DefaultFramework.InferForPodScheduling(&ndf.PodInfo{Spec: &pod.Pod.Spec}, targetVersion)
	if err != nil {
		return nil, nil, &framework.Status{Code: framework.Error, Plugin: abi.PluginNodeDeclaredFeatures,
			Err: fmt.Errorf("infer the node features pod %s/%s needs: %w", pod.Pod.Namespace, pod.Pod.Name, err)}
	}
	if reqs.IsEmpty() {
		return nil, nil, nil
	}
	return &featuresFilter{features: reqs}, nil, nil
}

// featuresFilter holds the features the pod needs.
type featuresFilter struct {
	features ndf.FeatureSet
}

// Filter maps the node's declared features here (upstream keeps them mapped
// in its NodeInfo): only pods that need a feature reach it, so that costs
// nothing to the others.
// NodeLocal: the features come from the pod's spec, the match from the
// node alone.
func (*featuresFilter) NodeLocal() bool { return true }

func (f *featuresFilter) Filter(ni *cache.NodeInfo) *framework.Status {
	node := ni.Node()
	m, err := ndf.DefaultFramework.MatchNode(f.features, node)
	if err != nil {
		return &framework.Status{Code: framework.Error, Plugin: abi.PluginNodeDeclaredFeatures,
			Err: fmt.Errorf("match the declared features of node %s: %w", node.Name, err)}
	}
	if !m.IsMatch {
		return statusRequiredFeatures
	}
	return nil
}

// Row is the plugin's registry row.
func Row() framework.Row {
	return framework.Row{Name: abi.PluginNodeDeclaredFeatures, Points: framework.PointsOf(framework.PointPreFilter, framework.PointFilter), Default: true,
		New: func(framework.Handle, any) (framework.Plugin, error) { return nodeDeclaredFeatures{}, nil }}
}
