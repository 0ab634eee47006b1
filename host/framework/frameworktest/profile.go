package frameworktest

import (
	"sync"

	"github.com/wasmsched/wasmsched/host/framework"
)

// MustProfile is framework.NewProfile of entries, panicking on an error
// (the plugins' tests build single-plugin profiles with it).
func MustProfile(entries ...framework.Entry) *framework.Profile {
	p, err := framework.NewProfile(entries...)
	if err != nil {
		panic(err)
	}
	return p
}

// handles are the tests' Handles by informer (HandleFor).
var handles sync.Map

// HandleFor is the Handle of l's informers: the plugins a test builds over
// the same Listers share one Handle, so its DRA state and volume caches,
// as a scheduler's profiles do. Listers without informers get a Handle of
// their own.
func HandleFor(l framework.Listers) framework.Handle {
	var key any
	switch {
	case l.ClaimInformer != nil:
		key = l.ClaimInformer
	case l.PVInformer != nil:
		key = l.PVInformer
	default:
		return framework.NewHandle(framework.HandleOptions{Listers: l})
	}
	h, _ := handles.LoadOrStore(key, framework.NewHandle(framework.HandleOptions{Listers: l}))
	return h.(framework.Handle)
}
