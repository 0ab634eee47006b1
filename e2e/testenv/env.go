package testenv

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// Options configures New. The zero value starts a private etcd and
// kube-apiserver from binaries built by hack/cluster.sh.
type Options struct {
	// BinDir holds etcd, kube-apiserver, kwok and kwok-stages.yaml. Empty
	// means EnsureBinaries: run hack/cluster.sh build.
	BinDir string
	// Progress receives the build script's progress; nil means os.Stderr.
	Progress io.Writer
	// Etcd, when set, is shared: the kube-apiserver stores under a fresh
	// --etcd-prefix in it and Stop leaves it running. Nil starts a private
	// etcd that Stop kills.
	Etcd *Etcd
	// APIServerFlags are appended after the defaults (see apiServerArgs).
	// Given twice, a scalar flag takes the later value, while list and map
	// flags accumulate: --disable-admission-plugins=PodGroupProtection adds
	// to the defaults, --feature-gates=X=true adds a gate.
	APIServerFlags []string
	// ReadyTimeout bounds the wait for /readyz; zero means 60 s.
	ReadyTimeout time.Duration
}

// Option changes Options; the testing entry points take them.
type Option func(*Options)

// WithAPIServerFlags appends kube-apiserver flags (see Options.APIServerFlags).
func WithAPIServerFlags(flags ...string) Option {
	return func(o *Options) { o.APIServerFlags = append(o.APIServerFlags, flags...) }
}

// WithBinDir uses binaries from dir instead of running hack/cluster.sh.
func WithBinDir(dir string) Option {
	return func(o *Options) { o.BinDir = dir }
}

// WithReadyTimeout changes how long New waits for /readyz.
func WithReadyTimeout(d time.Duration) Option {
	return func(o *Options) { o.ReadyTimeout = d }
}

// Env is one running control plane: a kube-apiserver on 127.0.0.1, its etcd
// (private or shared) and any KWOK controllers started on it. All methods
// are safe for concurrent use.
type Env struct {
	// Config is the admin (system:masters) client configuration, QPS 5000,
	// Burst 10000. It is shared: copy it (rest.CopyConfig) before changing.
	Config *rest.Config
	// Client is an admin clientset built from Config.
	Client kubernetes.Interface
	// Kubeconfig is the path of an admin kubeconfig file, for child
	// processes (the scheduler under test, kubectl).
	Kubeconfig string

	dir        string // temporary directory: pki/, logs, kubeconfigs
	binDir     string
	host       string // https://127.0.0.1:PORT
	pki        *pki
	dyn        dynamic.Interface
	etcd       *Etcd
	ownEtcd    bool
	etcdPrefix string
	apiserver  *Process
	readyAfter time.Duration
	shared     bool // the binary's Shared environment

	mu    sync.Mutex // guards kwoks, cms and rm
	kwoks []*KWOK
	cms   []*ControllerManager
	rm    *restMapper

	seq      atomic.Int64 // unique file names
	stopOnce sync.Once
}

var prefixSeq atomic.Int64

// New starts a control plane and returns once kube-apiserver's /readyz
// answers OK; call Stop when done. It is the entry point for programs (the
// demo); tests use Start or Shared, which stop what they start.
func New(ctx context.Context, o Options) (_ *Env, err error) {
	if o.BinDir == "" {
		if o.BinDir, err = EnsureBinaries(ctx, o.Progress); err != nil {
			return nil, err
		}
	}
	t0 := time.Now()
	if o.ReadyTimeout == 0 {
		o.ReadyTimeout = 60 * time.Second
	}
	dir, err := makeTempDir("env")
	if err != nil {
		return nil, err
	}
	e := &Env{dir: dir, binDir: o.BinDir, etcd: o.Etcd, etcdPrefix: "/registry"}
	defer func() {
		if err != nil {
			e.Stop()
		}
	}()
	if e.etcd == nil {
		e.etcd, err = StartEtcd(ctx, EtcdOptions{BinDir: o.BinDir})
		if err != nil {
			return nil, err
		}
		e.ownEtcd = true
	} else {
		e.etcdPrefix = fmt.Sprintf("/testenv-%d-%s", prefixSeq.Add(1), randomHex(4))
	}
	if e.pki, err = newPKI(filepath.Join(dir, "pki")); err != nil {
		return nil, err
	}
	for attempt := 0; ; attempt++ { // a free port can be taken before the apiserver binds it
		err = e.startAPIServer(ctx, o, attempt)
		if err == nil || attempt == 2 || !strings.Contains(err.Error(), "address already in use") {
			break
		}
	}
	if err != nil {
		return nil, err
	}
	e.readyAfter = time.Since(t0)
	return e, nil
}

