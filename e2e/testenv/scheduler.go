package testenv

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Process is a child started with StartProcess: in its own process group,
// killed with the test binary (Pdeathsig), logging to a file under Dir.
type Process struct{ p *process }

// StartProcess starts bin with args as a child of this Env; its output goes
// to Dir()/<name>-N.log. The caller stops it (Env.Stop does not know it).
func (e *Env) StartProcess(name, bin string, args ...string) (*Process, error) {
	p, err := startProcess(name, bin, args, nil, filepath.Join(e.dir, e.nextName(name)+".log"))
	if err != nil {
		return nil, err
	}
	return &Process{p: p}, nil
}

// Pid is the process (and process group) id.
func (p *Process) Pid() int { return p.p.cmd.Process.Pid }

// LogPath is the file the process logs to.
func (p *Process) LogPath() string { return p.p.logPath }

// Tail returns the last n lines of the log.
func (p *Process) Tail(n int) string { return p.p.tail(n) }

// Exited reports whether the process has exited, and how.
func (p *Process) Exited() (bool, error) { return p.p.exited() }

// Done is closed when the process has exited.
func (p *Process) Done() <-chan struct{} { return p.p.done }

// Stop sends SIGTERM to the process group, waits up to grace, then kills
// the group. It is idempotent.
func (p *Process) Stop(grace time.Duration) { p.p.stop(grace) }

// KubeSchedulerOptions configures StartKubeScheduler.
type KubeSchedulerOptions struct {
	// SchedulerName is the one profile's name; default "default-scheduler".
	SchedulerName string
	// QPS and Burst of its client; default 50 and 100 (its own defaults).
	QPS   float64
	Burst int
	// FeatureGates are "Name=true" entries; GenericWorkload=true is always
	// set (gangs and workload-aware preemption, as on this apiserver).
	FeatureGates []string
	// Verbosity is -v; default 2.
	Verbosity int
	// ReadyTimeout bounds the wait for /readyz; default 60 s.
	ReadyTimeout time.Duration
}

// KubeScheduler is upstream kube-scheduler v1.37.1 running against the Env.
type KubeScheduler struct {
	*Process
	// Addr is host:port of its secure port, which serves /metrics,
	// /readyz and /debug/pprof/ without authentication (see
	// StartKubeScheduler).
	Addr string
}

// StartKubeScheduler runs upstream kube-scheduler (BinDir/kube-scheduler,
// built by hack/cluster.sh build kube-scheduler) with the Env's admin
// kubeconfig, one profile, no leader election, on a loopback secure port,
// and returns once /readyz answers OK.
//
// /metrics and /debug/pprof/* are added to --authorization-always-allow-paths,
// so that a harness can scrape it like wasmsched's plain-HTTP listener; with
// no --authentication-kubeconfig, requests are anonymous and those paths need
// no authorization.
func (e *Env) StartKubeScheduler(ctx context.Context, o KubeSchedulerOptions) (*KubeScheduler, error) {
	bin := filepath.Join(e.binDir, "kube-scheduler")
	if _, err := os.Stat(bin); err != nil {
		return nil, fmt.Errorf("upstream kube-scheduler: %w (build it with hack/cluster.sh build kube-scheduler)", err)
	}
	if o.SchedulerName == "" {
		o.SchedulerName = "default-scheduler"
	}
	if o.QPS == 0 {
		o.QPS = 50
	}
	if o.Burst == 0 {
		o.Burst = 100
	}
	if o.Verbosity == 0 {
		o.Verbosity = 2
	}
	if o.ReadyTimeout == 0 {
		o.ReadyTimeout = 60 * time.Second
	}
	name := e.nextName("kube-scheduler")
	dir := filepath.Join(e.dir, name)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	cfg := filepath.Join(dir, "config.yaml")
	// Written as text: the config API types are not among the module's
	// requirements.
	text := fmt.Sprintf(`apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
clientConnection:
  kubeconfig: %q
  qps: %s
  burst: %d
leaderElection:
  leaderElect: false
profiles:
- schedulerName: %s
`, e.Kubeconfig, strconv.FormatFloat(o.QPS, 'f', -1, 64), o.Burst, o.SchedulerName)
	if err := os.WriteFile(cfg, []byte(text), 0o600); err != nil {
		return nil, err
	}
	gates := strings.Join(append([]string{"GenericWorkload=true"}, o.FeatureGates...), ",")
	for attempt := 0; ; attempt++ { // a free port can be taken before kube-scheduler binds it
		ports, err := freePorts(1)
		if err != nil {
			return nil, err
		}
		addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(ports[0]))
		p, err := e.StartProcess(name, bin,
			"--config="+cfg,
			"--feature-gates="+gates,
			"--bind-address=127.0.0.1",
			"--secure-port="+strconv.Itoa(ports[0]),
			"--cert-dir="+dir,
			"--authorization-always-allow-paths=/healthz,/readyz,/livez,/metrics,/debug/pprof/*",
			"-v="+strconv.Itoa(o.Verbosity),
		)
		if err != nil {
			return nil, err
		}
		ks := &KubeScheduler{Process: p, Addr: addr}
		err = ks.waitReady(ctx, o.ReadyTimeout)
		if err == nil {
			return ks, nil
		}
		p.Stop(0)
		if attempt < 2 && strings.Contains(p.Tail(50), "address already in use") {
			continue
		}
		return nil, fmt.Errorf("upstream kube-scheduler: %w\n--- tail of %s ---\n%s", err, p.LogPath(), p.Tail(60))
	}
}

// insecureClient talks to kube-scheduler's self-signed loopback port.
func insecureClient() *http.Client {
	return &http.Client{
		Timeout:   30 * time.Second,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}, //nolint:gosec // loopback, self-signed
	}
}

// waitReady polls /readyz until it answers 200, the process exits, or
// timeout passes.
func (k *KubeScheduler) waitReady(ctx context.Context, timeout time.Duration) error {
	hc := insecureClient()
	defer hc.CloseIdleConnections()
	deadline := time.Now().Add(timeout)
	last := "no answer"
	for time.Now().Before(deadline) {
		if ok, err := k.Exited(); ok {
			return fmt.Errorf("exited: %v", err)
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		resp, err := hc.Get("https://" + k.Addr + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			last = resp.Status
		} else {
			last = err.Error()
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("/readyz not OK within %v (last: %s)", timeout, last)
}

// Get fetches path (e.g. "/metrics") from the secure port.
func (k *KubeScheduler) Get(ctx context.Context, path string) ([]byte, error) {
	hc := insecureClient()
	defer hc.CloseIdleConnections()
	return Get(ctx, hc, "https://"+k.Addr+path)
}

// Get fetches url with hc and returns the body of a 200 answer; any other
// status is an error quoting the body.
func Get(ctx context.Context, hc *http.Client, url string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s: %s", url, resp.Status, strings.TrimSpace(string(b)))
	}
	return b, nil
}
