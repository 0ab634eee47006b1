package preenqueue

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/wasmsched/wasmsched/abi"
	"github.com/wasmsched/wasmsched/guest-sdk/internal/exportcheck"
)

func TestExportNames(t *testing.T) {
	exportcheck.Check(t, ".", abi.SlotPreEnqueue.RequiredExports()...)
}

func TestDecide(t *testing.T) {
	p, err := abi.ReadPod(abi.AppendPod(nil, &abi.Pod{Name: "p"}))
	if err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("x", abi.MaxReasonLen-1) + "ü"
	cases := []struct {
		name string
		gate abi.Gate
		want abi.Gate
	}{
		{"admit", abi.Gate{}, abi.Gate{}},
		{"wait", abi.Gate{Code: abi.GateWait, Plugin: "P", Reason: "r"}, abi.Gate{Code: abi.GateWait, Plugin: "P", Reason: "r"}},
		{"long reason cut on a rune boundary", abi.Gate{Code: abi.GateWait, Plugin: "P", Reason: long}, abi.Gate{Code: abi.GateWait, Plugin: "P", Reason: long[:abi.MaxReasonLen-1]}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := Decide(func(abi.PodView) abi.Gate { return c.gate }, p)
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("Decide (-want, +got):\n%s", diff)
			}
			if !utf8.ValidString(got.Reason) {
				t.Error("reason is not valid UTF-8")
			}
			var dec abi.Gate
			if err := abi.DecodeGate(abi.AppendGate(nil, &got), &dec); err != nil {
				t.Errorf("the host would refuse the gate: %v", err)
			}
		})
	}
}
