package app

import (
	"context"
	"errors"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	kschedv1 "k8s.io/kube-scheduler/config/v1"
)

// elect schedules while this replica holds the Lease. Losing it ends Run
// with an error, as upstream does: another replica may be scheduling
// already, and a fresh start rebuilds the state from the apiserver.
func (a *App) elect(ctx context.Context) error {
	le, log := a.election, a.log
	if le.Namespace == metav1.NamespaceSystem && le.Name == kschedv1.SchedulerDefaultLockObjectName {
		// A KubeSchedulerConfiguration's default Lease: next to the
		// cluster's own kube-scheduler, the two would take turns.
		log.Warn("leader election uses kube-scheduler's own Lease: while this replica leads, a kube-scheduler using it does not schedule; "+
			"set leaderElection.resourceName (or -set leaderElection.name) to a Lease of wasmsched's own if both should run",
			"lease", le.Namespace+"/"+le.Name)
	}
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
