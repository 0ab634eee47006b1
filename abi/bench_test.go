package abi_test

import (
	"testing"

	"github.com/wasmsched/wasmsched/abi"
	"github.com/wasmsched/wasmsched/abi/abitest"
)

// readPod is what a sort policy reads of a pod on the hot path.
func readPod(b []byte) (int32, string, string, int64) {
	v, err := abi.ReadPod(b)
	if err != nil {
		panic(err)
	}
	team, _ := v.Labels().Get("team")
	return v.Priority(), v.Name(), team, v.Requests().Get("memory")
}

// TestHotPathAllocs pins what the benchmarks show: appending into a reused
// buffer and reading through a view do not allocate.
func TestHotPathAllocs(t *testing.T) {
	p := abitest.FullPod()
	buf := abi.AppendPod(nil, &p)
	if n := testing.AllocsPerRun(100, func() { buf = abi.AppendPod(buf[:0], &p) }); n != 0 {
		t.Errorf("AppendPod into a reused buffer: %v allocs", n)
	}
	if n := testing.AllocsPerRun(100, func() { readPod(buf) }); n != 0 {
		t.Errorf("PodView reads: %v allocs", n)
	}
	var dst abi.Pod
	v, _ := abi.ReadPod(buf)
	_ = v.Decode(&dst)
	// Decode copies strings (it must), but reuses dst's top-level slices.
	// The bound is 60 for the minor-2 fields plus one per non-empty string
	// of the minor-3 ones (five in the namespace labels, the owner kind),
	// plus 42 for the minor-4 terms and constraints, whose nested lists
	// are new slices (as RequiredAffinity's are).
	if n := testing.AllocsPerRun(100, func() { _ = v.Decode(&dst) }); n > 108 {
		t.Errorf("Decode into a used Pod: %v allocs", n)
	}
}

func BenchmarkAppendPod(b *testing.B) {
	p := abitest.FullPod()
	buf := abi.AppendPod(nil, &p)
	b.SetBytes(int64(len(buf)))
	b.ReportAllocs()
	for b.Loop() {
		buf = abi.AppendPod(buf[:0], &p)
	}
}

func BenchmarkPodViewRead(b *testing.B) {
	p := abitest.FullPod()
	buf := abi.AppendPod(nil, &p)
	b.ReportAllocs()
	for b.Loop() {
		prio, name, team, mem := readPod(buf)
		if prio != p.Priority || name != p.Name || team != "ml" || mem != 8<<30 {
			b.Fatal("wrong read")
		}
	}
}
