package metrics

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/wasmsched/wasmsched/abi"
	"github.com/wasmsched/wasmsched/host/policy/shadow"
)

// Shadow counts the decisions of the shadow policies (SchedulingPolicies
// with spec.mode Shadow).
type Shadow struct {
	decisions *prometheus.CounterVec
}

// NewShadow creates and registers the shadow collectors.
func NewShadow(reg prometheus.Registerer) (*Shadow, error) {
	d := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "wasmsched_shadow_decisions_total",
		Help: "Decisions evaluated by a shadow policy beside the one serving its slot, by profile, slot, policy (the SchedulingPolicy) and result (agree, disagree, error, dropped).",
	}, []string{"profile", "slot", "policy", "result"})
	if err := reg.Register(d); err != nil {
		return nil, err
	}
	return &Shadow{decisions: d}, nil
}

// For is the shadow.Recorder of one profile.
func (s *Shadow) For(profile string) shadow.Recorder { return shadowProfile{s, profile} }

type shadowProfile struct {
	s       *Shadow
	profile string
}

func (p shadowProfile) ShadowDecision(slot abi.Slot, policy, result string, n int) {
	p.s.decisions.WithLabelValues(p.profile, slot.String(), policy, result).Add(float64(n))
}
