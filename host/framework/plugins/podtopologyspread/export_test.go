package podtopologyspread

import (
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/wasmsched/wasmsched/host/framework"
)

// What the external tests (podtopologyspread_profile_test.go, which run the
// in-tree registry's default profile) need of the package's.

var (
	Pod                              = spod
	PodOn                            = spodOn
	Listers                          = spreadListers
	MatchLabels                      = matchLabels
	ProfileCluster                   = spreadProfileCluster
	WebPod                           = spreadWebPod
	BenchCluster                     = spreadBenchCluster
	BenchPod                         = spreadBenchPod
	StatusTopologySpread             = statusTopologySpread
	StatusTopologySpreadMissingLabel = statusTopologySpreadMissingLabel
)

// PodBuilder is the internal tests' pod builder.
type PodBuilder = spreadPodBuilder

// Namespace sets the pod's namespace.
func (b *spreadPodBuilder) Namespace(ns string) *spreadPodBuilder { return b.ns(ns) }

// Owner sets the pod's controller.
func (b *spreadPodBuilder) Owner(name string, gvk schema.GroupVersionKind) *spreadPodBuilder {
	return b.owner(name, gvk)
}

// IsSpreadScorer reports whether s is PodTopologySpread's scorer.
func IsSpreadScorer(s framework.PodScorer) bool {
	_, ok := s.(*spreadScorer)
	return ok
}
