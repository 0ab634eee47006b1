package app

import (
	"context"
	"errors"
	"fmt"

	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
)

// elect schedules while this replica holds the Lease. Losing it ends Run
// with an error, as upstream does: another replica may be scheduling
// already, and a fresh start rebuilds the state from the apiserver.
func (a *App) elect(ctx context.Context) error {
	le, log := a.election, a.log
	id := a.identity
	lock, err := resourcelock.New(resourcelock.LeasesResourceLock, le.Namespace, le.Name,
		a.client.CoreV1(), a.client.CoordinationV1(), resourcelock.ResourceLockConfig{Identity: id})
	if err != nil {
		return fmt.Errorf("leader election lock: %w", err)
	}
	lost := make(chan struct{})
	elector, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
		Lock:            lock,
		LeaseDuration:   le.LeaseDuration,
		RenewDeadline:   le.RenewDeadline,
		RetryPeriod:     le.RetryPeriod,
		ReleaseOnCancel: true,
		Name:            le.Name,
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: func(ctx context.Context) {
				log.Info("became leader", "lease", le.Namespace+"/"+le.Name, "identity", id)
				a.schedule(ctx)
			},
			OnStoppedLeading: func() {
				if a.leading.Load() {
					close(lost)
				}
			},
			OnNewLeader: func(identity string) {
				if identity != id {
					log.Info("another replica leads", "lease", le.Namespace+"/"+le.Name, "leader", identity)
				}
			},
		},
	})
	if err != nil {
		return fmt.Errorf("leader election: %w", err)
	}
	log.Info("waiting for the lease", "lease", le.Namespace+"/"+le.Name, "identity", id)
	elector.Run(ctx)
	select {
	case <-lost:
		if ctx.Err() == nil {
			return errors.New("lost the leader election lease: exiting so that only one replica schedules")
		}
	default:
	}
	return ignoreCanceled(ctx)
}
