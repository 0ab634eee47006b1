package policy

import (
	"fmt"
	"sync"
	"time"

	"github.com/wasmsched/wasmsched/abi"
)

// SmokeInput is the synthetic input of the smoke call that a module must pass
// before it is installed in a slot: two pods, a node-add event and two
// victims. Each slot's adapter asks its module the slot's question about it
// (sort keys and less of the two pods, mayPop and PreEnqueue of the first,
// the event's hint for the first, the order of the victims with the first
// pod as preemptor).
type SmokeInput struct {
	Pods    []abi.PodView
	Event   abi.EventView
	Victims []abi.Victim
}

// Smoke returns the smoke input. It is built once; callers must not change
// it.
func Smoke() *SmokeInput { return smoke() }

var smoke = sync.OnceValue(func() *SmokeInput {
	const t0 = int64(1_700_000_000) * int64(time.Second)
	pod := func(i int, prio int32) abi.PodView {
		n := fmt.Sprint(i)
		v, err := abi.ReadPod(abi.AppendPod(nil, &abi.Pod{
			UID: "wasmsched-smoke-" + n, Namespace: "wasmsched-smoke", Name: "smoke-" + n,
			Priority: prio, CreationTime: t0, QueuedTime: t0 + int64(i)*int64(time.Second),
			InitialAttemptTime: t0, BackoffExpiry: t0 + 10*int64(time.Second), Attempts: 1,
			UnschedulablePlugins: []string{abi.PluginNodeResourcesFit},
			Labels:               []abi.KV{{Key: "app", Value: "smoke"}},
			Requests:             []abi.Quantity{{Name: "cpu", Value: 100}, {Name: "memory", Value: 64 << 20}},
		}))
		if err != nil {
			panic("policy: encoding the smoke pod: " + err.Error()) // abi's own encoding: a bug
		}
		return v
	}
	node := abi.AppendNode(nil, &abi.Node{
		Name:        "wasmsched-smoke-node",
		Labels:      []abi.KV{{Key: "kubernetes.io/hostname", Value: "wasmsched-smoke-node"}},
		Allocatable: []abi.Quantity{{Name: "cpu", Value: 4000}, {Name: "memory", Value: 8 << 30}, {Name: "pods", Value: 110}},
	})
	ev, err := abi.ReadEvent(abi.AppendEvent(nil, &abi.Event{Resource: abi.ResourceNode, Action: abi.ActionAdd, New: node}))
	if err != nil {
		panic("policy: encoding the smoke event: " + err.Error())
	}
	return &SmokeInput{
		Pods:  []abi.PodView{pod(0, 100), pod(1, 0)},
		Event: ev,
		Victims: []abi.Victim{
			{Kind: abi.VictimPod, Priority: 10, StartTime: t0, UID: "wasmsched-smoke-v0", Namespace: "wasmsched-smoke", Name: "v0"},
			{Kind: abi.VictimGroup, Priority: 20, StartTime: t0, Members: 2, UID: "wasmsched-smoke-v1", Namespace: "wasmsched-smoke", Name: "v1"},
		},
	}
})
