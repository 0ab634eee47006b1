// Package imagelocality is upstream's ImageLocality plugin
// (pkg/scheduler/framework/plugins/imagelocality): nodes that already hold
// the pod's container images score higher, by the images' sizes spread over
// the nodes that have them. Extension points: PreScore, Score. No filter.
// Weight 1.
package imagelocality

import (
	"strings"

	"github.com/wasmsched/wasmsched/host/cache"
	"github.com/wasmsched/wasmsched/host/framework"
)

// Name is the plugin's upstream name. It only scores, so no
// rejection or hint names it and abi/ has no constant.
const Name = "ImageLocality"

// weightImageLocality is upstream's default score weight.
const weightImageLocality = 1

// Upstream's thresholds: the sum of a pod's image sizes on a node scores 0
// below minImageThreshold and 100 from maxContainerImageThreshold per
// image.
const (
	mebibyte                   int64 = 1024 * 1024
	minImageThreshold                = 23 * mebibyte
	maxContainerImageThreshold       = 1000 * mebibyte
)

// imageLocality is upstream v1.37's ImageLocality plugin: nodes that already
// have the pod's images (node.status.images) score higher, by the images'
// sizes, each scaled by the share of nodes that have it, so that an image
// on every node does not pull every pod to the same few nodes.
//
// Extension points: PreScore, Score. No filter. Weight 1.
//
// Upstream has no PreScore and scores every pod; here PreScore skips a pod
// none of whose images is on any node, whose score upstream's formula makes
// 0 on every node; a cluster whose nodes report no images (KWOK's, most
// tests') pays nothing for it.
type imageLocality struct{}

var _ framework.PreScorePlugin = imageLocality{}

func (imageLocality) Name() string { return Name }

func (imageLocality) PreScore(pod *cache.PodInfo, _ []*cache.NodeInfo, snap *cache.Snapshot) (framework.PodScorer, *framework.Status) {
	if !snap.HasImages() {
		return nil, nil
	}
	spec := &pod.Pod.Spec
	count := len(spec.InitContainers) + len(spec.Containers)
	var names []string
	for i := range spec.InitContainers {
		names = append(names, normalizedImageName(spec.InitContainers[i].Image))
	}
	for i := range spec.Containers {
		names = append(names, normalizedImageName(spec.Containers[i].Image))
	}
	for i := range spec.Volumes {
		if img := spec.Volumes[i].Image; img != nil {
			names = append(names, normalizedImageName(img.Reference))
			count++
		}
	}
	total := snap.NumNodes()
	sc := &imageScorer{count: int64(count)}
	for _, name := range names {
		if n := snap.ImageNodes(name); n > 0 {
			sc.images = append(sc.images, imageSpread{name: name, spread: float64(n) / float64(total)})
		}
	}
	if len(sc.images) == 0 {
		return nil, nil
	}
	return sc, nil
}

// imageScorer holds the pod's images that some node has, with the share of
// nodes that have each, and the pod's image count (containers, init
// containers and image volumes, present anywhere or not).
type imageScorer struct {
	images []imageSpread
	count  int64
}

type imageSpread struct {
	name   string
	spread float64
}

func (s *imageScorer) Score(nodes []*cache.NodeInfo, scores []int64) {
	maxThreshold := maxContainerImageThreshold * s.count
	for i, ni := range nodes {
		var sum int64
		for _, img := range s.images {
			if size, ok := ni.ImageSize(img.name); ok {
				sum += int64(float64(size) * img.spread)
			}
		}
		sum = min(max(sum, minImageThreshold), maxThreshold)
		scores[i] = framework.MaxNodeScore * (sum - minImageThreshold) / (maxThreshold - minImageThreshold)
	}
}

// normalizedImageName is upstream's: an image without a tag (no ':' after
// the last '/') is image:latest, as node.status.images names it.
func normalizedImageName(name string) string {
	if strings.LastIndex(name, ":") <= strings.LastIndex(name, "/") {
		name += ":latest"
	}
	return name
}

// Row is the plugin's registry row.
func Row() framework.Row {
	return framework.Row{Name: Name, Points: framework.PointsOf(framework.PointScore), Default: true, Weight: weightImageLocality,
		New: func(framework.Handle, any) (framework.Plugin, error) { return imageLocality{}, nil }}
}
