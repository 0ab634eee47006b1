package cycle

import (
	"context"
	"errors"
	"sync"

	"k8s.io/apimachinery/pkg/types"
)

// PreBindings are the pods whose PreBind is under way (upstream's
// podsInPreBind): assumed on a node, not bound, possibly waiting long for a
// provisioner or a device. Preemption that picks such a pod as a victim
// cancels its binding instead of deleting it, so that the pod goes back
// to the queue rather than being lost. One per process, shared by the
// profiles' schedulers (WithPreBindings), as a victim may be another
// profile's pod.
type PreBindings struct {
	mu   sync.Mutex
	pods map[types.UID]*preBinding
}

// NewPreBindings returns an empty registry.
func NewPreBindings() *PreBindings {
	return &PreBindings{pods: map[types.UID]*preBinding{}}
}

// preBinding is one pod's PreBind: cancel ends its context; once the pod
// is prebound (its PreBind done, Bind next) it can no longer be canceled.
type preBinding struct {
	mu                 sync.Mutex
	cancel             context.CancelCauseFunc
	prebound, canceled bool
}

// start registers uid's PreBind and returns the context it runs in; done
// must be called when the binding ends, whatever its outcome.
func (r *PreBindings) start(ctx context.Context, uid types.UID) (context.Context, *preBinding, func()) {
	ctx, cancel := context.WithCancelCause(ctx)
	b := &preBinding{cancel: cancel}
	r.mu.Lock()
	r.pods[uid] = b
	r.mu.Unlock()
	return ctx, b, func() {
		r.mu.Lock()
		if r.pods[uid] == b {
			delete(r.pods, uid)
		}
		r.mu.Unlock()
		cancel(nil)
	}
}

// cancel cancels uid's PreBind with msg as the cause and reports whether
// it did: false when the pod is not in its PreBind, or already prebound
// (it is then bound or about to be: the caller deletes it instead).
func (r *PreBindings) cancel(uid types.UID, msg string) bool {
	r.mu.Lock()
	b := r.pods[uid]
	r.mu.Unlock()
	if b == nil {
		return false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.prebound {
		return false
	}
	if !b.canceled {
		b.cancel(errors.New(msg))
		b.canceled = true
	}
	return true
}

// markPrebound ends the time the binding may be canceled, and reports
// false if it was canceled before.
func (b *preBinding) markPrebound() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.canceled {
		return false
	}
	b.prebound = true
	return true
}
