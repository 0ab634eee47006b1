// Package app assembles the scheduler from its parts and runs it: what
// kube-scheduler splits between scheduler.New (the profiles, their queues
// and frameworks, the cache, the informers' handlers) and app.Run (the
// servers, the informers' start, leader election, the scheduling loop).
//
// New builds, in this order, and fails on the first error with everything
// built so far released:
//
//  1. the metrics collectors, on the registry of WithRegistry or one of
//     the App's own;
//  2. the Wasm runtime (host/wasm) and the event broadcaster, on the
//     client of WithEventClient;
//  3. the cache (host/cache) and, per profile of the configuration, a
//     queue (host/queue) on the native defaults;
//  4. the plugin registry (upstream's in-tree plugins, host/framework/plugins,
//     and those of WithPlugin), the informer factory and over it the
//     framework.Handle every plugin factory receives (listers, client, the
//     DRA state, the volume caches, the claim recorder, parallelism): one
//     per scheduler, shared by its profiles; then the informers and their
//     event handlers (host/cluster), which feed the cache and the queues
//     once started, the claims' events through the DRA state;
//  5. per profile, its plugins (Registry.Build of the profile's plugins and
//     pluginConfig over the Handle), a scheduling cycle (host/cycle) with
//     preemption, then
//     the profile's policy set (host/policy), whose installer puts each
//     slot in its queue (SetSort, SetBackoffSort, SetPreEnqueue,
//     SetQueueingHint) or cycle (SetVictimOrder), and the modules of the
//     configuration loaded into it: a module that cannot be loaded is an
//     error of New;
//  6. the HTTP handler (/metrics, /healthz, /livez, /readyz, GET
//     /policies, with policies.adminEndpoint POST /policies/{slot}, with
//     metrics.profiling /debug/pprof/) and, when metrics.bindAddress is
//     set, its plain listener;
//  7. when secureServing.bindAddress is set, the HTTPS listener
//     (host/secure): the same reads without the upload, behind the API
//     server's authentication and authorization (the client of
//     WithAuthClient), the probes open to anyone.
//  8. with policyAPI.enabled, a dynamic client (WithDynamicClient) and the
//     CRD installed, the watch of SchedulingPolicies (policyWatch).
//
// Run serves the listeners, reloads the policies on SIGHUP and on changes of
// the configuration or module files (WithReload), starts the informers and
// waits for their caches, loads the modules of the SchedulingPolicies
// (on every replica, so that a new leader already serves them), reports
// ready, and then schedules: at once, or
// while this replica holds the Lease when leader election is on. It returns
// when its context ends, or with an error when the lease is lost, and
// releases everything New built.
//
// # Notes
//
//   - A reload changes the policy modules only: settings other than the
//     policies need a restart, and a reload that changes them says so.
//   - The informers start before the election, as upstream's do, so that a
//     replica that becomes leader schedules from a warm cache at once.
//   - A slot's module comes from, in order: the SchedulingPolicy holding it,
//     the configuration, the binary. A reload skips the slots objects hold,
//     POST /policies/{slot} answers 409 for them, and deleting the object
//     loads the configured module again.
//   - The replica's identity (WithIdentity, default $POD_NAME or
//     host_pid) names it in the Lease and in the objects' status.replicas.
package app
