package framework

import (
	v1 "k8s.io/api/core/v1"
)

// unsupportedPlugin stands in the profile for an upstream plugin not
// written yet, and keeps the rule "never place a pod while ignoring a
// constraint it carries": a pod with a hard constraint that only such a
// plugin checks is refused before any node is looked at (refuseUnsupported).
// It implements no extension point; the profile runs the placeholders
// itself, first. Writing the plugin replaces its placeholder in the profile.
// Every plugin of the default profile is written now (DynamicResources was
// the last): the mechanism stays for the next upstream plugin.
type unsupportedPlugin struct {
	name   string
	checks []unsupportedCheck
}

// unsupportedCheck is one constraint a placeholder refuses: the reason and
// whether a pod carries it.
type unsupportedCheck struct {
	reason  string
	carries func(*v1.Pod) bool
}

func (u *unsupportedPlugin) Name() string { return u.name }

// refuseUnsupported runs the profile's placeholders: a pod carrying a
// constraint one of them stands for is rejected UnschedulableAndUnresolvable
// (preemption cannot help), with one reason per placeholder, in profile
// order, the first naming the status's plugin. It returns nil for every
// other pod, at the cost of a few nil checks.
func (p *Profile) refuseUnsupported(pod *v1.Pod) *Status {
	var st *Status
	for _, u := range p.unsupported {
		for _, c := range u.checks {
			if !c.carries(pod) {
				continue
			}
			if st == nil {
				st = &Status{Code: UnschedulableAndUnresolvable, Plugin: u.name}
			}
			st.Reasons = append(st.Reasons, c.reason)
		}
	}
	return st
}
