package logic_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wasmsched/wasmsched/abi"
	"github.com/wasmsched/wasmsched/guest-sdk/examples/holdlabel/logic"
	"github.com/wasmsched/wasmsched/guest-sdk/policytest"
)

func TestPolicy(t *testing.T) {
	policytest.Run(t, policytest.Policy{WasmPath: "../holdlabel.wasm", PreEnqueue: logic.PreEnqueue}, func(t *testing.T, s policytest.Slots) {
		cases := []struct {
			name string
			pod  *policytest.PodWrapper
			want abi.Gate
		}{
			{
				name: "no labels",
				pod:  policytest.MakePod().Name("p"),
				want: abi.Gate{Code: abi.GateAdmit},
			},
			{
				name: "other labels",
				pod:  policytest.MakePod().Name("p").Labels(map[string]string{"app": "web", "example.wasmsched.io/other": "x"}),
				want: abi.Gate{Code: abi.GateAdmit},
			},
			{
				name: "hold label",
				pod:  policytest.MakePod().Name("p").Label("app", "web").Label(logic.Label, "until-monday"),
				want: abi.Gate{Code: abi.GateWait, Plugin: "HoldLabel",
					Reason: "pod has label example.wasmsched.io/hold=until-monday; remove it to schedule"},
			},
			{
				name: "hold label with an empty value",
				pod:  policytest.MakePod().Name("p").Label(logic.Label, ""),
				want: abi.Gate{Code: abi.GateWait, Plugin: "HoldLabel",
					Reason: "pod has label example.wasmsched.io/hold=; remove it to schedule"},
			},
			{
				name: "scheduling gates are not this policy's business",
				pod:  policytest.MakePod().Name("p").SchedulingGates("example.com/gate"),
				want: abi.Gate{Code: abi.GateAdmit},
			},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				if diff := cmp.Diff(c.want, s.PreEnqueue.PreEnqueue(c.pod.View())); diff != "" {
					t.Errorf("PreEnqueue (-want, +got):\n%s", diff)
				}
			})
		}
	})
}
