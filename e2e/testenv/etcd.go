package testenv

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Etcd is one etcd member listening on 127.0.0.1 only, with its data in a
// fresh temporary directory and fsync off. Several control planes can share
// it: each kube-apiserver then stores under its own --etcd-prefix.
type Etcd struct {
	endpoint string
	dir      string
	proc     *Process

	stopOnce sync.Once
}

// EtcdOptions configures StartEtcd.
type EtcdOptions struct {
	// BinDir holds the etcd binary; empty means EnsureBinaries.
	BinDir string
	// Progress receives build progress; nil means os.Stderr.
	Progress io.Writer
	// ReadyTimeout bounds the wait for /health; zero means 30 s.
	ReadyTimeout time.Duration
}

// StartEtcd starts etcd and waits until it reports healthy.
func StartEtcd(ctx context.Context, o EtcdOptions) (*Etcd, error) {
	bin := o.BinDir
	if bin == "" {
		var err error
		if bin, err = EnsureBinaries(ctx, o.Progress); err != nil {
			return nil, err
		}
	}
	timeout := o.ReadyTimeout
	if timeout == 0 {
		timeout = 30 * time.Second
	}
	dir, err := makeTempDir("etcd")
	if err != nil {
		return nil, err
	}
	var lastErr error
	for attempt := 0; attempt < 3; attempt++ { // a free port can be taken before etcd binds it
		e, err := startEtcdOnce(ctx, filepath.Join(bin, binEtcd), dir, attempt, timeout)
		if err == nil {
			return e, nil
		}
		lastErr = err
		if !strings.Contains(err.Error(), "address already in use") {
			break
		}
	}
	os.RemoveAll(dir)
	return nil, lastErr
}

func startEtcdOnce(ctx context.Context, bin, dir string, attempt int, timeout time.Duration) (*Etcd, error) {
	ports, err := freePorts(2)
	if err != nil {
		return nil, err
	}
	client := "http://127.0.0.1:" + strconv.Itoa(ports[0])
	peer := "http://127.0.0.1:" + strconv.Itoa(ports[1])
	dataDir := filepath.Join(dir, fmt.Sprintf("data-%d", attempt))
	args := []string{
		"--name=testenv",
		"--data-dir=" + dataDir,
		"--listen-client-urls=" + client,
		"--advertise-client-urls=" + client,
		"--listen-peer-urls=" + peer,
		"--initial-advertise-peer-urls=" + peer,
		"--initial-cluster=testenv=" + peer,
		"--initial-cluster-state=new",
		"--unsafe-no-fsync",
		"--log-level=warn",
	}
	proc, err := StartProcess(ctx, bin, ProcessOptions{
		Name: "etcd on " + client, Args: args, Dir: dir, LogPath: filepath.Join(dir, "etcd.log"),
		ReadyURL: client + "/health", ReadyTimeout: timeout,
	})
	if err != nil {
		return nil, err
	}
	return &Etcd{endpoint: client, dir: dir, proc: proc}, nil
}

// Endpoint is etcd's client URL, http://127.0.0.1:PORT.
func (e *Etcd) Endpoint() string { return e.endpoint }

// LogPath is the file etcd logs to.
func (e *Etcd) LogPath() string { return e.proc.logPath }

// Stop kills etcd and removes its data directory. It is idempotent.
func (e *Etcd) Stop() {
	e.stopOnce.Do(func() {
		e.proc.Stop(5 * time.Second) // exits at once on SIGTERM
		os.RemoveAll(e.dir)
	})
}

// freePorts returns n distinct TCP ports that were free on 127.0.0.1 a moment
// ago. Callers retry when a port is taken before their child binds it.
func freePorts(n int) ([]int, error) {
	ports := make([]int, 0, n)
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("find a free port on 127.0.0.1: %w", err)
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// FreePort returns a TCP port that was free on 127.0.0.1 a moment ago, for
// a child started with StartProcess to listen on; the caller retries when
// the port is taken before the child binds it.
func FreePort() (int, error) {
	ports, err := freePorts(1)
	if err != nil {
		return 0, err
	}
	return ports[0], nil
}

// waitHTTP polls url until it answers 200, the child exits, ctx ends or
// timeout passes.
func waitHTTP(ctx context.Context, p *Process, c *http.Client, url string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	last := "no answer yet"
	for {
		if ok, err := p.Exited(); ok {
			return fmt.Errorf("%s %w (%v) before %s answered", p.name, errExited, err, url)
		}
		actx, acancel := context.WithTimeout(ctx, 2*time.Second)
		req, _ := http.NewRequestWithContext(actx, http.MethodGet, url, nil)
		resp, err := c.Do(req)
		if err == nil {
			body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				acancel()
				return nil
			}
			last = resp.Status + ": " + failedChecks(string(body))
		} else if ctx.Err() == nil { // not cut short by the overall deadline
			last = err.Error()
			if errors.Is(err, context.DeadlineExceeded) {
				last = "none within 2 s: the port is bound, nothing serves it yet"
			}
		}
		acancel()
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s not ready after %v (last answer: %s): %w", url, timeout, last, ctx.Err())
		case <-tick.C:
		}
	}
}

// failedChecks keeps the "[-]" lines of a /readyz or /livez answer, which
// name the checks that fail; other answers are returned trimmed.
func failedChecks(body string) string {
	var failed []string
	for line := range strings.SplitSeq(body, "\n") {
		if strings.HasPrefix(line, "[-]") {
			failed = append(failed, line)
		}
	}
	if len(failed) == 0 {
		return strings.TrimSpace(body)
	}
	return strings.Join(failed, "; ")
}
