// Command wasmsched-bench measures what the wasmsched scheduler itself
// costs: its whole pipeline in one process against an in-memory cluster
// (client-go's fake clientset), no apiserver. It is not part of the
// wasmsched binary, which thus does not link the fake clientset;
// `wasmsched-bench -h` says what it measures and what it leaves out.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/wasmsched/wasmsched/host/app/cli/benchcli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := benchcli.Run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
