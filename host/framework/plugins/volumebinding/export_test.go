package volumebinding

import (
	"github.com/wasmsched/wasmsched/host/framework"
	"github.com/wasmsched/wasmsched/host/framework/plugins/helper"
)

// ShapeOf is the scaled shape of pl, a VolumeBinding plugin, for the
// external tests (volumebinding_profile_test.go); ok is false for another
// plugin type.
func ShapeOf(pl framework.Plugin) (shape []helper.ShapePoint, ok bool) {
	vb, ok := pl.(*volumeBinding)
	if !ok {
		return nil, false
	}
	return vb.shape, true
}