func (e *Env) startAPIServer(ctx context.Context, o Options, attempt int) error {
	ports, err := freePorts(1)
	if err != nil {
		return err
	}
	e.host = "https://127.0.0.1:" + strconv.Itoa(ports[0])
	e.Config = &rest.Config{
		Host: e.host,
		TLSClientConfig: rest.TLSClientConfig{
			CAData:   e.pki.caCert,
			CertData: e.pki.adminCert,
			KeyData:  e.pki.adminKey,
		},
		QPS:       5000,
		Burst:     10000,
		UserAgent: "wasmsched-testenv",
	}
	args := append(e.apiServerArgs(ports[0]), o.APIServerFlags...)
	logPath := filepath.Join(e.dir, "kube-apiserver.log")
	if attempt > 0 {
		logPath = filepath.Join(e.dir, fmt.Sprintf("kube-apiserver-%d.log", attempt))
	}
	hc, err := rest.HTTPClientFor(e.Config)
	if err != nil {
		return err
	}
	proc, err := StartProcess(ctx, filepath.Join(o.BinDir, binAPIServer), ProcessOptions{
		Name: "kube-apiserver on " + e.host, Args: args, Dir: e.dir, LogPath: logPath,
		ReadyURL: e.host + "/readyz", ReadyClient: hc, ReadyTimeout: o.ReadyTimeout,
	})
	if err != nil {
		return err
	}
	e.apiserver = proc
	if e.Client, err = kubernetes.NewForConfig(e.Config); err != nil {
		return err
	}
	// The dynamic client lists every resource when cleaning up, deprecated
	// ones (v1 Endpoints) included: their warnings are noise.
	quiet := rest.CopyConfig(e.Config)
	quiet.WarningHandler = rest.NoWarnings{}
	if e.dyn, err = dynamic.NewForConfig(quiet); err != nil {
		return err
	}
	e.Kubeconfig = filepath.Join(e.dir, "admin.kubeconfig")
	return writeKubeconfig(e.Kubeconfig, e.host, e.pki.caCert, &clientcmdapi.AuthInfo{
		ClientCertificateData: e.pki.adminCert,
		ClientKeyData:         e.pki.adminKey,
	})
}

// apiServerArgs are the flags of /work/shared/notes/cluster.md: no
// controller-manager runs, so the admission plugins that need one are off,
// and scheduling.k8s.io/v1beta1 (Workload, PodGroup) is served.
func (e *Env) apiServerArgs(port int) []string {
	return []string{
		"--etcd-servers=" + e.etcd.Endpoint(),
		"--etcd-prefix=" + e.etcdPrefix,
		"--bind-address=127.0.0.1",
		"--advertise-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(port),
		"--cert-dir=" + filepath.Join(e.dir, "pki"),
		"--tls-cert-file=" + e.pki.servingCertFile,
		"--tls-private-key-file=" + e.pki.servingKeyFile,
		"--client-ca-file=" + e.pki.caFile,
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file=" + e.pki.saPublicKeyFile,
		"--service-account-signing-key-file=" + e.pki.saPrivateKeyFile,
		"--service-cluster-ip-range=10.0.0.0/24",
		"--authorization-mode=RBAC",
		// ServiceAccount wants the token controller's default account;
		// TaintNodesByCondition taints every new Node not-ready and only
		// the node lifecycle controller would lift it.
		"--disable-admission-plugins=ServiceAccount,TaintNodesByCondition",
		"--endpoint-reconciler-type=none",
		"--runtime-config=scheduling.k8s.io/v1beta1=true",
		"--feature-gates=GenericWorkload=true",
		"--allow-privileged=true",
		"--profiling=false",
	}
}

