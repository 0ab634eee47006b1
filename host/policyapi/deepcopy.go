package policyapi

import (
	"maps"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// DeepCopy copies p, sharing nothing with it.
func (p *SchedulingPolicy) DeepCopy() *SchedulingPolicy {
	if p == nil {
		return nil
	}
	out := new(SchedulingPolicy)
	p.DeepCopyInto(out)
	return out
}

// DeepCopyInto copies p into out.
func (p *SchedulingPolicy) DeepCopyInto(out *SchedulingPolicy) {
	*out = *p
	p.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	p.Spec.DeepCopyInto(&out.Spec)
	p.Status.DeepCopyInto(&out.Status)
}

// DeepCopyInto copies s into out.
func (s *Spec) DeepCopyInto(out *Spec) {
	*out = *s
	if s.Module.Inline != nil {
		out.Module.Inline = append([]byte(nil), s.Module.Inline...)
	}
	if s.Module.ConfigMapRef != nil {
		ref := *s.Module.ConfigMapRef
		out.Module.ConfigMapRef = &ref
	}
	if s.Sandbox != nil {
		sb := Sandbox{}
		if s.Sandbox.MemoryPages != nil {
			n := *s.Sandbox.MemoryPages
			sb.MemoryPages = &n
		}
		if s.Sandbox.Deadline != nil {
			d := *s.Sandbox.Deadline
			sb.Deadline = &d
		}
		out.Sandbox = &sb
	}
	if s.Shadow != nil {
		sh := *s.Shadow
		out.Shadow = &sh
	}
}

// DeepCopyInto copies s into out.
func (s *Status) DeepCopyInto(out *Status) {
	*out = *s
	if s.Conditions != nil {
		out.Conditions = make([]metav1.Condition, len(s.Conditions))
		for i := range s.Conditions {
			s.Conditions[i].DeepCopyInto(&out.Conditions[i])
		}
	}
	if s.Replicas != nil {
		out.Replicas = make([]ReplicaStatus, len(s.Replicas))
		for i := range s.Replicas {
			out.Replicas[i] = s.Replicas[i]
			s.Replicas[i].LastUpdateTime.DeepCopyInto(&out.Replicas[i].LastUpdateTime)
			if sh := s.Replicas[i].Shadow; sh != nil {
				out.Replicas[i].Shadow = sh.DeepCopy()
			}
		}
	}
}

// DeepCopy copies s, sharing nothing with it.
func (s *ShadowStatus) DeepCopy() *ShadowStatus {
	out := *s
	s.Since.DeepCopyInto(&out.Since)
	out.Kinds = maps.Clone(s.Kinds)
	if s.Samples != nil {
		out.Samples = make([]ShadowSample, len(s.Samples))
		for i := range s.Samples {
			out.Samples[i] = s.Samples[i]
			s.Samples[i].Time.DeepCopyInto(&out.Samples[i].Time)
		}
	}
	return &out
}
