package abi_test

import (
	"bytes"
	"testing"

	"github.com/wasmsched/wasmsched/abi"
	"github.com/wasmsched/wasmsched/abi/abitest"
)

// TestGoldenAlternateWriters holds the writers that bypass Append* (the
// in-place queue-state patch, batches from views) to the golden bytes.
func TestGoldenAlternateWriters(t *testing.T) {
	t.Run("AppendHintBatchViews", func(t *testing.T) {
		want := readGolden(t, "hintbatch-3-pods")
		ev := abi.AppendEvent(nil, abitest.NodeUpdateEvent())
		var views []abi.PodView
		for _, p := range []abi.Pod{abitest.MinimalPod(), abitest.FullPod(), abitest.GangPod()} {
			v, err := abi.ReadPod(abi.AppendPod(nil, &p))
			if err != nil {
				t.Fatal(err)
			}
			views = append(views, v)
		}
		if n := abi.HintBatchLen(ev, views); n != len(want) {
			t.Errorf("HintBatchLen = %d, want %d", n, len(want))
		}
		if got := abi.AppendHintBatchViews(nil, ev, views); !bytes.Equal(got, want) {
			t.Errorf("AppendHintBatchViews differs from the golden vector\n%s", hexDiff(want, got))
		}
		if got := abi.AppendHintBatchViews(nil, abi.AppendEvent(nil, abitest.NodeUpdateEvent()), nil); !bytes.Equal(got, readGolden(t, "hintbatch-no-pods")) {
			t.Errorf("AppendHintBatchViews of no pods differs from the golden vector")
		}
	})
	t.Run("VictimBatchLen", func(t *testing.T) {
		p := abitest.GangPod()
		if n, want := abi.VictimBatchLen(abi.AppendPod(nil, &p), abitest.Victims()), len(readGolden(t, "victimbatch-preemptor")); n != want {
			t.Errorf("VictimBatchLen = %d, want %d", n, want)
		}
		if n, want := abi.VictimBatchLen(nil, abitest.Victims()[:2]), len(readGolden(t, "victimbatch-no-preemptor")); n != want {
			t.Errorf("VictimBatchLen without preemptor = %d, want %d", n, want)
		}
	})
	t.Run("SetPodQueueState", func(t *testing.T) {
		// Patching pod-minimal with the gang member's queue state gives the
		// record AppendPod writes for a pod with that state.
		g := abitest.GangPod()
		state := abi.PodQueueState{
			QueuedTime: g.QueuedTime, InitialAttemptTime: g.InitialAttemptTime, BackoffExpiry: g.BackoffExpiry,
			Attempts: g.Attempts, LastFailureError: true,
		}
		p := abitest.MinimalPod()
		p.QueuedTime, p.InitialAttemptTime, p.BackoffExpiry = state.QueuedTime, state.InitialAttemptTime, state.BackoffExpiry
		p.Attempts, p.LastFailureError = state.Attempts, state.LastFailureError
		rec := readGolden(t, "pod-minimal")
		if err := abi.SetPodQueueState(rec, state); err != nil {
			t.Fatal(err)
		}
		if want := abi.AppendPod(nil, &p); !bytes.Equal(rec, want) {
			t.Errorf("SetPodQueueState differs from AppendPod\n%s", hexDiff(want, rec))
		}
		// And back: pod-full's flags keep PreemptNever.
		full := readGolden(t, "pod-full")
		v, _ := abi.ReadPod(full)
		if err := abi.SetPodQueueState(full, v.QueueState()); err != nil || !bytes.Equal(full, readGolden(t, "pod-full")) {
			t.Errorf("SetPodQueueState(rec, its own state) changed the record (err %v)", err)
		}
	})
}
