// Package cli is the wasmsched command: its flags, subcommands and help, as
// kube-scheduler's cmd/kube-scheduler/app holds its command, so that
// cmd/wasmsched's main stays a signal handler around Run and a Go program
// can build its own wasmsched binary with extra app options:
//
//	func main() {
//		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
//		code := cli.Run(ctx, os.Args[1:], os.Stdout, os.Stderr, app.WithXxx(...))
//		stop()
//		os.Exit(code)
//	}
//
// The in-memory benchmark is a command of its own, package benchcli
// (cmd/wasmsched-bench), so that this one does not link client-go's fake
// clientset.
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime/debug"
	"strings"
	"time"

	"github.com/wasmsched/wasmsched/abi"
	"github.com/wasmsched/wasmsched/config"
	"github.com/wasmsched/wasmsched/host/app"
	"github.com/wasmsched/wasmsched/host/app/cli/internal/flags"
	"github.com/wasmsched/wasmsched/host/wasm"
)

const usage = `usage: wasmsched <command> [arguments]

commands:
  run [-kubeconfig FILE] [-config FILE] [-scheduler-name NAME]
      [-metrics-bind-address ADDR] [-leader-elect] [-set key=value]...
      [-log-level LEVEL] [-logging-format text|json] [-v N]
                            schedule the pods whose spec.schedulerName is one
                            of the configured profiles (default: wasmsched)
  help [config]             this text, or every configuration key with its
                            default, environment variable and meaning
  version                   print the version, the commit and the policy ABI it
                            speaks
  policy validate [-config FILE] [-set key=value]... MODULE
                            load a policy module as the scheduler would, under
                            the configured sandbox limits, and report its ABI
                            version, slots, exports, imports and memory;
                            exits 1 if the module is refused
  policy test [-config FILE] [-set key=value]... MODULE --cases CASES.yaml
                            run a table of inputs through one slot of a module,
                            loaded as by validate, and compare the answers with
                            the expected ones (examples in
                            guest-sdk/policytest/testdata/cases); exits 1 if a
                            case fails or the module is refused
  policy manifest MODULE --slot SLOT [--profile P] [--name N]
      [--configmap NAME/KEY] [-config FILE] [-set key=value]...
                            validate the module as validate does, then print
                            the SchedulingPolicy that puts it in the slot, with
                            its sha256 (the module inline, or a ConfigMap key):
                            wasmsched policy manifest fifo.wasm --slot queueSort | kubectl apply -f -
      (--mode Shadow [--sample-rate R]: a Shadow, evaluated beside the
      slot's policy, deciding nothing)
  policy diff [-config FILE] [-set key=value]... A.wasm B.wasm --cases FILE
      [--write-cases OUT.yaml]
                            run the same cases through one slot of two
                            modules and print where their answers differ;
                            FILE is a case file, or SchedulingPolicies from
                            kubectl get -o yaml whose Shadow samples become
                            the cases (--write-cases saves them as a case
                            file); exits 1 if any case differs

The in-memory benchmark is the command wasmsched-bench (go run
./cmd/wasmsched-bench -h), kept out of this binary.
`

// errUsage marks errors whose remedy is the usage text.
var errUsage = flags.ErrUsage

// Run is the whole wasmsched command, so tests and other main packages can
// drive it: args are the arguments after the program name, and it returns
// the exit code (0, 1 on failure, 2 on a usage error). opts are passed to
// app.New by `wasmsched run`, after the command's own, so a binary built
// around Run can add to the scheduler (or override an option) without a
// fork of this package.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer, opts ...app.Option) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	var err error
	switch args[0] {
	case "run":
		err = serveCmd(ctx, args[1:], stdout, stderr, opts)
		if errors.As(err, new(errLogged)) {
			return 1
		}
	case "version":
		err = version(stdout)
	case "policy":
		err = policyCmd(ctx, args[1:], stdout, stderr)
	case "help", "-h", "--help":
		if len(args) > 1 && args[1] == "config" {
			fmt.Fprint(stdout, config.Help())
			return 0
		}
		fmt.Fprint(stdout, usage)
		return 0
	case "bench":
		err = fmt.Errorf("%w: the in-memory benchmark is the command wasmsched-bench now (go run ./cmd/wasmsched-bench, same flags)", errUsage)
	default:
		err = fmt.Errorf("%w: unknown command %q", errUsage, args[0])
	}
	return flags.Exit(err, stderr, "wasmsched", usage)
}

// buildVersion and buildCommit are set at link time (-ldflags -X, from
// hack/version.sh: make build, make image). go build does not stamp the
// version control information itself in a git worktree or under
// -buildvcs=false; left empty, they come from the binary's build information.
var buildVersion, buildCommit string

