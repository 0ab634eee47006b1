package volumebinding_test

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/runtime"
	kschedv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/wasmsched/wasmsched/abi"
	"github.com/wasmsched/wasmsched/host/framework"
	"github.com/wasmsched/wasmsched/host/framework/plugins"
	"github.com/wasmsched/wasmsched/host/framework/plugins/helper"
	"github.com/wasmsched/wasmsched/host/framework/plugins/volumebinding"
)

// The tests of VolumeBinding in the in-tree registry's profile.

func rawArgs(name, text string) kschedv1.PluginConfig {
	return kschedv1.PluginConfig{Name: name, Args: runtime.RawExtension{Raw: []byte(text)}}
}

// TestBuildVolumeBinding checks VolumeBinding's args and its place in the
// built profile: its filter, reserve and preBind, and its score weight.
func TestBuildVolumeBinding(t *testing.T) {
	b, err := plugins.InTree().Build(framework.NewHandle(framework.HandleOptions{Listers: framework.Listers{}}),
		framework.Config{PluginConfig: []kschedv1.PluginConfig{rawArgs("VolumeBinding",
			`{"bindTimeoutSeconds": 30, "shape": [{"utilization": 0, "score": 0}, {"utilization": 100, "score": 10}]}`)}})
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(b.Entries, func(e framework.Entry) bool { return e.Plugin.Name() == abi.PluginVolumeBinding })
	if i < 0 {
		t.Fatal("no VolumeBinding entry")
	}
	e := b.Entries[i]
	shape, ok := volumebinding.ShapeOf(e.Plugin)
	if !ok {
		t.Fatalf("VolumeBinding entry is a %T", e.Plugin)
	}
	if e.Weight != 1 || e.NoFilter || e.NoScore || e.NoReserve || e.NoPreBind {
		t.Errorf("entry = %+v, want every point on, weight 1", e)
	}
	if diff := cmp.Diff([]helper.ShapePoint{{Utilization: 0, Score: 0}, {Utilization: 100, Score: 100}}, shape); diff != "" {
		t.Errorf("shape (-want, +got):\n%s", diff)
	}
}
