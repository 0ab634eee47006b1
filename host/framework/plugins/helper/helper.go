// Package helper holds what several plugins compute the same way, as
// upstream's pkg/scheduler/framework/plugins/helper: the broken-linear
// shape scores of RequestedToCapacityRatio and VolumeBinding, and the
// taint check that TaintToleration's filter and PodTopologySpread's
// nodeTaintsPolicy share. A plugin package may import it; it imports no
// plugin.
package helper

import (
	"fmt"

	"github.com/go-logr/logr"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	kschedv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/wasmsched/wasmsched/host/framework"
)

// MaxCustomPriorityScore is upstream's config.MaxCustomPriorityScore: the
// top of a shape's scores in a configuration, scaled to
// framework.MaxNodeScore by Shape.
const MaxCustomPriorityScore = 10

// ShapePoint is a point of a utilization shape, its score already scaled
// from 0-MaxCustomPriorityScore to 0-framework.MaxNodeScore.
type ShapePoint struct{ Utilization, Score int64 }

// Shape is a configured shape with its scores scaled.
func Shape(points []kschedv1.UtilizationShapePoint) []ShapePoint {
	out := make([]ShapePoint, len(points))
	for i, p := range points {
		out[i] = ShapePoint{int64(p.Utilization), int64(p.Score) * (framework.MaxNodeScore / MaxCustomPriorityScore)}
	}
	return out
}

// BrokenLinear is upstream's helper.BuildBrokenLinearFunction: the shape's
// first score below its first point, its last above its last, linear (in
// integers, truncated) between.
func BrokenLinear(shape []ShapePoint, p int64) int64 {
	for i := range shape {
		if p <= shape[i].Utilization {
			if i == 0 {
				return shape[0].Score
			}
			a, b := shape[i-1], shape[i]
			return a.Score + (b.Score-a.Score)*(p-a.Utilization)/(b.Utilization-a.Utilization)
		}
	}
	return shape[len(shape)-1].Score
}

// ValidateShape is upstream's validateFunctionShape.
func ValidateShape(shape []kschedv1.UtilizationShapePoint, path *field.Path) field.ErrorList {
	if len(shape) == 0 {
		return field.ErrorList{field.Required(path, "at least one point must be specified")}
	}
	var errs field.ErrorList
	for i := 1; i < len(shape); i++ {
		if shape[i-1].Utilization >= shape[i].Utilization {
			errs = append(errs, field.Invalid(path.Index(i).Child("utilization"), shape[i].Utilization, "values must be sorted in increasing order"))
			break
		}
	}
	for i, p := range shape {
		if p.Utilization < 0 || p.Utilization > 100 {
			errs = append(errs, field.Invalid(path.Index(i).Child("utilization"), p.Utilization, "not in valid range [0, 100]"))
		}
		if p.Score < 0 || p.Score > MaxCustomPriorityScore {
			errs = append(errs, field.Invalid(path.Index(i).Child("score"), p.Score, fmt.Sprintf("not in valid range [0, %d]", MaxCustomPriorityScore)))
		}
	}
	return errs
}

// discard is the logger the component-helpers toleration checks log parse
// errors of Lt/Gt tolerations to; those operators are off, so it never logs.
var discard = logr.Discard()

// ToleratesScheduleTaints reports whether tolerations tolerate every
// NoSchedule and NoExecute taint of taints (upstream's
// FindMatchingUntoleratedTaint with DoNotScheduleTaintsFilterFunc, which
// copies the filtered taints on every call; this loops over them in place
// with the same toleration check).
func ToleratesScheduleTaints(tolerations []v1.Toleration, taints []v1.Taint) bool {
	// Most nodes have no taint: this check is inlined into the filters, the
	// loop is not.
	return len(taints) == 0 || toleratesScheduleTaints(tolerations, taints)
}

func toleratesScheduleTaints(tolerations []v1.Toleration, taints []v1.Taint) bool {
	for i := range taints {
		t := &taints[i]
		if t.Effect != v1.TaintEffectNoSchedule && t.Effect != v1.TaintEffectNoExecute {
			continue
		}
		if !corev1helpers.TolerationsTolerateTaint(discard, tolerations, t, false) {
			return false
		}
	}
	return true
}
