// Package defaultpreemption is the registry row of upstream's
// DefaultPreemption: its extension points and args. Preemption itself is
// host/preempt, run by the cycle with these args (framework.Built's
// Preemption), since wasmsched's preemption also serves pod groups and
// the victim-order policy slot.
package defaultpreemption

import (
	"k8s.io/apimachinery/pkg/util/validation/field"
	kschedv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/wasmsched/wasmsched/abi"
	"github.com/wasmsched/wasmsched/host/framework"
)

// Row is DefaultPreemption's registry row: no factory (host/preempt serves
// it), its preEnqueue holding a pod whose victims are being evicted.
func Row() framework.Row {
	return framework.Row{Name: abi.PluginDefaultPreemption, Points: framework.PointsOf(framework.PointPreEnqueue, framework.PointPostFilter),
		Default: true, Args: args}
}

// PreemptionArgs is DefaultPreemption's Row.Args: a PreemptionArgs.
// args is the row's Args: a framework.PreemptionArgs, upstream's
// DefaultPreemptionArgs defaulted and validated.
func args(pc *kschedv1.PluginConfig, path *field.Path) (any, error) {
	var args kschedv1.DefaultPreemptionArgs
	if err := framework.DecodeArgs(pc, path, &args); err != nil {
		return nil, err
	}
	setDefaultsPreemption(&args)
	if err := validatePreemption(path, &args); err != nil {
		return nil, err
	}
	return framework.PreemptionArgs{MinCandidateNodesPercentage: *args.MinCandidateNodesPercentage, MinCandidateNodesAbsolute: *args.MinCandidateNodesAbsolute}, nil
}

func setDefaultsPreemption(a *kschedv1.DefaultPreemptionArgs) {
	if a.MinCandidateNodesPercentage == nil {
		v := int32(framework.DefaultMinCandidateNodesPercentage)
		a.MinCandidateNodesPercentage = &v
	}
	if a.MinCandidateNodesAbsolute == nil {
		v := int32(framework.DefaultMinCandidateNodesAbsolute)
		a.MinCandidateNodesAbsolute = &v
	}
}

func validatePreemption(path *field.Path, a *kschedv1.DefaultPreemptionArgs) error {
	var errs field.ErrorList
	pct, abs := *a.MinCandidateNodesPercentage, *a.MinCandidateNodesAbsolute
	pctPath, absPath := path.Child("minCandidateNodesPercentage"), path.Child("minCandidateNodesAbsolute")
	if pct < 0 || pct > 100 {
		errs = append(errs, field.Invalid(pctPath, pct, "not in valid range [0, 100]"))
	}
	if abs < 0 {
		errs = append(errs, field.Invalid(absPath, abs, "not in valid range [0, inf)"))
	}
	if pct == 0 && abs == 0 {
		errs = append(errs,
			field.Invalid(pctPath, pct, "cannot be zero at the same time as minCandidateNodesAbsolute"),
			field.Invalid(absPath, abs, "cannot be zero at the same time as minCandidateNodesPercentage"))
	}
	return errs.ToAggregate()
}