func version(w io.Writer) error {
	v, commit := buildVersion, buildCommit
	if bi, ok := debug.ReadBuildInfo(); ok {
		if v == "" {
			v = bi.Main.Version
		}
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" && commit == "" {
				commit = s.Value
			}
		}
	}
	if v == "" {
		v = "(devel)"
	}
	if commit == "" {
		commit = "unknown"
	}
	_, err := fmt.Fprintf(w, "wasmsched %s\ncommit %s\npolicy ABI %d.%d\n", v, commit, abi.VersionMajor, abi.VersionMinor)
	return err
}

func policyCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 && args[0] == "test" {
		return policyTestCmd(ctx, args[1:], stdout, stderr)
	}
	if len(args) > 0 && args[0] == "manifest" {
		return policyManifestCmd(ctx, args[1:], stdout, stderr)
	}
	if len(args) > 0 && args[0] == "diff" {
		return policyDiffCmd(ctx, args[1:], stdout, stderr)
	}
	if len(args) == 0 || args[0] != "validate" {
		return fmt.Errorf("%w: policy needs a subcommand: validate, test, manifest or diff", errUsage)
	}
	fs := flag.NewFlagSet("policy validate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfgFile := fs.String("config", "", "configuration file (YAML) whose sandbox limits apply")
	var sets flags.Sets
	fs.Var(&sets, "set", "override a configuration key, key=value (repeatable), e.g. -set sandbox.memoryPages=64")
	if err := fs.Parse(args[1:]); err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	if fs.NArg() != 1 {
		return fmt.Errorf("%w: policy validate takes one module file", errUsage)
	}
	cfg, err := config.Load(config.Source{File: *cfgFile, Environ: os.Environ(), Overrides: sets})
	if err != nil {
		return fmt.Errorf("configuration: %w", err)
	}
	return validate(ctx, fs.Arg(0), cfg.Sandbox, stdout, stderr)
}

func validate(ctx context.Context, path string, sandbox config.Sandbox, w, stderr io.Writer) error {
	lf, err := loadFile(ctx, path, sandbox, stderr)
	if err != nil {
		return err
	}
	defer lf.rt.Close(context.Background())
	m := lf.m
	major, minor := m.ABIVersion()
	minPages, maxPages, hasMax := m.MemoryPages()
	fmt.Fprintf(w, "module     %s\nsha256     %x\nsize       %d bytes (loaded and validated in %v)\nABI        %d.%d (host speaks %d.%d)\n",
		path, m.SHA256(), lf.size, lf.took.Round(time.Microsecond), major, minor, abi.VersionMajor, abi.VersionMinor)
	var slots []string
	for _, s := range abi.Slots {
		implemented := true
		for _, e := range s.RequiredExports() {
			implemented = implemented && m.HasExport(e)
		}
		if implemented {
			name := s.String()
			if k := s.KeyExport(); k != "" && m.HasExport(k) {
				name += " (with sort key)"
			}
			slots = append(slots, name)
		}
	}
	if len(slots) == 0 {
		slots = []string{"none: the module exports no slot's functions"}
	}
	mem := fmt.Sprintf("%d pages initial, limit %d pages", minPages, sandbox.MemoryPages)
	if hasMax {
		mem = fmt.Sprintf("%d pages initial, %d max, limit %d pages", minPages, maxPages, sandbox.MemoryPages)
	}
	imports := m.Imports()
	if len(imports) == 0 {
		imports = []string{"none"}
	}
	fmt.Fprintf(w, "slots      %s\nexports    %s\nimports    %s\nmemory     %s\n",
		strings.Join(slots, ", "), strings.Join(m.Exports(), ", "), strings.Join(imports, ", "), mem)
	return nil
}

// loadedFile is a module file loaded as the scheduler would load it, in a
// runtime of its own that the caller closes.
type loadedFile struct {
	rt   *wasm.Runtime
	m    *wasm.Module
	size int           // bytes
	took time.Duration // compile and validation
}

// loadFile loads the module at path under the configured sandbox limits
// and watchdog, logging the runtime's warnings to stderr: what `policy
// validate` reports on and `policy test` runs.
func loadFile(ctx context.Context, path string, sandbox config.Sandbox, stderr io.Writer) (*loadedFile, error) {
	bin, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	rt, err := wasm.NewRuntime(ctx, wasm.WithLogger(log), wasm.WithWatchdogTick(sandbox.WatchdogTick))
	if err != nil {
		return nil, err
	}
	start := time.Now()
	m, err := rt.Load(ctx, path, bin, app.Limits(sandbox))
	if err != nil {
		rt.Close(context.Background())
		return nil, err
	}
	return &loadedFile{rt: rt, m: m, size: len(bin), took: time.Since(start)}, nil
}
