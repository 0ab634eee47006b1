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

// LogPath returns a fresh log file path under Dir for a child named name:
// Dir()/<name>-N.log, N unique within this Env. Env.Stop removes it; a
// child given one is stopped by its caller (Env.Stop does not know it).
func (e *Env) LogPath(name string) string {
	return filepath.Join(e.dir, e.nextName(name)+".log")
}

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
	// Config, when set, is the KubeSchedulerConfiguration given as --config
	// instead of the one made from SchedulerName, QPS and Burst: it must
	// name the Env's kubeconfig in clientConnection.kubeconfig (with
	// --config, kube-scheduler ignores --kubeconfig).
	Config string
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
	if o.Config != "" {
		text = o.Config
	}
	if err := os.WriteFile(cfg, []byte(text), 0o600); err != nil {
		return nil, err
	}
	gates := strings.Join(append([]string{"GenericWorkload=true"}, o.FeatureGates...), ",")
	hc := insecureClient()
	defer hc.CloseIdleConnections()
	logPath := filepath.Join(dir, "kube-scheduler.log")
	for attempt := 0; ; attempt++ { // a free port can be taken before kube-scheduler binds it
		ports, err := freePorts(1)
		if err != nil {
			return nil, err
		}
		addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(ports[0]))
		p, err := StartProcess(ctx, bin, ProcessOptions{
			Name: "upstream kube-scheduler",
			Args: []string{
				"--config=" + cfg,
				"--feature-gates=" + gates,
				"--bind-address=127.0.0.1",
				"--secure-port=" + strconv.Itoa(ports[0]),
				"--cert-dir=" + dir,
				"--authorization-always-allow-paths=/healthz,/readyz,/livez,/metrics,/debug/pprof/*",
				"-v=" + strconv.Itoa(o.Verbosity),
			},
			Dir: e.dir, LogPath: logPath,
			ReadyURL: "https://" + addr + "/readyz", ReadyClient: hc, ReadyTimeout: o.ReadyTimeout,
		})
		if err != nil {
			if attempt < 2 && strings.Contains(err.Error(), "address already in use") {
				continue
			}
			return nil, err
		}
		return &KubeScheduler{Process: p, Addr: addr}, nil
	}
}

// insecureClient talks to kube-scheduler's self-signed loopback port.
func insecureClient() *http.Client {
	return &http.Client{
		Timeout:   30 * time.Second,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}, //nolint:gosec // loopback, self-signed
	}
}

// Get fetches path (e.g. "/metrics") from the secure port.
func (k *KubeScheduler) Get(ctx context.Context, path string) ([]byte, error) {
	hc := insecureClient()
	defer hc.CloseIdleConnections()
	return Get(ctx, hc, "https://"+k.Addr+path)
}

// WasmschedOptions configures StartWasmsched.
type WasmschedOptions struct {
	// Bin is the wasmsched binary.
	Bin string
	// Kubeconfig is given as -kubeconfig.
	Kubeconfig string
	// Args follow `run -kubeconfig K -metrics-bind-address A -set
	// secureServing.bindAddress=S` (a later -set of that key wins).
	Args []string
	// LogPath is the file it logs to (see ProcessOptions.LogPath).
	LogPath string
	// Dir is its working directory; "" means this process's, against which
	// relative paths in Args and its configuration resolve.
	Dir string
	// ReadyTimeout bounds the wait for /readyz; zero means 60 s.
	ReadyTimeout time.Duration
}

// Wasmsched is `wasmsched run` as a child process.
type Wasmsched struct {
	*Process
	// Addr is host:port of its plain-HTTP listener on 127.0.0.1: /metrics,
	// /readyz, /debug/pprof when enabled and the admin endpoint.
	Addr string
	// SecureAddr is host:port of its HTTPS listener on 127.0.0.1
	// (secureServing.bindAddress), whose callers the apiserver
	// authenticates and authorizes.
	SecureAddr string
}

// StartWasmsched runs `wasmsched run` against a kubeconfig, its metrics
// and secure listeners on free loopback ports (so that schedulers started
// side by side do not collide on the default 10359), and returns once
// /readyz answers OK. The caller stops it.
func StartWasmsched(ctx context.Context, o WasmschedOptions) (*Wasmsched, error) {
	bin, err := filepath.Abs(o.Bin) // relative to this process, also with o.Dir set
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(bin); err != nil {
		return nil, fmt.Errorf("wasmsched: %w (build it with go build -o bin/wasmsched ./cmd/wasmsched, as `make demo` does)", err)
	}
	for attempt := 0; ; attempt++ { // a free port can be taken before wasmsched binds it
		ports, err := freePorts(2)
		if err != nil {
			return nil, err
		}
		addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(ports[0]))
		secureAddr := net.JoinHostPort("127.0.0.1", strconv.Itoa(ports[1]))
		args := append([]string{"run", "-kubeconfig", o.Kubeconfig, "-metrics-bind-address", addr,
			"-set", "secureServing.bindAddress=" + secureAddr}, o.Args...)
		p, err := StartProcess(ctx, bin, ProcessOptions{
			Name: "wasmsched", Args: args, Dir: o.Dir, LogPath: o.LogPath,
			ReadyURL: "http://" + addr + "/readyz", ReadyTimeout: o.ReadyTimeout,
		})
		if err != nil {
			if attempt < 2 && strings.Contains(err.Error(), "address already in use") {
				continue
			}
			return nil, err
		}
		return &Wasmsched{Process: p, Addr: addr, SecureAddr: secureAddr}, nil
	}
}

// Get fetches path (e.g. "/metrics") from the metrics listener.
func (w *Wasmsched) Get(ctx context.Context, path string) ([]byte, error) {
	return Get(ctx, http.DefaultClient, "http://"+w.Addr+path)
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
