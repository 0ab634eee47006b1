package main

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"
)

func TestProgressLinesFollowTheClock(t *testing.T) {
	p := progress{what: "kube-apiserver v1.37.1", typical: "8-10 min", next: "etcd, KWOK"}
	start := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	ticks := make(chan time.Time)
	done := make(chan struct{})
	var out bytes.Buffer
	finished := make(chan struct{})
	go func() { p.watch(&out, start, ticks, done); close(finished) }()
	for _, at := range []time.Duration{30 * time.Second, time.Minute, 3*time.Minute + 30*time.Second + 400*time.Millisecond} {
		ticks <- start.Add(at)
	}
	close(done)
	<-finished
	want := []string{
		"cluster.sh: building kube-apiserver v1.37.1: 30s elapsed (a cold build usually takes 8-10 min); then etcd, KWOK",
		"cluster.sh: building kube-apiserver v1.37.1: 1m0s elapsed (a cold build usually takes 8-10 min); then etcd, KWOK",
		"cluster.sh: building kube-apiserver v1.37.1: 3m30s elapsed (a cold build usually takes 8-10 min); then etcd, KWOK",
	}
	if got := strings.Split(strings.TrimSpace(out.String()), "\n"); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("progress lines:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestProgressLineOfTheLastStepWithoutTypicalTime(t *testing.T) {
	got := progress{what: "kwok v0.8.0"}.line(90 * time.Second)
	if want := "cluster.sh: building kwok v0.8.0: 1m30s elapsed"; got != want {
		t.Errorf("line = %q, want %q", got, want)
	}
}

type fakeResources struct {
	disk map[string][2]uint64 // dir -> {free bytes, filesystem id}
	mem  uint64
}

func (f fakeResources) free(dir string) (uint64, uint64, error) {
	d, ok := f.disk[dir]
	if !ok {
		return 0, 0, errors.New("no such directory")
	}
	return d[0], d[1], nil
}

func (f fakeResources) memAvailable() (uint64, error) { return f.mem, nil }

func TestCheckResources(t *testing.T) {
	const gib = 1 << 30
	dir := t.TempDir() // existingParent keeps directories that exist
	other := t.TempDir()
	for _, tc := range []struct {
		name     string
		r        fakeResources
		dirs     []string
		wantErrs []string // substrings; none means the check passes
	}{{
		name: "enough of both",
		r:    fakeResources{disk: map[string][2]uint64{dir: {20 * gib, 1}}, mem: 8 * gib},
		dirs: []string{dir},
	}, {
		name: "too little disk, reported with the numbers",
		r:    fakeResources{disk: map[string][2]uint64{dir: {3 * gib, 1}}, mem: 8 * gib},
		dirs: []string{dir},
		wantErrs: []string{"not enough disk space", "needs about 9.0 GiB", "there is 3.0 GiB free on the filesystem of " + dir,
			"XDG_CACHE_HOME, GOCACHE and GOMODCACHE"},
	}, {
		name:     "one filesystem holding two caches counts once",
		r:        fakeResources{disk: map[string][2]uint64{dir: {5 * gib, 7}, other: {5 * gib, 7}}, mem: 8 * gib},
		dirs:     []string{dir, other},
		wantErrs: []string{"there is 5.0 GiB free on the filesystem of " + dir},
	}, {
		name: "two filesystems add up",
		r:    fakeResources{disk: map[string][2]uint64{dir: {5 * gib, 7}, other: {5 * gib, 8}}, mem: 8 * gib},
		dirs: []string{dir, other},
	}, {
		name:     "too little memory",
		r:        fakeResources{disk: map[string][2]uint64{dir: {20 * gib, 1}}, mem: 1536 << 20},
		dirs:     []string{dir},
		wantErrs: []string{"not enough memory", "needs about 2.0 GiB", "1.5 GiB is available"},
	}, {
		name:     "a cache not created yet is measured on its parent",
		r:        fakeResources{disk: map[string][2]uint64{dir: {1 * gib, 1}}, mem: 8 * gib},
		dirs:     []string{dir + "/wasmsched/cluster"},
		wantErrs: []string{"filesystem of " + dir + ";"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			err := checkResources(tc.r, tc.dirs, 9*gib, 2*gib)
			if len(tc.wantErrs) == 0 {
				if err != nil {
					t.Fatalf("checkResources = %v, want nil", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("checkResources = nil, want an error containing %q", tc.wantErrs)
			}
			for _, w := range tc.wantErrs {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("checkResources = %q, want it to contain %q", err, w)
				}
			}
		})
	}
}

func TestHostResourcesReadsThisMachine(t *testing.T) {
	b, _, err := hostResources{}.free(t.TempDir())
	if err != nil || b == 0 {
		t.Errorf("free(tempdir) = %d, %v; want a positive byte count", b, err)
	}
	m, err := hostResources{}.memAvailable()
	if err != nil || m == 0 {
		t.Errorf("memAvailable = %d, %v; want a positive byte count", m, err)
	}
}

func TestSizeFlag(t *testing.T) {
	for in, want := range map[string]uint64{"9GiB": 9 << 30, "512MiB": 512 << 20, "4096": 4096} {
		var s sizeFlag
		if err := s.Set(in); err != nil || uint64(s) != want {
			t.Errorf("Set(%q) = %d, %v; want %d", in, s, err, want)
		}
	}
	var s sizeFlag
	if err := s.Set("9GB"); err == nil || !strings.Contains(err.Error(), "GiB, MiB or KiB") {
		t.Errorf("Set(9GB) = %v, want an error naming the accepted suffixes", err)
	}
}

func TestRunReportsTheStepAndPassesItsExitCode(t *testing.T) {
	var out bytes.Buffer
	if code := run(t.Context(), []string{"run", "-what", "thing v1", "--", "true"}, &out); code != 0 {
		t.Fatalf("run true = %d, output %q", code, out.String())
	}
	if !strings.Contains(out.String(), "cluster.sh: built thing v1 in ") {
		t.Errorf("output %q, want the step's total time", out.String())
	}
	out.Reset()
	if code := run(t.Context(), []string{"run", "-what", "thing v1", "--", "sh", "-c", "exit 3"}, &out); code != 3 {
		t.Errorf("run (exit 3) = %d, want 3; output %q", code, out.String())
	}
	if code := run(t.Context(), []string{"run", "--", "true"}, &out); code != 1 || !strings.Contains(out.String(), "-what") {
		t.Errorf("run without -what = %d, output %q; want 1 and a usage error", code, out.String())
	}
}
