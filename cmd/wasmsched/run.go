package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"runtime/debug"
	"strings"
	"time"

	"github.com/wasmsched/wasmsched/abi"
	"github.com/wasmsched/wasmsched/config"
	"github.com/wasmsched/wasmsched/host/app"
	"github.com/wasmsched/wasmsched/host/wasm"
)

const usage = `usage: wasmsched <command> [arguments]

commands:
  run [-kubeconfig FILE] [-config FILE] [-scheduler-name NAME]
      [-metrics-bind-address ADDR] [-leader-elect] [-set key=value]...
                            schedule the pods whose spec.schedulerName is one
                            of the configured profiles (default: wasmsched)
  bench [-nodes 5000] [-init-pods 500] [-pods 5000] [-config FILE]
      [-set key=value]... [-json] [-timeout 5m] [-log-level warn]
                            measure the scheduler's own cost: run its whole
                            pipeline in this process against an in-memory
                            cluster (no apiserver) and report pods/s,
                            attempt latency, CPU and peak memory
                            (wasmsched bench -h says what it leaves out)
  help [config]             this text, or every configuration key with its
                            default, environment variable and meaning
  version                   print the version and the policy ABI it speaks
  policy validate [-config FILE] [-set key=value]... MODULE
                            load a policy module as the scheduler would, under
                            the configured sandbox limits, and report its ABI
                            version, slots, exports, imports and memory;
                            exits 1 if the module is refused
  policy test [-config FILE] [-set key=value]... MODULE --cases CASES.yaml
                            run a table of inputs through one slot of a module,
                            loaded as by validate, and compare the answers with
                            the expected ones (see cmd/wasmsched/testdata);
                            exits 1 if a case fails or the module is refused
  policy manifest MODULE --slot SLOT [--profile P] [--name N]
      [--configmap NAME/KEY] [-config FILE] [-set key=value]...
                            validate the module as validate does, then print
                            the SchedulingPolicy that puts it in the slot, with
                            its sha256 (the module inline, or a ConfigMap key):
                            wasmsched policy manifest fifo.wasm --slot queueSort | kubectl apply -f -
`

// errUsage marks errors whose remedy is the usage text.
var errUsage = errors.New("usage")

// run is the whole CLI, so tests can drive it: it returns the exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	var err error
	switch args[0] {
	case "run":
		err = serveCmd(ctx, args[1:], stdout, stderr)
	case "bench":
		err = benchCmd(ctx, args[1:], stdout, stderr)
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
	default:
		err = fmt.Errorf("%w: unknown command %q", errUsage, args[0])
	}
	switch {
	case err == nil:
		return 0
	case errors.Is(err, errUsage):
		fmt.Fprintf(stderr, "wasmsched: %v\n\n%s", err, usage)
		return 2
	default:
		fmt.Fprintf(stderr, "wasmsched: %v\n", err)
		return 1
	}
}

func version(w io.Writer) error {
	v := "(devel)"
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		v = bi.Main.Version
	}
	_, err := fmt.Fprintf(w, "wasmsched %s\npolicy ABI %d.%d\n", v, abi.VersionMajor, abi.VersionMinor)
	return err
}

func policyCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 && args[0] == "test" {
		return policyTestCmd(ctx, args[1:], stdout, stderr)
	}
	if len(args) > 0 && args[0] == "manifest" {
		return policyManifestCmd(ctx, args[1:], stdout, stderr)
	}
	if len(args) == 0 || args[0] != "validate" {
		return fmt.Errorf("%w: policy needs a subcommand: validate, test or manifest", errUsage)
	}
	fs := flag.NewFlagSet("policy validate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfgFile := fs.String("config", "", "configuration file (YAML) whose sandbox limits apply")
	var sets setFlags
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

// setFlags collects repeated -set key=value flags.
type setFlags map[string]string

// overrides are the -set values as a fresh map, for the command's own
// flags to be added to.
func (s setFlags) overrides() map[string]string {
	out := make(map[string]string, len(s))
	maps.Copy(out, s)
	return out
}

// parseLogLevel reads -log-level.
func parseLogLevel(s string) (slog.Level, error) {
	var level slog.Level
	if err := level.UnmarshalText([]byte(s)); err != nil {
		return 0, fmt.Errorf("%w: -log-level %q: want debug, info, warn or error", errUsage, s)
	}
	return level, nil
}

func (s *setFlags) String() string { return "" }

func (s *setFlags) Set(v string) error {
	k, val, ok := strings.Cut(v, "=")
	if !ok || k == "" {
		return fmt.Errorf("want key=value, got %q", v)
	}
	if *s == nil {
		*s = setFlags{}
	}
	(*s)[k] = val
	return nil
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
