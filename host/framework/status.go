package framework

import (
	"errors"
	"strings"
)

// Code is the outcome of a filter, as upstream's framework.Code.
type Code int

// The codes a filter returns. Only the rejecting ones (Unschedulable,
// UnschedulableAndUnresolvable, Pending) count in a Diagnosis; Error aborts
// the search.
const (
	Success Code = iota
	// Error is an internal failure: the cycle fails with an error, not with a
	// FitError.
	Error
	// Unschedulable rejects a node that preemption could make fit.
	Unschedulable
	// UnschedulableAndUnresolvable rejects a node that preemption cannot
	// help: preemption skips it.
	UnschedulableAndUnresolvable
	// Pending rejects a node until something outside the cluster state the
	// plugins watch happens (upstream's Pending); none of the native filters
	// returns it, other filter slots may.
	Pending
	// Skip is a PreBindPreFlight's answer that its PreBind has nothing to
	// do for the pod (upstream's Skip); no other point returns it.
	Skip
)

var codeNames = [...]string{"Success", "Error", "Unschedulable", "UnschedulableAndUnresolvable", "Pending", "Skip"}

func (c Code) String() string {
	if c >= 0 && int(c) < len(codeNames) {
		return codeNames[c]
	}
	return "Unknown"
}

// Status is a filter's verdict on a node. A nil *Status is success.
type Status struct {
	Code Code
	// Plugin is the upstream name of the plugin that decided (abi.Plugin*).
	Plugin string
	// Reasons are the upstream texts the FitError message counts.
	Reasons []string
	// Err is set for Code Error.
	Err error
}

// IsSuccess reports whether s is nil or Success.
func (s *Status) IsSuccess() bool { return s == nil || s.Code == Success }

// IsRejected reports whether s rejects the node (upstream's IsRejected):
// Unschedulable, UnschedulableAndUnresolvable or Pending.
func (s *Status) IsRejected() bool {
	return s != nil && (s.Code == Unschedulable || s.Code == UnschedulableAndUnresolvable || s.Code == Pending)
}

// Message is the reasons joined by ", " (upstream's Status.Message), or the
// error's text for an Error without reasons.
func (s *Status) Message() string {
	if s == nil {
		return ""
	}
	if len(s.Reasons) == 0 && s.Err != nil {
		return s.Err.Error()
	}
	return strings.Join(s.Reasons, ", ")
}

// AsError is s as an error: its Err, or its message; nil for success.
func (s *Status) AsError() error {
	switch {
	case s.IsSuccess():
		return nil
	case s.Err != nil:
		return s.Err
	}
	return errors.New(s.Message())
}

// statusAbsent is upstream's default status of a node no filter looked at.
var statusAbsent = &Status{Code: UnschedulableAndUnresolvable}
