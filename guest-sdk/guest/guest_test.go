package guest

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/wasmsched/wasmsched/abi"
)

func reset() { in, out, lastErr = nil, nil, "" }

func TestBuffer(t *testing.T) {
	reset()
	b := Buffer(0)
	if len(b) < minBuffer {
		t.Fatalf("Buffer(0) = %d bytes, want at least %d", len(b), minBuffer)
	}
	if b2 := Buffer(minBuffer); &b2[0] != &b[0] {
		t.Error("Buffer moved for a size it already had")
	}
	big := Buffer(minBuffer + 1)
	if len(big) < minBuffer+1 || &big[0] == &b[0] {
		t.Errorf("Buffer(%d) = %d bytes at the old address, want a larger new buffer", minBuffer+1, len(big))
	}
	if len(big) < minBuffer+minBuffer/2 {
		t.Errorf("Buffer grew to %d bytes, want growth by half at least", len(big))
	}
	if again := Buffer(10); &again[0] != &big[0] {
		t.Error("Buffer moved when asked for a smaller size")
	}
	for _, n := range []int{-1, maxBuffer + 1} {
		if got := Buffer(n); got != nil {
			t.Errorf("Buffer(%d) = %d bytes, want nil", n, len(got))
		}
	}
}

func TestInput(t *testing.T) {
	reset()
	b := Buffer(16)
	copy(b, "hello")
	if got := string(Input(5)); got != "hello" {
		t.Errorf("Input(5) = %q, want %q", got, "hello")
	}
	if got := Input(5); cap(got) != 5 {
		t.Errorf("cap(Input(5)) = %d, want 5 (appending must not overwrite the buffer)", cap(got))
	}
	for _, n := range []int{-1, len(b) + 1} {
		if got := Input(n); got != nil {
			t.Errorf("Input(%d) = %d bytes, want nil", n, len(got))
		}
	}
}

func TestOutputReusesBuffer(t *testing.T) {
	reset()
	r := Output(append(OutputBuffer(), "first output"...))
	if _, n, _, ok := r.Unpack(); !ok || n != uint32(len("first output")) {
		t.Errorf("Output = %#x, want a result of length %d", int64(r), len("first output"))
	}
	first := LastOutput()
	Output(append(OutputBuffer(), "second"...))
	if got := string(LastOutput()); got != "second" {
		t.Errorf("LastOutput = %q, want %q", got, "second")
	}
	if &LastOutput()[0] != &first[0] {
		t.Error("the second output did not reuse the first one's array")
	}
	allocs := testing.AllocsPerRun(100, func() {
		Output(append(OutputBuffer(), "second"...))
	})
	if allocs != 0 {
		t.Errorf("steady-state output allocates %v times, want 0", allocs)
	}
}

func TestFail(t *testing.T) {
	reset()
	if r := Fail(abi.ErrDecode, "bad pod"); r != abi.ErrResult(abi.ErrDecode) {
		t.Errorf("Fail = %d, want %d", r, abi.ErrResult(abi.ErrDecode))
	}
	if got := LastError(); got != "bad pod" {
		t.Errorf("LastError = %q, want %q", got, "bad pod")
	}
	if r := FailBool(abi.ErrPolicy, "boom"); r != -int32(abi.ErrPolicy) {
		t.Errorf("FailBool = %d, want %d", r, -int32(abi.ErrPolicy))
	}
	if got := LastError(); got != "boom" {
		t.Errorf("LastError = %q, want %q", got, "boom")
	}
	if Bool(true) != 1 || Bool(false) != 0 {
		t.Errorf("Bool(true), Bool(false) = %d, %d, want 1, 0", Bool(true), Bool(false))
	}
}

func TestLastErrorIsCutOnARuneBoundary(t *testing.T) {
	reset()
	long := strings.Repeat("a", abi.MaxReasonLen-1) + "é and more"
	Fail(abi.ErrPolicy, long)
	got := LastError()
	if len(got) > abi.MaxReasonLen || !utf8.ValidString(got) || !strings.HasPrefix(long, got) {
		t.Errorf("LastError = %d bytes (valid UTF-8: %v), want a valid prefix of at most %d bytes", len(got), utf8.ValidString(got), abi.MaxReasonLen)
	}
	if len(got) != abi.MaxReasonLen-1 {
		t.Errorf("LastError = %d bytes, want %d (cut before the 2-byte rune)", len(got), abi.MaxReasonLen-1)
	}
}

func TestOutputBytes(t *testing.T) {
	reset()
	b := OutputBytes(10)
	if len(b) != 10 {
		t.Fatalf("len(OutputBytes(10)) = %d, want 10", len(b))
	}
	copy(b, "0123456789")
	Output(b)
	if got := OutputBytes(4); &got[0] != &b[0] || string(got) != "0123" {
		t.Errorf("OutputBytes(4) = %q, want the same array holding %q", got, "0123")
	}
	if allocs := testing.AllocsPerRun(100, func() { Output(OutputBytes(10)) }); allocs != 0 {
		t.Errorf("steady-state OutputBytes allocates %v times, want 0", allocs)
	}
}
