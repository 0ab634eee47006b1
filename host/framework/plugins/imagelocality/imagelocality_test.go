package imagelocality

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/wasmsched/wasmsched/host/cache"
	"github.com/wasmsched/wasmsched/host/framework"
)

// imageNode is a node whose status lists images, each given as its size in
// MiB and its names.
func imageNode(name string, images ...v1.ContainerImage) *v1.Node {
	return &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: v1.NodeStatus{Images: images}}
}

func image(mib int64, names ...string) v1.ContainerImage {
	return v1.ContainerImage{Names: names, SizeBytes: mib * mebibyte}
}

func containers(images ...string) []v1.Container {
	var out []v1.Container
	for _, img := range images {
		out = append(out, v1.Container{Image: img})
	}
	return out
}

// imageLocalityScores scores nodes for pod as the profile would: PreScore
// over the snapshot of nodes, then Score; a skipped pod scores 0 everywhere.
func imageLocalityScores(t *testing.T, spec v1.PodSpec, nodes ...*v1.Node) []int64 {
	t.Helper()
	var infos []*cache.NodeInfo
	for _, n := range nodes {
		infos = append(infos, cache.NewNodeInfo(n))
	}
	snap := cache.NewSnapshot(infos...)
	scores := make([]int64, len(infos))
	sc, st := imageLocality{}.PreScore(cache.NewPodInfo(&v1.Pod{Spec: spec}), infos, snap)
	if st != nil {
		t.Fatalf("PreScore: %v", st.Message())
	}
	if sc != nil {
		sc.Score(infos, scores)
	}
	return scores
}

// TestImageLocalityScore has upstream v1.37.1's TestImageLocalityPriority
// cases (imagelocality/image_locality_test.go), with its expected scores.
func TestImageLocalityScore(t *testing.T) {
	node403002000 := []v1.ContainerImage{image(40, "gcr.io/40:latest", "gcr.io/40:v1", "gcr.io/40:v1"),
		image(300, "gcr.io/300:latest", "gcr.io/300:v1"), image(2000, "gcr.io/2000:latest")}
	node25010 := []v1.ContainerImage{image(250, "gcr.io/250:latest"), image(10, "gcr.io/10:latest", "gcr.io/10:v1")}
	node60040900 := []v1.ContainerImage{image(600, "gcr.io/600:latest"), image(40, "gcr.io/40:latest"), image(900, "gcr.io/900:latest")}
	node300600900 := []v1.ContainerImage{image(300, "gcr.io/300:latest"), image(600, "gcr.io/600:latest"), image(900, "gcr.io/900:latest")}
	node400030 := []v1.ContainerImage{image(4000, "gcr.io/4000:latest"), image(30, "gcr.io/30:latest")}
	node203040 := []v1.ContainerImage{image(20, "gcr.io/20:latest"), image(30, "gcr.io/30:latest"), image(40, "gcr.io/40:latest")}

	imageVolume := v1.PodSpec{Containers: containers("gcr.io/30"), Volumes: []v1.Volume{{Name: "imageVolume",
		VolumeSource: v1.VolumeSource{Image: &v1.ImageVolumeSource{Reference: "gcr.io/300"}}}}}
	for _, tc := range []struct {
		name  string
		spec  v1.PodSpec
		nodes []*v1.Node
		want  []int64
	}{
		{"two images spread on two nodes, prefer the larger image one",
			v1.PodSpec{Containers: containers("gcr.io/40", "gcr.io/250")},
			[]*v1.Node{imageNode("node1", node403002000...), imageNode("node2", node25010...)}, []int64{0, 5}},
		{"two images on one node, prefer this node",
			v1.PodSpec{Containers: containers("gcr.io/40", "gcr.io/300")},
			[]*v1.Node{imageNode("node1", node403002000...), imageNode("node2", node25010...)}, []int64{7, 0}},
		{"if exceed limit, use limit",
			v1.PodSpec{Containers: containers("gcr.io/10", "gcr.io/4000")},
			[]*v1.Node{imageNode("node1", node400030...), imageNode("node2", node25010...)}, []int64{framework.MaxNodeScore, 0}},
		{"if exceed limit, use limit (with node which has no images present)",
			v1.PodSpec{Containers: containers("gcr.io/10", "gcr.io/4000")},
			[]*v1.Node{imageNode("node1", node400030...), imageNode("node2", node25010...), imageNode("node3")}, []int64{66, 0, 0}},
		{"pod with multiple large images, node2 is preferred",
			v1.PodSpec{Containers: containers("gcr.io/300", "gcr.io/600", "gcr.io/900")},
			[]*v1.Node{imageNode("node1", node60040900...), imageNode("node2", node300600900...), imageNode("node3")}, []int64{32, 36, 0}},
		{"pod with multiple small images",
			v1.PodSpec{Containers: containers("gcr.io/30", "gcr.io/40")},
			[]*v1.Node{imageNode("node1", node203040...), imageNode("node2", node400030...)}, []int64{1, 0}},
		{"pod with ImageVolume", imageVolume,
			[]*v1.Node{imageNode("node1", node300600900...), imageNode("node2", node400030...)}, []int64{6, 0}},
		{"same images as ImageVolume pod but as regular container images",
			v1.PodSpec{Containers: containers("gcr.io/30", "gcr.io/300")},
			[]*v1.Node{imageNode("node1", node300600900...), imageNode("node2", node400030...)}, []int64{6, 0}},
		{"include InitContainers: two images spread on two nodes, prefer the larger image one",
			v1.PodSpec{Containers: containers("gcr.io/30"), InitContainers: containers("gcr.io/300")},
			[]*v1.Node{imageNode("node1", node403002000...), imageNode("node2", node203040...)}, []int64{6, 0}},
		{"no node has any image of the pod",
			v1.PodSpec{Containers: containers("gcr.io/none")},
			[]*v1.Node{imageNode("node1", node403002000...), imageNode("node2")}, []int64{0, 0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, imageLocalityScores(t, tc.spec, tc.nodes...)); diff != "" {
				t.Errorf("scores (-want, +got):\n%s", diff)
			}
		})
	}
}

func TestImageLocalitySkipsPodsWithoutImagesOnNodes(t *testing.T) {
	infos := []*cache.NodeInfo{cache.NewNodeInfo(imageNode("n1"))}
	sc, st := imageLocality{}.PreScore(cache.NewPodInfo(&v1.Pod{Spec: v1.PodSpec{Containers: containers("busybox")}}),
		infos, cache.NewSnapshot(infos...))
	if sc != nil || st != nil {
		t.Errorf("PreScore = %v, %v; want a skip (nil, nil)", sc, st)
	}
}

// TestNormalizedImageName has upstream's cases.
func TestNormalizedImageName(t *testing.T) {
	digest := "sha256:4813494d137e1631bba301d5acab6e7bb7aa74ce1185d456565ef51d737677b2"
	for in, want := range map[string]string{
		"root":             "root:latest",
		"gcr.io:5000/root": "gcr.io:5000/root:latest",
		"root:tag":         "root:tag",
		"root@" + digest:   "root@" + digest,
	} {
		if got := normalizedImageName(in); got != want {
			t.Errorf("normalizedImageName(%q) = %q, want %q", in, got, want)
		}
	}
}
