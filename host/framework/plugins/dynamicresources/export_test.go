package dynamicresources

import (
	"github.com/wasmsched/wasmsched/host/framework"
)

// What the external tests (dynamicresources_profile_test.go, which build
// the in-tree registry's profile) need of the package's.

// ExtGPU is the extended resource ExtClass maps.
const ExtGPU = extGPU

var (
	ExtClass    = extClass
	ClassLister = classLister
)

// NewClaimCounter is a ClaimRecorder counting creations.
func NewClaimCounter() framework.ClaimRecorder { return &claimCounter{counted: map[bool]int{}} }

// ClaimsOf is the ClaimRecorder of pl, a DynamicResources plugin; ok is
// false for another plugin type.
func ClaimsOf(pl framework.Plugin) (claims framework.ClaimRecorder, ok bool) {
	dr, ok := pl.(*dynamicResources)
	if !ok {
		return nil, false
	}
	return dr.claims, true
}
