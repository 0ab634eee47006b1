package defaultpreemption

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	kschedv1 "k8s.io/kube-scheduler/config/v1"
)

// TestArgsDefaults checks upstream's v1 defaulting of the args
// (defaults_test.go's DefaultPreemption cases).
func TestArgsDefaults(t *testing.T) {
	i32 := func(v int32) *int32 { return &v }
	t.Run("DefaultPreemption", func(t *testing.T) {
		for _, tc := range []struct {
			in, want kschedv1.DefaultPreemptionArgs
		}{
			{kschedv1.DefaultPreemptionArgs{}, kschedv1.DefaultPreemptionArgs{MinCandidateNodesPercentage: i32(10), MinCandidateNodesAbsolute: i32(100)}},
			{kschedv1.DefaultPreemptionArgs{MinCandidateNodesPercentage: i32(50)}, kschedv1.DefaultPreemptionArgs{MinCandidateNodesPercentage: i32(50), MinCandidateNodesAbsolute: i32(100)}},
		} {
			setDefaultsPreemption(&tc.in)
			if diff := cmp.Diff(tc.want, tc.in); diff != "" {
				t.Errorf("(-want, +got):\n%s", diff)
			}
		}
	})
}
