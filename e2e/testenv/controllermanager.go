package testenv

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// ControllerManagerOptions configures StartControllerManager.
type ControllerManagerOptions struct {
	// Controllers is --controllers; nil means every controller enabled by
	// default except serviceaccount-token ("*", "-serviceaccount-token"),
	// which needs a signing key kube-controller-manager is not given.
	Controllers []string
	// FeatureGates are "Name=true" entries; GenericWorkload=true is always
	// set, as on this apiserver.
	FeatureGates []string
	// Args are appended to its command line.
	Args []string
	// Verbosity is -v; default 2.
	Verbosity int
	// ReadyTimeout bounds the wait for /healthz; default 60 s.
	ReadyTimeout time.Duration
}

// ControllerManager is upstream kube-controller-manager v1.37.1 running
// against the Env.
type ControllerManager struct {
	*Process
	// Addr is host:port of its secure port on 127.0.0.1 (self-signed; it
	// serves /healthz, /readyz and /livez without authentication).
	Addr string
}

// StartControllerManager runs upstream kube-controller-manager (built by
// hack/cluster.sh build kube-controller-manager, see ControllerManagerBinary)
// with the Env's admin kubeconfig, no leader election and its controllers
// using that one identity (no per-controller service accounts: the token
// controller does not run), on a loopback secure port, and returns once
// /healthz answers OK. Env.Stop stops it; Stop(grace) stops it earlier.
//
// With it running, the PV binder, ephemeral-volume, resource-claim, pod GC,
// garbage collector and PodGroup protection controllers work on the Env as
// on a real cluster; nodes still come from KWOK and pods are bound by a
// scheduler.
func (e *Env) StartControllerManager(ctx context.Context, o ControllerManagerOptions) (*ControllerManager, error) {
	bin, err := ControllerManagerBinary(ctx, e.binDir, os.Stderr)
	if err != nil {
		return nil, err
	}
	controllers := o.Controllers
	if controllers == nil {
		controllers = []string{"*", "-serviceaccount-token"}
	}
	if o.Verbosity == 0 {
		o.Verbosity = 2
	}
	if o.ReadyTimeout == 0 {
		o.ReadyTimeout = 60 * time.Second
	}
	dir := filepath.Join(e.dir, e.nextName("kube-controller-manager"))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	gates := strings.Join(append([]string{"GenericWorkload=true"}, o.FeatureGates...), ",")
	hc := insecureClient()
	defer hc.CloseIdleConnections()
	logPath := filepath.Join(dir, "kube-controller-manager.log")
	for attempt := 0; ; attempt++ { // a free port can be taken before it binds it
		ports, err := freePorts(1)
		if err != nil {
			return nil, err
		}
		addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(ports[0]))
		args := append([]string{
			"--kubeconfig=" + e.Kubeconfig,
			"--leader-elect=false",
			"--controllers=" + strings.Join(controllers, ","),
			"--use-service-account-credentials=false",
			"--feature-gates=" + gates,
			"--bind-address=127.0.0.1",
			"--secure-port=" + strconv.Itoa(ports[0]),
			"--cert-dir=" + dir,
			"-v=" + strconv.Itoa(o.Verbosity),
		}, o.Args...)
		p, err := StartProcess(ctx, bin, ProcessOptions{
			Name: "kube-controller-manager", Args: args, Dir: dir, LogPath: logPath,
			ReadyURL: "https://" + addr + "/healthz", ReadyClient: hc, ReadyTimeout: o.ReadyTimeout,
		})
		if err != nil {
			if attempt < 2 && strings.Contains(err.Error(), "address already in use") {
				continue
			}
			return nil, err
		}
		cm := &ControllerManager{Process: p, Addr: addr}
		e.mu.Lock()
		e.cms = append(e.cms, cm)
		e.mu.Unlock()
		return cm, nil
	}
}
