// Command perf is the side-by-side benchmark of `make bench-e2e`: on one
// freshly started control plane (etcd v3.6.16 + kube-apiserver v1.37.1, no
// kubelets: nodes are created directly, as upstream scheduler_perf does) it
// runs each workload under (a) upstream kube-scheduler v1.37.1, (b) wasmsched
// with the reference policies compiled natively and (c) wasmsched with the
// same policies as Wasm modules, alternating the order from round to round,
// then the in-memory variant (wasmsched-bench) and the QueueingHints memory
// soak, and writes the results (markdown, JSON, PNG plots) to -out.
//
// On request (-schedulers ...,ceiling) it also runs the ceiling
// (e2e/perf/ceiling): no scheduler but a binder that binds each pod
// round-robin and writes kube-scheduler's Scheduled event for it, the API
// writes of a scheduled pod and nothing else, so that the report can say
// how near wasm comes to what the API and the machine allow (wasm/ceiling).
// It runs on the workloads where those writes are all a scheduler makes
// (not on the preemption, volume, DRA and Unschedulable ones), and its
// placements are not checked: it honours no constraint.
//
//	go run ./e2e/perf -out docs/benchmarks            # everything, ~100 min on 2 cores
//	go run ./e2e/perf -workloads SchedulingBasic -rounds 1 -soak-cycles 0
//	go run ./e2e/perf -workloads TopologySpreading,SchedulingPodAffinity -scale 0.1 -rounds 1 -soak-cycles 0 -settle 1s
//	go run ./e2e/perf -workloads SchedulingBasic,ConstraintMix -schedulers upstream,wasm,ceiling -soak-cycles 0
//
// With -schedulers ...,althints -hints-module FILE it also runs wasmsched
// with that QueueingHints module instead of the reference one, the before
// and after of a hints change under one load (docs/benchmarks/CHURN.md):
//
//	go run ./e2e/perf -workloads ChurnAffinity -schedulers upstream,wasm,althints -hints-module /tmp/old-hints.wasm -rounds 1 -soak-cycles 0
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/wasmsched/wasmsched/e2e/perf/report"
	"github.com/wasmsched/wasmsched/e2e/testenv"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := runMain(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	if err != nil {
		fmt.Fprintf(os.Stderr, "perf: %v\n", err)
		os.Exit(1)
	}
}

// harness holds what every run shares.
type harness struct {
	env       *testenv.Env
	wasmsched string // binary
	bench     string // the wasmsched-bench binary, for the in-memory variant
	ceiling   string // the ceiling binder's binary, when -schedulers names it
	log       io.Writer
	seq       int
	lastProg  time.Time
	// profileDir, when set, receives a CPU profile of each run's scheduler
	// over its measured phase.
	profileDir string
	// hintsModule is the QueueingHints module of the althints scheduler.
	hintsModule string
}

func (h *harness) logf(format string, args ...any) {
	fmt.Fprintf(h.log, "%s %s\n", time.Now().Format("15:04:05"), fmt.Sprintf(format, args...))
}

// progress is logf at most every 5 s.
func (h *harness) progress(format string, args ...any) {
	if time.Since(h.lastProg) < 5*time.Second {
		return
	}
	h.lastProg = time.Now()
	h.logf(format, args...)
}

// options are the command's flags.
type options struct {
	workloads   []string
	schedulers  []string
	rounds      int
	scale       float64
	soakCycles  int
	settle      time.Duration
	out         string
	wasmsched   string
	bench       string
	ceiling     string
	profileDir  string
	hintsModule string
}

