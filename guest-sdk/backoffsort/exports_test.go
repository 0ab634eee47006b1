package backoffsort

import (
	"testing"

	"github.com/wasmsched/wasmsched/abi"
	"github.com/wasmsched/wasmsched/guest-sdk/internal/exportcheck"
)

func TestExportNames(t *testing.T) {
	s := abi.SlotBackoffSort
	exportcheck.Check(t, ".", append(s.RequiredExports(), s.KeyExport())...)
}

func view(t *testing.T, p abi.Pod) abi.PodView {
	t.Helper()
	v, err := abi.ReadPod(abi.AppendPod(nil, &p))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestMayPop(t *testing.T) {
	unschedulable := view(t, abi.Pod{Name: "u", UnschedulablePlugins: []string{abi.PluginNodeResourcesFit}})
	pending := view(t, abi.Pod{Name: "p", PendingPlugins: []string{"DynamicResources"}})
	noPlugin := view(t, abi.Pod{Name: "n"})
	failed := view(t, abi.Pod{Name: "e", LastFailureError: true, UnschedulablePlugins: []string{abi.PluginNodeResourcesFit}})
	never := Policy{MayPop: func(abi.PodView) bool { return false }}
	cases := []struct {
		name string
		p    Policy
		pod  abi.PodView
		want bool
	}{
		{"upstream: unschedulable may pop", Policy{}, unschedulable, true},
		{"upstream: pending only may pop", Policy{}, pending, true},
		{"upstream: no rejecting plugin may not (error heap)", Policy{}, noPlugin, false},
		{"upstream: error may not", Policy{}, failed, false},
		{"policy decides", never, unschedulable, false},
	}
	for _, c := range cases {
		if got := MayPop(c.p, c.pod); got != c.want {
			t.Errorf("%s: MayPop = %v, want %v", c.name, got, c.want)
		}
	}
}

func TestRegisterWithoutLessPanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("Register without Less did not panic")
		}
	}()
	Register(Policy{MayPop: UpstreamMayPop})
}
