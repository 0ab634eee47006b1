// Command buildwatch is hack/cluster.sh's companion for long cold builds: it
// checks before a build that the machine has the disk and memory the build
// needs, and runs a build step while printing a progress line at a steady
// interval, so a newcomer can tell a slow build from a hung one.
//
//	buildwatch check -disk 9GiB -mem 2GiB DIR...
//	buildwatch run -what "kube-apiserver v1.37.1" -typical "8-10 min" -next "etcd, KWOK" -- CMD [ARG...]
//
// It imports only the standard library so that cluster.sh can build it in
// seconds on a machine whose module cache is still empty.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
	"time"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stderr)
	stop()
	os.Exit(code)
}

const usage = `usage: buildwatch check [-disk SIZE] [-mem SIZE] DIR...
       buildwatch run -what WHAT [-typical TEXT] [-next TEXT] [-every DURATION] -- CMD [ARG...]`

func run(ctx context.Context, args []string, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintln(stderr, usage)
		return 2
	}
	var err error
	switch args[0] {
	case "check":
		err = runCheck(args[1:], stderr)
	case "run":
		err = runWatched(ctx, args[1:], stderr)
	default:
		err = fmt.Errorf("unknown command %q\n%s", args[0], usage)
	}
	if err == nil {
		return 0
	}
	var exit *exec.ExitError
	if errors.As(err, &exit) && exit.ExitCode() > 0 {
		return exit.ExitCode() // the build said why on its own stderr
	}
	fmt.Fprintf(stderr, "cluster.sh: error: %v\n", err)
	return 1
}

func runCheck(args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("check", flag.ContinueOnError)
	fs.SetOutput(stderr)
	disk := sizeFlag(9 << 30)
	mem := sizeFlag(2 << 30)
	fs.Var(&disk, "disk", "free disk space the build needs, summed over the filesystems of DIR...")
	fs.Var(&mem, "mem", "available memory the build needs")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return errors.New("check: name the directories the build writes to (cache, GOCACHE, GOMODCACHE)")
	}
	return checkResources(hostResources{}, fs.Args(), uint64(disk), uint64(mem))
}

func runWatched(ctx context.Context, args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var p progress
	every := fs.Duration("every", 30*time.Second, "interval between progress lines")
	fs.StringVar(&p.what, "what", "", "what is built, e.g. \"kube-apiserver v1.37.1\"")
	fs.StringVar(&p.typical, "typical", "", "how long a cold build usually takes, e.g. \"8-10 min\"")
	fs.StringVar(&p.next, "next", "", "what is built after this, e.g. \"etcd, KWOK\"")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if p.what == "" || fs.NArg() == 0 {
		return fmt.Errorf("run: -what and a command after -- are required\n%s", usage)
	}
	cmd := exec.CommandContext(ctx, fs.Arg(0), fs.Args()[1:]...)
	// The step's stdout goes to stderr too: cluster.sh prints only its bin dir on stdout.
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, stderr, stderr
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("%s: %w", p.what, err)
	}
	ticker := time.NewTicker(*every)
	done := make(chan struct{})
	watched := make(chan struct{})
	go func() {
		p.watch(stderr, start, ticker.C, done)
		close(watched)
	}()
	err := cmd.Wait()
	ticker.Stop()
	close(done)
	<-watched
	if err != nil {
		return err
	}
	fmt.Fprintf(stderr, "cluster.sh: built %s in %s\n", p.what, round(time.Since(start)))
	return nil
}