func parseFlags(args []string, stderr io.Writer) (options, error) {
	var o options
	fs := flag.NewFlagSet("perf", flag.ContinueOnError)
	fs.SetOutput(stderr)
	all := []string{}
	for _, w := range workloads(1) {
		all = append(all, w.name)
	}
	all = append(all, inMemory)
	wl := fs.String("workloads", strings.Join(all, ","), "comma-separated workloads to run")
	sc := fs.String("schedulers", strings.Join([]string{schedUpstream, schedNative, schedWasm, schedCeiling}, ","), "comma-separated schedulers: upstream, native, wasm, ceiling "+
		"(e2e/perf/ceiling: no scheduler but a binder that binds each pod round-robin and writes kube-scheduler's Scheduled event, the API writes of a scheduled pod and nothing else, "+
		"to report wasm/ceiling; it runs on the workloads where those writes are all a scheduler makes), and, not run unless named, "+
		"placement (wasm with the nodepool filter and the gpupack score), althints (wasm with the QueueingHints module of -hints-module) and shadow (wasm with two Shadows: fifosort beside the queue sort, the built-in hints beside themselves)")
	fs.IntVar(&o.rounds, "rounds", 3, "runs of each workload per scheduler; the order of the schedulers rotates each round, so with 3 each runs first, second and third once")
	fs.Float64Var(&o.scale, "scale", 1, "multiplies every workload's node and pod counts (gang sizes stay 8-16)")
	fs.IntVar(&o.soakCycles, "soak-cycles", 30, "cycles of each memory-soak phase (0: no soak)")
	fs.DurationVar(&o.settle, "settle", runSettle, "pause after each run's cleanup, for the apiserver and etcd to finish its deletions (a small -scale needs less)")
	fs.StringVar(&o.out, "out", "", "directory for README.md, results.json and the PNG plots (empty: print only)")
	fs.StringVar(&o.profileDir, "cpuprofile-dir", "", "write a CPU profile of each run's scheduler over (the first 15 s of) its measured phase into this directory; profiling costs a few percent, so not for the figures")
	fs.StringVar(&o.hintsModule, "hints-module", "", "the QueueingHints module, a .wasm `file`, of -schedulers althints: e.g. an older build of policies/hints for a before/after in one run (git show afc75ea:policies/hints/hints.wasm > /tmp/old-hints.wasm)")
	fs.StringVar(&o.wasmsched, "wasmsched", "", "the wasmsched binary (empty: go build ./cmd/wasmsched into a temporary directory)")
	fs.StringVar(&o.bench, "wasmsched-bench", "", "the wasmsched-bench binary of the in-memory variant (empty: go build ./cmd/wasmsched-bench into a temporary directory)")
	fs.StringVar(&o.ceiling, "ceiling", "", "the ceiling binder's binary, for -schedulers ceiling (empty: go build ./e2e/perf/ceiling into a temporary directory)")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	o.workloads = split(*wl)
	o.schedulers = split(*sc)
	for _, w := range o.workloads {
		if !slices.Contains(all, w) {
			return o, fmt.Errorf("-workloads: unknown workload %q: use some of %s", w, strings.Join(all, ","))
		}
	}
	for _, s := range o.schedulers {
		if !slices.Contains(schedKinds, s) {
			return o, fmt.Errorf("-schedulers: unknown scheduler %q: use some of %s", s, strings.Join(schedKinds, ","))
		}
	}
	if slices.Contains(o.schedulers, schedAltHints) {
		if o.hintsModule == "" {
			return o, fmt.Errorf("-schedulers %s needs -hints-module FILE", schedAltHints)
		}
		abs, err := filepath.Abs(o.hintsModule) // the scheduler runs in the control plane's directory
		if err != nil {
			return o, err
		}
		if _, err := os.Stat(abs); err != nil {
			return o, fmt.Errorf("-hints-module: %w", err)
		}
		o.hintsModule = abs
	}
	if o.rounds < 1 || o.scale <= 0 || o.soakCycles < 0 || o.settle < 0 {
		return o, fmt.Errorf("-rounds must be >= 1, -scale > 0, -soak-cycles >= 0 and -settle >= 0 (got %d, %g, %d, %v)", o.rounds, o.scale, o.soakCycles, o.settle)
	}
	return o, nil
}

