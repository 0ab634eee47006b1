// Command wasmsched is a Kubernetes scheduler whose queueing, gating and
// preemption policies are sandboxed WebAssembly modules. The command itself
// is package host/app/cli; a program that builds its own wasmsched binary
// with extra app options calls cli.Run as this main does.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/wasmsched/wasmsched/host/app/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.Run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
