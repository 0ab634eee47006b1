package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime"
	"strconv"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/wasmsched/wasmsched/config"
	"github.com/wasmsched/wasmsched/host/app"
	"github.com/wasmsched/wasmsched/host/app/cli/internal/flags"
	"github.com/wasmsched/wasmsched/host/app/cli/internal/logs"
)

// serveCmd is `wasmsched run`: schedule pods of the configured profiles
// (host/app) until ctx ends (SIGINT, SIGTERM) or, with leader election, the
// lease is lost. extra are the options of Run's caller, passed to app.New
// after the command's own.
func serveCmd(ctx context.Context, args []string, stdout, stderr io.Writer, extra []app.Option) error {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	kubeconfig := fs.String("kubeconfig", "", "kubeconfig file of the cluster (default from the config, client.kubeconfig or clientConnection.kubeconfig; empty: the in-cluster service account)")
	cfgFile := fs.String("config", "", "configuration file (YAML): wasmsched's keys or a KubeSchedulerConfiguration v1; `wasmsched help config` describes both")
	name := fs.String("scheduler-name", "", "scheduler name of the default profile: pods with this spec.schedulerName are scheduled (default from the config, wasmsched)")
	metricsAddr := fs.String("metrics-bind-address", "", "address of the plain-HTTP listener of /metrics, the probes and /policies, without authentication (default from the config, 127.0.0.1:10351; empty disables); the HTTPS listener is secureServing.bindAddress (-set)")
	leaderElect := fs.Bool("leader-elect", false, "acquire a Lease before scheduling, so that only one replica schedules")
	logLevel := fs.String("log-level", "", "lowest level logged: debug, info, warn or error (default from the config, logging.level: info)")
	logFormat := fs.String("logging-format", "", "log format on stderr, the Kubernetes libraries' lines included: text or json (default from the config, logging.format: text)")
	verbosity := fs.Int("v", 0, "verbosity of the Kubernetes libraries' log, klog's -v: their V(0) to V(3) lines at info, V(4) and above at debug (default from the config, logging.verbosity: 0)")
	var sets flags.Sets
	fs.Var(&sets, "set", "override a configuration key, key=value (repeatable)")
	if err := fs.Parse(args); err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	if fs.NArg() != 0 {
		return fmt.Errorf("%w: run takes no arguments, got %q", errUsage, fs.Args())
	}
	overrides := sets.Overrides()
	var err error
	fs.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "log-level":
			// A usage error, as before the key existed.
			if _, err = flags.LogLevel(*logLevel); err == nil {
				overrides["logging.level"] = *logLevel
			}
		case "logging-format":
			overrides["logging.format"] = *logFormat
		case "v":
			overrides["logging.verbosity"] = strconv.Itoa(*verbosity)
		case "scheduler-name":
			overrides["schedulerName"] = *name
		case "metrics-bind-address":
			overrides["metrics.bindAddress"] = *metricsAddr
		case "leader-elect":
			overrides["leaderElection.enabled"] = strconv.FormatBool(*leaderElect)
		}
	})
	if err != nil {
		return err
	}
	// The configuration's plugins are checked against the plugins this
	// binary has: upstream's in-tree ones and those of app.WithPlugin.
	plugins, err := app.Registry(extra...)
	if err != nil {
		return err
	}
	src := config.Source{File: *cfgFile, Environ: os.Environ(), Overrides: overrides, Plugins: plugins}
	cfg, err := config.Load(src)
	if err != nil {
		return fmt.Errorf("configuration: %w", err)
	}
	// From here on every line, client-go's and the apiserver libraries'
	// included, comes out of one handler in the configured format, and so
	// does the error that ends the command.
	h := logs.NewText(stderr, cfg.Logging.Level)
	if cfg.Logging.Format == config.LogFormatJSON {
		h = logs.NewJSON(stderr, cfg.Logging.Level)
	}
	logs.Route(h, cfg.Logging.Verbosity)
	log := slog.New(h)
	if *kubeconfig == "" {
		*kubeconfig = cfg.Client.Kubeconfig // clientConnection.kubeconfig
	}
	if err := serve(ctx, cfg, src, *kubeconfig, log, extra); err != nil {
		log.Error("wasmsched run failed", "err", err)
		return errLogged{err}
	}
	return nil
}