func split(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// runSettle is the default pause after each run's cleanup (-settle).
const runSettle = 5 * time.Second

// rotate returns the schedulers in round's order: round 1 as given, each
// later round starting one further, so that over 3 rounds each scheduler
// runs once in each position. The position matters: a fixed order put wasm
// right after native in every round, and the later run met an apiserver and
// etcd still busy with the previous run's thousands of deletions.
func rotate(scheds []string, round int) []string {
	k := (round - 1) % len(scheds)
	return append(slices.Clone(scheds[k:]), scheds[:k]...)
}

func runMain(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	o, err := parseFlags(args, stderr)
	if err != nil {
		return err
	}
	rep, err := execute(ctx, o, stderr)
	if rep == nil {
		return err
	}
	rep.CommandLine = "go run ./e2e/perf " + strings.Join(args, " ")
	if terr := rep.Text(stdout); terr != nil {
		err = errors.Join(err, terr)
	}
	if o.out != "" {
		if werr := report.WriteDir(o.out, rep); werr != nil {
			return errors.Join(err, werr)
		}
		fmt.Fprintf(stderr, "perf: results in %s\n", o.out)
	}
	return err
}

// execute runs everything o asks for and returns the report, also when a
// run failed (the failure is in the report and the error).
func execute(ctx context.Context, o options, log io.Writer) (*report.Report, error) {
	h := &harness{log: log, profileDir: o.profileDir, hintsModule: o.hintsModule}
	if o.profileDir != "" {
		if err := os.MkdirAll(o.profileDir, 0o755); err != nil {
			return nil, err
		}
	}
	rep := &report.Report{Title: "wasmsched vs kube-scheduler v1.37.1", Started: time.Now().UTC(), Machine: machine(), Versions: map[string]string{}}
	needCeiling := slices.Contains(o.schedulers, schedCeiling)
	if o.wasmsched == "" || o.bench == "" || (needCeiling && o.ceiling == "") {
		dir, err := os.MkdirTemp("", "wasmsched-perf-bin-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(dir)
		root, err := testenv.RepoRoot()
		if err != nil {
			return nil, err
		}
		for _, b := range []struct {
			bin *string
			pkg string
		}{{&o.wasmsched, "./cmd/wasmsched"}, {&o.bench, "./cmd/wasmsched-bench"}, {&o.ceiling, "./e2e/perf/ceiling"}} {
			if *b.bin != "" || (b.pkg == "./e2e/perf/ceiling" && !needCeiling) {
				continue
			}
			*b.bin = filepath.Join(dir, filepath.Base(b.pkg))
			h.logf("building %s", filepath.Base(b.pkg))
			cmd := exec.CommandContext(ctx, "go", "build", "-o", *b.bin, b.pkg)
			cmd.Dir = root
			if out, err := cmd.CombinedOutput(); err != nil {
				return nil, fmt.Errorf("go build %s: %v\n%s", b.pkg, err, out)
			}
		}
	}
	h.wasmsched, h.bench, h.ceiling = o.wasmsched, o.bench, o.ceiling

	h.logf("starting etcd and kube-apiserver")
	// Deleting a run's thousands of pods is most of the time between runs:
	// kube-apiserver deletes a collection with one worker by default.
	env, err := testenv.New(ctx, testenv.Options{Progress: log, APIServerFlags: []string{"--delete-collection-workers=8"}})
	if err != nil {
		return nil, err
	}
	defer env.Stop()
	h.env = env
	if _, err := os.Stat(filepath.Join(env.BinDir(), "kube-scheduler")); err != nil && slices.Contains(o.schedulers, schedUpstream) {
		return nil, fmt.Errorf("upstream kube-scheduler is not built: run `make cluster` (hack/cluster.sh build kube-scheduler) first: %w", err)
	}
	versions(ctx, env, rep.Versions)
	if err := ensurePriorityClasses(ctx, env); err != nil {
		return nil, err
	}

	var errs []error
	byName := map[string]*workload{}
	for _, w := range workloads(o.scale) {
		byName[w.name] = w
	}
	for _, name := range o.workloads {
		if name == inMemory {
			rep.Workloads = append(rep.Workloads, inMemoryWorkload(o.scale))
			continue
		}
		w := byName[name]
		rep.Workloads = append(rep.Workloads, report.Workload{Name: w.name, Description: w.description})
	}
	for _, name := range o.workloads {
		if why := ceilingSkipped(name, byName); why != "" && needCeiling {
			rep.Notes = append(rep.Notes, fmt.Sprintf("The ceiling did not run %s: %s.", name, why))
		}
		for round := 1; round <= o.rounds; round++ {
			for _, kind := range rotate(o.schedulers, round) {
				if err := ctx.Err(); err != nil {
					return rep, err
				}
				if kind == schedCeiling && ceilingSkipped(name, byName) != "" {
					continue
				}
				var r report.Run
				if name == inMemory {
					if kind == schedUpstream {
						continue
					}
					r = h.measureInMemory(ctx, kind, round, o.scale)
				} else {
					h.logf("== %s under %s, round %d/%d", name, kind, round, o.rounds)
					r = h.measure(ctx, byName[name], kind, round)
					// Let the apiserver and etcd finish with the deletions
					// of the run before the next one starts.
					if err := sleep(ctx, o.settle); err != nil {
						return rep, err
					}
				}
				if r.Err != "" {
					errs = append(errs, fmt.Errorf("%s/%s round %d: %s", name, kind, round, r.Err))
				}
				rep.Runs = append(rep.Runs, r)
			}
		}
	}
	if o.soakCycles > 0 {
		for _, kind := range o.schedulers {
			if kind == schedNative || kind == schedCeiling {
				continue // the soak is about the queue's in-flight events, which native and wasm share and the ceiling has none of
			}
			h.logf("== memory soak under %s, %d cycles per phase", kind, o.soakCycles)
			samples, err := h.soak(ctx, kind, o.soakCycles)
			rep.Soak = append(rep.Soak, samples...)
			if err != nil {
				errs = append(errs, fmt.Errorf("soak/%s: %w", kind, err))
				rep.Notes = append(rep.Notes, fmt.Sprintf("The soak under %s failed: %v", kind, err))
			}
		}
	}
	for _, e := range errs {
		rep.Notes = append(rep.Notes, "Failed: "+firstLine(e.Error()))
	}
	return rep, errors.Join(errs...)
}

// ceilingSkipped says why the ceiling does not run workload name ("": it
// does).
func ceilingSkipped(name string, byName map[string]*workload) string {
	if name == inMemory {
		return "the in-memory variant is wasmsched's own binary"
	}
	return byName[name].noCeiling
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// machine describes this machine for the report.
func machine() string {
	model := "unknown CPU"
	if f, err := os.Open("/proc/cpuinfo"); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
				model = strings.TrimSpace(v)
				break
			}
		}
		f.Close()
	}
	mem := ""
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "MemTotal:"); ok {
				var kb int64
				fmt.Sscanf(strings.TrimSpace(v), "%d", &kb)
				mem = fmt.Sprintf(", %.0f GiB", float64(kb)/(1<<20))
			}
		}
	}
	return fmt.Sprintf("%d cores%s, %s/%s, %s, %s", runtime.NumCPU(), mem, runtime.GOOS, runtime.GOARCH, model, runtime.Version())
}

// versions records what ran: the apiserver's /version, the binaries' own
// version output.
func versions(ctx context.Context, env *testenv.Env, out map[string]string) {
	if v, err := env.Client.Discovery().ServerVersion(); err == nil {
		out["kube-apiserver"] = v.GitVersion
	}
	run := func(name, prefix, bin string, args ...string) {
		b, err := exec.CommandContext(ctx, bin, args...).CombinedOutput()
		if err == nil {
			out[name] = strings.TrimPrefix(firstLine(strings.TrimSpace(string(b))), prefix)
		}
	}
	run("kube-scheduler", "Kubernetes ", filepath.Join(env.BinDir(), "kube-scheduler"), "--version")
	run("etcd", "etcd Version: ", filepath.Join(env.BinDir(), "etcd"), "--version")
	// The commit measured: the binary is built from the working tree.
	if root, err := testenv.RepoRoot(); err == nil {
		cmd := exec.CommandContext(ctx, "git", "describe", "--always", "--dirty")
		cmd.Dir = root
		if b, err := cmd.Output(); err == nil {
			out["wasmsched"] = "commit " + strings.TrimSpace(string(b))
		}
	}
	out["go"] = runtime.Version()
}
