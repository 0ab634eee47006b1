package queuesort

import (
	"testing"

	"github.com/wasmsched/wasmsched/abi"
	"github.com/wasmsched/wasmsched/guest-sdk/internal/exportcheck"
)

func TestExportNames(t *testing.T) {
	s := abi.SlotQueueSort
	exportcheck.Check(t, ".", append(s.RequiredExports(), s.KeyExport())...)
}

func TestRegister(t *testing.T) {
	defer func() { registered = Policy{} }()
	less := func(a, b abi.PodView) bool { return a.Priority() > b.Priority() }
	Register(Policy{Less: less})
	if registered.Less == nil || registered.Key != nil {
		t.Errorf("after Register: Less set %v, Key set %v; want true, false", registered.Less != nil, registered.Key != nil)
	}
	defer func() {
		if recover() == nil {
			t.Error("Register without Less did not panic")
		}
	}()
	Register(Policy{})
}