// errLogged is an error the command has logged through its handler, in
// the configured format: Run exits 1 without printing it again.
type errLogged struct{ error }

func (e errLogged) Unwrap() error { return e.error }

// serve connects to the cluster and runs the scheduler, logging to log.
func serve(ctx context.Context, cfg *config.Config, src config.Source, kubeconfig string, log *slog.Logger, extra []app.Option) error {
	restCfg, err := restConfig(kubeconfig)
	if err != nil {
		return err
	}
	// No gzip, as kube-scheduler's createKubeConfig: on the control
	// plane's network compressing every watch event and response only
	// costs CPU, the apiserver's most (RATIONALE).
	restCfg.DisableCompression = true
	restCfg.QPS, restCfg.Burst = cfg.Client.QPS, cfg.Client.Burst
	if cfg.Client.ContentType != "" {
		restCfg.ContentType = cfg.Client.ContentType
	}
	if cfg.Client.AcceptContentTypes != "" {
		restCfg.AcceptContentTypes = cfg.Client.AcceptContentTypes
	}
	if cfg.Metrics.Profiling && cfg.Metrics.ContentionProfiling {
		runtime.SetBlockProfileRate(1) // as kube-scheduler's enableContentionProfiling
	}
	restCfg.UserAgent = "wasmsched"
	client, err := kubernetes.NewForConfig(restCfg)
	if err != nil {
		return fmt.Errorf("kubernetes client: %w", err)
	}
	// Events get a client of their own, as upstream's eventClient: a burst
	// of FailedScheduling events must not queue bindings behind it in the
	// client's rate limiter.
	eventClient, err := kubernetes.NewForConfig(rest.CopyConfig(restCfg))
	if err != nil {
		return fmt.Errorf("kubernetes client: %w", err)
	}
	// The secure listener's TokenReviews and SubjectAccessReviews get one
	// too, with upstream's delegated-auth rate limits (QPS 200, burst 400):
	// scrapes and bindings must not queue behind each other. (No client
	// timeout: it would cut the client CA ConfigMap's watch; a TokenReview
	// has a timeout of its own.)
	authCfg := rest.CopyConfig(restCfg)
	authCfg.QPS, authCfg.Burst = 200, 400
	authClient, err := kubernetes.NewForConfig(authCfg)
	if err != nil {
		return fmt.Errorf("kubernetes client: %w", err)
	}
	// SchedulingPolicies are read through a dynamic informer: no generated
	// client for one kind.
	dyn, err := dynamic.NewForConfig(rest.CopyConfig(restCfg))
	if err != nil {
		return fmt.Errorf("kubernetes client: %w", err)
	}
	opts := []app.Option{app.WithLogger(log), app.WithEventClient(eventClient), app.WithAuthClient(authClient), app.WithReload(src),
		app.WithDynamicClient(dyn), app.WithIdentity(app.DefaultIdentity())}
	a, err := newApp(ctx, cfg, client, append(opts, extra...)...)
	if err != nil {
		return err
	}
	return a.Run(ctx)
}

// newApp is app.New; the tests replace it to see the options Run passes.
var newApp = app.New

func restConfig(kubeconfig string) (*rest.Config, error) {
	if kubeconfig == "" {
		c, err := rest.InClusterConfig()
		if err != nil {
			return nil, fmt.Errorf("no --kubeconfig given and not running in a cluster (%v): pass --kubeconfig FILE", err)
		}
		return c, nil
	}
	c, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("--kubeconfig %s: %w", kubeconfig, err)
	}
	return c, nil
}
