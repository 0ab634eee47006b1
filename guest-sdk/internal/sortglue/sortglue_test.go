package sortglue

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wasmsched/wasmsched/abi"
	"github.com/wasmsched/wasmsched/guest-sdk/guest"
)

func byPriority(a, b abi.PodView) bool { return a.Priority() > b.Priority() }

func priorityKey(p abi.PodView) abi.SortKey { return abi.SortKey{abi.Desc(int64(p.Priority())), 7} }

func isHigh(p abi.PodView) bool { return p.Priority() > 5 }

// put writes records into the input buffer as the host does.
func put(recs ...[]byte) []int32 {
	var all []byte
	var lens []int32
	for _, r := range recs {
		all = append(all, r...)
		lens = append(lens, int32(len(r)))
	}
	copy(guest.Buffer(len(all)), all)
	return lens
}

func pod(prio int32) []byte { return abi.AppendPod(nil, &abi.Pod{Name: "p", Priority: prio}) }

func TestLess(t *testing.T) {
	cases := []struct {
		name       string
		less       func(a, b abi.PodView) bool
		a, b       []byte
		lenA, lenB int32 // overrides when non-zero
		want       int32
	}{
		{name: "true", less: byPriority, a: pod(9), b: pod(1), want: 1},
		{name: "false", less: byPriority, a: pod(1), b: pod(9), want: 0},
		{name: "nothing registered", a: pod(1), b: pod(9), want: -int32(abi.ErrUnsupported)},
		{name: "pod A malformed", less: byPriority, a: []byte{1, 2, 3}, b: pod(9), want: -int32(abi.ErrDecode)},
		{name: "pod B malformed", less: byPriority, a: pod(1), b: pod(9)[:20], want: -int32(abi.ErrDecode)},
		{name: "negative length", less: byPriority, a: pod(1), b: pod(9), lenA: -1, want: -int32(abi.ErrDecode)},
		{name: "longer than the buffer", less: byPriority, a: pod(1), b: pod(9), lenB: 1 << 20, want: -int32(abi.ErrDecode)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			lens := put(c.a, c.b)
			if c.lenA != 0 {
				lens[0] = c.lenA
			}
			if c.lenB != 0 {
				lens[1] = c.lenB
			}
			if got := Less("test", c.less, lens[0], lens[1]); got != c.want {
				t.Errorf("Less = %d, want %d (last error %q)", got, c.want, guest.LastError())
			}
		})
	}
}

func TestKey(t *testing.T) {
	n := put(pod(3))[0]
	r := Key("test", priorityKey, n)
	if _, _, _, ok := r.Unpack(); !ok {
		t.Fatalf("Key = %d, want a result (last error %q)", r, guest.LastError())
	}
	got, err := abi.DecodeSortKey(guest.LastOutput())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(abi.SortKey{abi.Desc(3), 7}, got); diff != "" {
		t.Errorf("key (-want, +got):\n%s", diff)
	}
	if r := Key("test", nil, n); r != abi.ErrResult(abi.ErrUnsupported) {
		t.Errorf("Key without a key func = %d, want %d", r, abi.ErrResult(abi.ErrUnsupported))
	}
	if r := Key("test", priorityKey, 5); r != abi.ErrResult(abi.ErrDecode) {
		t.Errorf("Key of a truncated pod = %d, want %d", r, abi.ErrResult(abi.ErrDecode))
	}
	if allocs := testing.AllocsPerRun(100, func() { Key("test", priorityKey, n) }); allocs != 0 {
		t.Errorf("Key allocates %v times per call, want 0", allocs)
	}
}

func TestPred(t *testing.T) {
	for _, c := range []struct {
		prio int32
		want int32
	}{{9, 1}, {1, 0}} {
		n := put(pod(c.prio))[0]
		if got := Pred("test", isHigh, n); got != c.want {
			t.Errorf("Pred(priority %d) = %d, want %d", c.prio, got, c.want)
		}
	}
	if got := Pred("test", nil, 10); got != -int32(abi.ErrUnsupported) {
		t.Errorf("Pred without a func = %d, want %d", got, -int32(abi.ErrUnsupported))
	}
	if got := Pred("test", isHigh, 3); got != -int32(abi.ErrDecode) {
		t.Errorf("Pred of a truncated pod = %d, want %d", got, -int32(abi.ErrDecode))
	}
}

func TestLessDoesNotAllocate(t *testing.T) {
	lens := put(pod(9), pod(1))
	if allocs := testing.AllocsPerRun(100, func() { Less("test", byPriority, lens[0], lens[1]) }); allocs != 0 {
		t.Errorf("Less allocates %v times per call, want 0", allocs)
	}
}
