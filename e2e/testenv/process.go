package testenv

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
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

// Process is a child started with StartProcess: in its own process group
// (Stop signals everything it started, by its PID, which is the group's
// id), killed with this process (Pdeathsig), its stdout and stderr appended
// to a log file. etcd, kube-apiserver, KWOK, upstream kube-scheduler and
// wasmsched all run as one, for the tests, the demo and e2e/perf alike.
type Process struct {
	name    string
	cmd     *exec.Cmd
	logPath string
	done    chan struct{} // closed when the process has exited
	waitErr error         // valid after done

	stopOnce sync.Once
}

// ProcessOptions configures StartProcess.
type ProcessOptions struct {
	// Name names the process in errors; default the binary's base name.
	Name string
	// Args are the command-line arguments.
	Args []string
	// Env is the child's environment; nil means this process's.
	Env []string
	// Dir is the child's working directory; "" means this process's.
	Dir string
	// LogPath is the file stdout and stderr are appended to, created when
	// missing; required.
	LogPath string
	// ReadyURL, when set, is polled until it answers 200 OK, and
	// StartProcess returns then. When the child exits, ctx ends or
	// ReadyTimeout passes first, the child is stopped and the error quotes
	// the tail of its log.
	ReadyURL string
	// ReadyClient asks ReadyURL; nil means http.DefaultClient.
	ReadyClient *http.Client
	// ReadyTimeout bounds the wait for ReadyURL; zero means 60 s.
	ReadyTimeout time.Duration
}

// StartProcess starts bin with o.Args, logging to o.LogPath, and with
// o.ReadyURL set waits until the child is ready. The child gets its own
// process group (so Stop can signal everything it started) and
// Pdeathsig=SIGKILL (so it dies with this process even when it panics or is
// killed by `go test -timeout`, and no cleanup runs). The caller stops it.
func StartProcess(ctx context.Context, bin string, o ProcessOptions) (*Process, error) {
	name := o.Name
	if name == "" {
		name = filepath.Base(bin)
	}
	if o.LogPath == "" {
		return nil, fmt.Errorf("start %s: ProcessOptions.LogPath is empty", name)
	}
	logFile, err := os.OpenFile(o.LogPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open %s log: %w", name, err)
	}
	cmd := exec.Command(bin, o.Args...)
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	cmd.Dir = o.Dir
	cmd.Env = o.Env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	fmt.Fprintf(logFile, "# %s %s\n", bin, strings.Join(o.Args, " "))
	if err := spawn(cmd); err != nil {
		logFile.Close()
		return nil, fmt.Errorf("start %s (%s): %w", name, bin, err)
	}
	p := &Process{name: name, cmd: cmd, logPath: o.LogPath, done: make(chan struct{})}
	go func() {
		p.waitErr = cmd.Wait()
		logFile.Close()
		close(p.done)
	}()
	if o.ReadyURL == "" {
		return p, nil
	}
	hc := o.ReadyClient
	if hc == nil {
		hc = http.DefaultClient
	}
	timeout := o.ReadyTimeout
	if timeout == 0 {
		timeout = 60 * time.Second
	}
	if err := waitHTTP(ctx, p, hc, o.ReadyURL, timeout); err != nil {
		p.Stop(0)
		return nil, fmt.Errorf("%s: %w\n--- tail of %s ---\n%s", name, err, p.logPath, p.Tail(40))
	}
	return p, nil
}

// Pid is the process (and process group) id.
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// LogPath is the file the process logs to.
func (p *Process) LogPath() string { return p.logPath }

// Log returns what the process has logged so far.
func (p *Process) Log() string {
	b, err := os.ReadFile(p.logPath)
	if err != nil {
		return fmt.Sprintf("(cannot read %s: %v)", p.logPath, err)
	}
	return string(b)
}

// Exited reports whether the process has exited, and how.
func (p *Process) Exited() (bool, error) {
	select {
	case <-p.done:
		return true, p.waitErr
	default:
		return false, nil
	}
}

// Done is closed when the process has exited.
func (p *Process) Done() <-chan struct{} { return p.done }

// Signal sends sig to the process alone (not its group), e.g. SIGHUP.
func (p *Process) Signal(sig os.Signal) error { return p.cmd.Process.Signal(sig) }

// Stop sends SIGTERM to the process group and waits up to grace for the
// exit (no SIGTERM when grace is 0), then sends SIGKILL to the group and
// waits for the exit. It is idempotent. A grace of 0 suits children whose
// state is worth nothing: kube-apiserver's graceful shutdown takes about
// 1 s, which is a third of a per-test control plane's cost.
func (p *Process) Stop(grace time.Duration) {
	p.stopOnce.Do(func() {
		pgid := p.cmd.Process.Pid
		if ok, _ := p.Exited(); !ok && grace > 0 {
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

// Tail returns the last n lines of the log.
func (p *Process) Tail(n int) string {
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
