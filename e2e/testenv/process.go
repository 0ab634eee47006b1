package testenv

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// process is one child (etcd, kube-apiserver, kwok) in its own process group,
// with stdout and stderr in a log file.
type process struct {
	name    string
	cmd     *exec.Cmd
	logPath string
	logFile *os.File
	done    chan struct{} // closed when the process has exited
	waitErr error         // valid after done

	stopOnce sync.Once
}

// startProcess starts bin with args, logging to logPath. The child gets its
// own process group (so Stop can signal everything it started) and
// Pdeathsig=SIGKILL (so it dies with the test binary even when the binary
// panics or is killed by `go test -timeout`, and no cleanup runs).
func startProcess(name, bin string, args []string, env []string, logPath string) (*process, error) {
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open %s log: %w", name, err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	cmd.Dir = filepath.Dir(logPath)
	if env != nil {
		cmd.Env = env
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	fmt.Fprintf(logFile, "# %s %s\n", bin, strings.Join(args, " "))
	if err := spawn(cmd); err != nil {
		logFile.Close()
		return nil, fmt.Errorf("start %s (%s): %w", name, bin, err)
	}
	p := &process{name: name, cmd: cmd, logPath: logPath, logFile: logFile, done: make(chan struct{})}
	go func() {
		p.waitErr = cmd.Wait()
		logFile.Close()
		close(p.done)
	}()
	return p, nil
}

// exited reports whether the process has exited, and how.
func (p *process) exited() (bool, error) {
	select {
	case <-p.done:
		return true, p.waitErr
	default:
		return false, nil
	}
}

// stop sends SIGTERM to the process group and waits up to grace for the
// exit (no SIGTERM when grace is 0), then sends SIGKILL to the group and
// waits for the exit. Nothing any child holds is worth keeping, so graceful
// shutdowns that take long are not waited for: kube-apiserver's takes about
// 1 s, which is a third of a per-test control plane's cost.
func (p *process) stop(grace time.Duration) {
	p.stopOnce.Do(func() {
		pgid := p.cmd.Process.Pid
		if ok, _ := p.exited(); !ok && grace > 0 {
			_ = syscall.Kill(-pgid, syscall.SIGTERM)
			select {
			case <-p.done:
			case <-time.After(grace):
			}
		}
		// Anything left in the group (also after a clean exit of the leader).
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		<-p.done
	})
}

// tail returns the last n lines of the log.
func (p *process) tail(n int) string {
	return tailFile(p.logPath, n)
}

func tailFile(path string, n int) string {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Sprintf("(cannot read %s: %v)", path, err)
	}
	defer f.Close()
	const maxRead = 256 << 10
	st, err := f.Stat()
	if err != nil {
		return err.Error()
	}
	off := st.Size() - maxRead
	if off < 0 {
		off = 0
	}
	b, err := io.ReadAll(io.NewSectionReader(f, off, st.Size()-off))
	if err != nil {
		return err.Error()
	}
	b = bytes.TrimRight(b, "\n")
	lines := bytes.Split(b, []byte("\n"))
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return string(bytes.Join(lines, []byte("\n")))
}

// Pdeathsig is delivered when the *thread* that forked the child exits, not
// the process. Go may retire threads, so every child is forked from one
// goroutine locked to a thread that never exits.
var (
	spawnOnce sync.Once
	spawnReqs chan spawnReq
)

type spawnReq struct {
	cmd *exec.Cmd
	err chan error
}

func spawn(cmd *exec.Cmd) error {
	spawnOnce.Do(func() {
		spawnReqs = make(chan spawnReq)
		go func() {
			runtime.LockOSThread() // never unlocked: the thread lives as long as the process
			for r := range spawnReqs {
				r.err <- r.cmd.Start()
			}
		}()
	})
	r := spawnReq{cmd: cmd, err: make(chan error, 1)}
	spawnReqs <- r
	return <-r.err
}

// errExited is returned when a child exits while we wait for it to be ready.
var errExited = errors.New("exited")

// Temporary directories are named tempPrefix* and hold ownerFile, the PID
// of the process that made them. A test binary killed before its cleanup
// (a panic, -timeout, SIGKILL) leaves its directories behind (etcd's WAL
// alone preallocates 64 MB); the next one removes those whose owner is gone.
const (
	tempPrefix = "wasmsched-testenv-"
	ownerFile  = "owner.pid"
)

var sweepOnce sync.Once

// makeTempDir creates a temporary directory for kind ("env", "etcd"), after
// removing, once per process, the directories of dead owners.
func makeTempDir(kind string) (string, error) {
	sweepOnce.Do(sweepTempDirs)
	dir, err := os.MkdirTemp("", tempPrefix+kind+"-")
	if err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(dir, ownerFile), []byte(strconv.Itoa(os.Getpid())), 0o600); err != nil {
		os.RemoveAll(dir)
		return "", err
	}
	return dir, nil
}

func sweepTempDirs() {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), tempPrefix+"*"))
	for _, d := range dirs {
		b, err := os.ReadFile(filepath.Join(d, ownerFile))
		if err != nil {
			continue // not ours, or still being created
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil || pid <= 0 {
			continue
		}
		if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
			os.RemoveAll(d)
		}
	}
}