func writeKubeconfig(path, host string, ca []byte, user *clientcmdapi.AuthInfo) error {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["testenv"] = &clientcmdapi.Cluster{Server: host, CertificateAuthorityData: ca}
	cfg.AuthInfos["user"] = user
	cfg.Contexts["testenv"] = &clientcmdapi.Context{Cluster: "testenv", AuthInfo: "user"}
	cfg.CurrentContext = "testenv"
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		return fmt.Errorf("write kubeconfig %s: %w", path, err)
	}
	return nil
}

// ControlPlanePIDs returns the PIDs of kube-apiserver and etcd, in that
// order, leaving out either when it is not running: e2e/perf measures their
// CPU over a measured phase. A shared etcd (Options.Etcd) is included, and
// its CPU then counts the work of every environment stored in it, not this
// one's alone.
func (e *Env) ControlPlanePIDs() []int {
	var procs []*Process
	if e.apiserver != nil {
		procs = append(procs, e.apiserver)
	}
	if e.etcd != nil && e.etcd.proc != nil {
		procs = append(procs, e.etcd.proc)
	}
	var pids []int
	for _, p := range procs {
		if exited, _ := p.Exited(); !exited {
			pids = append(pids, p.Pid())
		}
	}
	return pids
}

// Dynamic is an admin dynamic client.
func (e *Env) Dynamic() dynamic.Interface { return e.dyn }

// Host is the apiserver URL, https://127.0.0.1:PORT.
func (e *Env) Host() string { return e.host }

// Dir is the environment's temporary directory (logs, certificates,
// kubeconfigs); Stop removes it.
func (e *Env) Dir() string { return e.dir }

// BinDir is the directory of the control-plane binaries.
func (e *Env) BinDir() string { return e.binDir }

// EtcdPrefix is the kube-apiserver's --etcd-prefix.
func (e *Env) EtcdPrefix() string { return e.etcdPrefix }

// ReadyAfter is how long New took, from its call until /readyz answered OK
// (including etcd's start when private, excluding the binary build check).
func (e *Env) ReadyAfter() time.Duration { return e.readyAfter }

// LogTails returns the last n lines of every log this environment wrote
// (kube-apiserver, a private etcd, KWOK, kube-controller-manager), each
// under a header naming the file.
func (e *Env) LogTails(n int) string {
	var b strings.Builder
	logs := []string{}
	if e.apiserver != nil {
		logs = append(logs, e.apiserver.logPath)
	}
	if e.ownEtcd && e.etcd != nil {
		logs = append(logs, e.etcd.LogPath())
	}
	e.mu.Lock()
	for _, k := range e.kwoks {
		logs = append(logs, k.proc.logPath)
	}
	for _, c := range e.cms {
		logs = append(logs, c.logPath)
	}
	e.mu.Unlock()
	for _, l := range logs {
		fmt.Fprintf(&b, "--- tail of %s ---\n%s\n", l, tailFile(l, n))
	}
	return b.String()
}

// Stop stops kube-controller-manager, KWOK, kube-apiserver and a private
// etcd (SIGTERM to each process group, SIGKILL after a grace period), waits
// for them and removes the temporary directory. It is idempotent.
func (e *Env) Stop() {
	e.stopOnce.Do(func() {
		e.mu.Lock()
		kwoks, cms := e.kwoks, e.cms
		e.mu.Unlock()
		for _, c := range cms {
			c.Stop(0)
		}
		for _, k := range kwoks {
			k.Stop()
		}
		if e.apiserver != nil {
			e.apiserver.Stop(0)
		}
		if e.ownEtcd && e.etcd != nil {
			e.etcd.Stop()
		}
		os.RemoveAll(e.dir)
	})
}

// nextName returns prefix-N, unique within this Env.
func (e *Env) nextName(prefix string) string {
	return prefix + "-" + strconv.FormatInt(e.seq.Add(1), 10)
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// exited reports an error if the kube-apiserver process is gone.
func (e *Env) exited() error {
	if ok, err := e.apiserver.Exited(); ok {
		return fmt.Errorf("kube-apiserver %s %w (%v)\n%s", e.host, errExited, err, e.LogTails(40))
	}
	return nil
}
