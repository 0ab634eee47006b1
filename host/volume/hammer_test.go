package volume

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// TestHammerReserve races many pods, each with its own WaitForFirstConsumer
// claim, for a few static PVs: each finds a PV, assumes it (Reserve) and
// reverts it (Unreserve) or keeps it, over and over, on many goroutines.
// No PV is ever assumed for two claims; every attempt either reserved a PV
// or was rejected (no PV found, or the PV was taken since it was found);
// once every pod has reverted, every PV is free again.
func TestHammerReserve(t *testing.T) {
	const pvs, pods, rounds = 4, 32, 20
	var objs []runtime.Object
	for i := range pvs {
		objs = append(objs, makePV(fmt.Sprintf("pv-%d", i), "node1", "1G", nil, waitClass))
	}
	for i := range pods {
		objs = append(objs, makePVC(fmt.Sprintf("claim-%d", i), "1G", unbound, "", waitClass))
	}
	e := newEnv(t, Options{}, objs...)

	var mu sync.Mutex
	holder := map[string]string{} // PV -> claim, while assumed
	var reserved, rejected int
	var wg sync.WaitGroup
	for i := range pods {
		wg.Add(1)
		go func() {
			defer wg.Done()
			claim := fmt.Sprintf("claim-%d", i)
			pod := makePod(fmt.Sprintf("pod-%d", i), claim)
			var kept *PodVolumes
			for r := range rounds {
				pc, err := e.binder.Claims(pod)
				if err != nil {
					t.Errorf("Claims: %v", err)
					return
				}
				found, reasons, err := e.binder.FindPodVolumes(pod, pc, node1)
				if err != nil {
					t.Errorf("FindPodVolumes: %v", err)
					return
				}
				if kept != nil {
					// Its own assumed PV is still its: it finds that one.
					if len(reasons) > 0 || found.Static[0].PV.Name != kept.Static[0].PV.Name {
						t.Errorf("%s holds %s but found %v %v", claim, kept.Static[0].PV.Name, reasons, found.Static)
					}
				}
				if len(reasons) > 0 {
					if len(reasons) != 1 || reasons[0] != ReasonBindConflict {
						t.Errorf("reasons = %v, want %q", reasons, ReasonBindConflict)
					}
					mu.Lock()
					rejected++
					mu.Unlock()
					continue
				}
				if kept != nil {
					continue
				}
				assumed, _, err := e.binder.Assume(pod, "node1", found)
				if err != nil {
					if !errors.Is(err, ErrConflict) {
						t.Errorf("Assume: %v", err)
					}
					mu.Lock()
					rejected++
					mu.Unlock()
					continue
				}
				pv := assumed.Static[0].PV.Name
				mu.Lock()
				if other, ok := holder[pv]; ok {
					t.Errorf("%s assumed for %s and %s", pv, other, claim)
				}
				holder[pv] = claim
				reserved++
				mu.Unlock()
				if (i+r)%3 == 0 {
					kept = assumed // keep it a while
					continue
				}
				mu.Lock()
				delete(holder, pv)
				mu.Unlock()
				e.binder.Revert(assumed)
			}
			if kept != nil {
				mu.Lock()
				delete(holder, kept.Static[0].PV.Name)
				mu.Unlock()
				e.binder.Revert(kept)
			}
		}()
	}
	wg.Wait()
	if reserved == 0 || reserved+rejected < pods {
		t.Errorf("%d reservations and %d rejections over %d pods", reserved, rejected, pods)
	}
	if n := e.caches.pvs.assumedCount(); n != 0 {
		t.Errorf("%d PVs still assumed after every pod reverted", n)
	}
	for i := range pvs {
		pv, err := e.caches.pvs.Get(fmt.Sprintf("pv-%d", i))
		if err != nil || pv.Spec.ClaimRef != nil {
			t.Errorf("pv-%d after the hammer: %v, claimRef %v", i, err, claimRefOf(pv))
		}
	}
}

func claimRefOf(pv *v1.PersistentVolume) any {
	if pv == nil {
		return nil
	}
	return pv.Spec.ClaimRef
}
