package main

import (
	"context"
	"fmt"
	"strconv"

	"github.com/wasmsched/wasmsched/e2e/testenv"
)

// startControllers runs kube-controller-manager with the given controllers
// and the schedulers' client limits (its default, 20 requests/s, would
// make it the bottleneck of any workload that needs it).
func startControllers(ctx context.Context, env *testenv.Env, controllers []string) (*testenv.ControllerManager, error) {
	cm, err := env.StartControllerManager(ctx, testenv.ControllerManagerOptions{
		Controllers: controllers, Verbosity: 1,
		Args: []string{"--kube-api-qps=" + strconv.Itoa(clientQPS), "--kube-api-burst=" + strconv.Itoa(clientBurst)},
	})
	if err != nil {
		return nil, fmt.Errorf("kube-controller-manager (%v): %w", controllers, err)
	}
	return cm, nil
}
