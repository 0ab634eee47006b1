package wasm

import (
	"errors"
	"fmt"

	"github.com/wasmsched/wasmsched/abi"
)

// ErrorKind classifies a failed call, so that callers can fall back and count
// fallbacks by reason.
type ErrorKind uint8

const (
	// KindTrap: the guest trapped (unreachable, out-of-bounds access, stack
	// overflow, failed memory growth turned into a panic...) or its instance
	// was closed under it. The instance is broken.
	KindTrap ErrorKind = iota + 1
	// KindDeadline: the call ran past the module's deadline and the watchdog
	// interrupted it. The instance is broken.
	KindDeadline
	// KindGuestError: the guest returned a negative result (-[abi.ErrCode]),
	// or does not export the function called. The instance stays usable.
	KindGuestError
	// KindBadOutput: the guest returned a pointer or length outside its memory,
	// or a value the contract does not allow. The instance is broken.
	KindBadOutput
	// KindExit: the guest called proc_exit. The instance is broken.
	KindExit
)

func (k ErrorKind) String() string {
	switch k {
	case KindTrap:
		return "trap"
	case KindDeadline:
		return "deadline"
	case KindGuestError:
		return "guest_error"
	case KindBadOutput:
		return "bad_output"
	case KindExit:
		return "exit"
	}
	return "unknown"
}

// Sentinels matched by errors.Is against a *CallError of the same kind:
// errors.Is(err, wasm.ErrDeadline).
var (
	ErrTrap       = errors.New("wasm: guest trapped")
	ErrDeadline   = errors.New("wasm: deadline exceeded")
	ErrGuestError = errors.New("wasm: guest returned an error")
	ErrBadOutput  = errors.New("wasm: guest returned an invalid result")
	ErrExit       = errors.New("wasm: guest exited")
)

func (k ErrorKind) sentinel() error {
	switch k {
	case KindTrap:
		return ErrTrap
	case KindDeadline:
		return ErrDeadline
	case KindGuestError:
		return ErrGuestError
	case KindBadOutput:
		return ErrBadOutput
	case KindExit:
		return ErrExit
	}
	return nil
}

// CallError is the error of a failed call into a guest.
type CallError struct {
	Module   string      // module name given to Load
	Function string      // export called
	Kind     ErrorKind   // why it failed
	Code     abi.ErrCode // guest's code when Kind is KindGuestError
	Err      error       // detail: wazero's error, the guest's message...
}

func (e *CallError) Error() string {
	msg := fmt.Sprintf("module %q: %s: %s", e.Module, e.Function, e.Kind)
	if e.Kind == KindGuestError {
		msg += fmt.Sprintf(" %d (%s)", int32(e.Code), e.Code)
	}
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

func (e *CallError) Unwrap() error { return e.Err }

// Is reports whether target is the sentinel of e's kind.
func (e *CallError) Is(target error) bool {
	return target != nil && target == e.Kind.sentinel()
}

// KindOf returns the kind of a *CallError in err's chain, or 0.
func KindOf(err error) ErrorKind {
	var ce *CallError
	if errors.As(err, &ce) {
		return ce.Kind
	}
	return 0
}

// GuestMessage is the detail of a KindGuestError: the message the guest
// reported through wasmsched_last_error.
type GuestMessage string

func (m GuestMessage) Error() string { return string(m) }

// Sentinels matched by errors.Is against an error of [Runtime.Load], for a
// caller that reports why a module was refused (a SchedulingPolicy's status
// reason). The error's text is unchanged by them.
var (
	// ErrForbiddenImport: the module imports something the sandbox does not
	// provide (a filesystem, network or environment function, or anything
	// outside the allow-listed WASI functions).
	ErrForbiddenImport = errors.New("wasm: forbidden import")
	// ErrABIMismatch: the module speaks another major ABI version, lacks a
	// required export, or exports a contract function with another signature.
	ErrABIMismatch = errors.New("wasm: ABI mismatch")
	// ErrTooLarge: the module is above instrument.MaxModuleSize, or asks for
	// more memory than the limit.
	ErrTooLarge = errors.New("wasm: module too large")
)

// loadError is a refused Load classified by one of the sentinels above; it
// reads as the error it wraps.
type loadError struct {
	kind error
	err  error
}

func (e *loadError) Error() string        { return e.err.Error() }
func (e *loadError) Unwrap() error        { return e.err }
func (e *loadError) Is(target error) bool { return target == e.kind }

func classify(kind, err error) error { return &loadError{kind: kind, err: err} }
