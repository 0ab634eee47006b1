package main

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// resources reads what the machine has; tests substitute their own numbers.
type resources interface {
	// free returns the bytes available to this user on dir's filesystem and
	// an identifier of that filesystem, so that two directories on one disk
	// are counted once.
	free(dir string) (bytes uint64, fsid uint64, err error)
	// memAvailable returns MemAvailable of /proc/meminfo, in bytes.
	memAvailable() (uint64, error)
}

// checkResources returns an error that names each shortfall with the numbers
// and what to do, or nil when the disks holding dirs have needDisk bytes free
// between them and the machine has needMem bytes of memory available.
func checkResources(r resources, dirs []string, needDisk, needMem uint64) error {
	var (
		total uint64
		seen  = map[uint64]bool{}
		where []string
		errs  []error
	)
	for _, d := range dirs {
		d = existingParent(d)
		b, id, err := r.free(d)
		if err != nil {
			return fmt.Errorf("check free disk space of %s: %w", d, err)
		}
		if seen[id] {
			continue
		}
		seen[id] = true
		total += b
		where = append(where, fmt.Sprintf("%s free on the filesystem of %s", human(b), d))
	}
	if total < needDisk {
		errs = append(errs, fmt.Errorf("not enough disk space for a cold build: it needs about %s (Go module and build caches, and the binaries), and there is %s; free some space, or point XDG_CACHE_HOME, GOCACHE and GOMODCACHE at a larger disk",
			human(needDisk), strings.Join(where, ", ")))
	}
	mem, err := r.memAvailable()
	if err != nil {
		return fmt.Errorf("check available memory: %w", err)
	}
	if mem < needMem {
		errs = append(errs, fmt.Errorf("not enough memory for a cold build: the Go compiler needs about %s at its peak, and %s is available; stop other programs or use a larger machine",
			human(needMem), human(mem)))
	}
	return errors.Join(errs...)
}

// existingParent returns dir, or its nearest ancestor that exists: the caches
// may not have been created yet.
func existingParent(dir string) string {
	for {
		if _, err := os.Stat(dir); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return dir
		}
		dir = parent
	}
}

type hostResources struct{}

func (hostResources) free(dir string) (uint64, uint64, error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return 0, 0, err
	}
	var fi syscall.Stat_t
	if err := syscall.Stat(dir, &fi); err != nil {
		return 0, 0, err
	}
	return st.Bavail * uint64(st.Bsize), uint64(fi.Dev), nil
}

func (hostResources) memAvailable() (uint64, error) {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0, err
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if rest, ok := strings.CutPrefix(s.Text(), "MemAvailable:"); ok {
			kb, err := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				return 0, fmt.Errorf("/proc/meminfo: MemAvailable %q: %w", rest, err)
			}
			return kb << 10, nil
		}
	}
	if err := s.Err(); err != nil {
		return 0, err
	}
	return 0, errors.New("/proc/meminfo has no MemAvailable line")
}

// sizeFlag is a byte count written as 9GiB, 512MiB or a plain number.
type sizeFlag uint64

func (s *sizeFlag) String() string { return human(uint64(*s)) }

func (s *sizeFlag) Set(v string) error {
	units := []struct {
		suffix string
		shift  uint
	}{{"GiB", 30}, {"MiB", 20}, {"KiB", 10}, {"", 0}}
	for _, u := range units {
		if num, ok := strings.CutSuffix(v, u.suffix); ok {
			n, err := strconv.ParseUint(num, 10, 64)
			if err != nil {
				return fmt.Errorf("size %q: want a whole number with an optional GiB, MiB or KiB suffix", v)
			}
			*s = sizeFlag(n << u.shift)
			return nil
		}
	}
	return nil
}

// human formats bytes as "9.0 GiB" or "512 MiB".
func human(b uint64) string {
	if b >= 1<<30 {
		return fmt.Sprintf("%.1f GiB", float64(b)/(1<<30))
	}
	return fmt.Sprintf("%d MiB", b>>20)
}
