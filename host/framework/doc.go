// Package framework is the scheduler's native plugin runtime: the
// extension points a plugin implements, the profile that runs a list of
// plugins in upstream's order with their weights, and what runs them for
// one pod: the per-pod preparation (upstream's PreFilter and PreScore), the
// filter over a node, the adaptive number of feasible nodes to look for, the
// parallel round-robin search for them, the weighted score sum, the host
// choice and the FitError message. The plugins themselves are packages of
// their own (host/framework/plugins/<name>/), and a Registry of their rows
// builds a profile from a KubeSchedulerConfiguration profile. The scheduling
// cycle (host/cycle) and preemption's dry runs (host/preempt) run the
// profile host/app builds, so a plugin is picked up everywhere by its row.
//
// # Layout
//
//   - framework.go, reserve.go: the extension points (PreFilterPlugin,
//     PodFilter, PodUpdater, PreScorePlugin, PodScorer, ReservePlugin,
//     PreBindPlugin, PostFilterPlugin, PreEnqueuePlugin) and, in reserve.go,
//     the profile's Reserve, Unreserve, PostFilter and PreBind.
//   - profile.go: Profile and Entry; state.go: PodState and Prepare;
//     filter.go, feasible.go, score.go, diagnosis.go, status.go: the
//     filter, the search, the scores, the FitError and the statuses.
//   - registry.go: Row (a plugin's name, extension points, default weight,
//     args codec and factory) and Registry; config.go: Registry.Build and
//     Check, upstream's merge of a profile's plugins over the default ones;
//     args.go: DecodeArgs, the strict decoding of a plugin's args.
//   - handle.go: Handle, what one scheduler's plugins share (listers,
//     client, DRA state, volume caches, claim recorder, parallelism), and
//     Listers; volumelisters.go: Listers' reads of storage objects.
//   - unsupported.go: the placeholder of an upstream plugin not written
//     yet, which refuses a pod carrying a hard constraint only that plugin
//     checks, in its name, rather than place it as if the constraint were
//     not there. Every plugin of the default profile is written; the
//     mechanism stays for the next one upstream adds.
//   - frameworktest: the tests' pod and node builders.
//
// Each plugin package (host/framework/plugins/<name>/) declares in its
// doc comment the extension points it implements, the codes and reasons it
// rejects with and its score weight, and its registry row (Row) next to its
// code; host/framework/plugins lists the rows (InTree). A plugin package
// imports this package and plugins/helper, never another plugin, the cycle
// or the queue (make lint checks it).
//
// # Configuration
//
// Registry.Build turns one KubeSchedulerConfiguration profile's plugins and
// pluginConfig into the profile's entries, merged over the registry's
// default rows as upstream merges them, each plugin's args decoded,
// defaulted and validated by its row as upstream's v1 API does; what
// wasmsched cannot honour is refused by name. A plugin holds its args as
// plain fields set once (nodeResourcesFit's scoring strategy and ignored
// resources, nodeAffinity's addedAffinity, ...): nothing is looked up per
// node. The default args keep the plugins' fast paths (LeastAllocated and
// BalancedAllocation over cpu and memory without per-pod state). An Entry
// may leave out extension points (NoPreFilter, NoFilter, NoScore,
// NoReserve, NoPreBind), as a configuration disables them.
//
// # Adding a plugin
//
// Write a package host/framework/plugins/<name>/ with a type implementing
// Plugin and the extension points it needs: PreFilterPlugin (its PreFilter
// returns a PodFilter bound to the pod's state, or nil to skip the pod, and
// optionally the nodes the pod is restricted to), PreScorePlugin (a
// PodScorer, optionally a ScoreNormalizer), and PodUpdater on its PodFilter
// when its state counts pods on other nodes. Declare its Row (points,
// default weight, Args with upstream's defaults and validation, New) and
// add the row to host/framework/plugins.InTree, or pass it to
// app.WithPlugin from a program of your own. Nothing else changes: Prepare
// runs every PreFilter of the profile, Filter every filter the pod did not
// skip, Score every PreScore and scorer, and preemption's dry runs and the
// cycle's nominated pods update the PodUpdaters. (When the profile outgrows
// the arrays PodState keeps its filters and scorers in,
// TestStateArraysHoldDefault says to grow them.)
//
// A plugin that holds something beside the pod's room on the node
// (VolumeBinding's volumes, DynamicResources' devices) also implements
// ReservePlugin (Reserve once the pod is assumed, Unreserve when its
// placement is undone) and PreBindPlugin (PreBind, writing to the API
// before the pod is bound), in reserve.go. The profile runs them in its
// order (Profile.Reserve, PreBind: stop at the first failure;
// Profile.Unreserve: every reserve plugin, in reverse); host/cycle calls
// Reserve after assuming the pod (in a pod-group cycle, on the snapshot as
// each member is placed) and PreBind from the pod's binding goroutine,
// never from preemption's dry runs. What such a plugin keeps for the pod
// lives in the pod's PodState, which goes with the pod into its binding
// goroutine: PodState.PluginFilter returns the filter its PreFilter
// returned (its per-pod state, kept only for these plugins, even when its
// filter is disabled), PodState.Write and Read store anything else.
// PreBindPreFlight runs before PreBind: a plugin with work has the cycle
// write the pod's nominatedNodeName first, one with none is left out of
// PreBind. A profile without such a plugin skips these steps at no cost; in
// the default profile VolumeBinding and DynamicResources are two, and cost
// a pod without claims a nil check at each.
//
// # Parity
//
// wasmsched is judged side by side with upstream, so everything a user can
// observe is upstream's: the filter order (the first failing filter names a
// node's reason), the status codes, the reason texts, the message
// "0/3 nodes are available: 1 Insufficient cpu, 2 node(s) didn't match Pod's
// node affinity/selector.", the score formulas and weights (TaintToleration 3,
// NodeAffinity 2, NodeResourcesFit 1, PodTopologySpread 2,
// InterPodAffinity 2, NodeResourcesBalancedAllocation 1).
//
// A cycle uses it as
//
//	ps, st := profile.Prepare(podInfo, snap)       // once per pod: upstream's PreFilter
//	var diag framework.Diagnosis
//	if st != nil { diag.RecordPreFilter(st); ... } // rejected before any node
//	want := framework.NumFeasibleNodesToFind(pct, int32(len(nodes)))
//	feasible, next := framework.FindFeasible(ctx, ps, nodes, start, int(want), workers, &diag)
//	ps.AddNominated(ni, nominatedPods)             // per node with nominated pods
//	scores, st = framework.Score(ps, feasible, scores) // PreScore and Score
//	node := framework.SelectHost(feasible, scores, rnd)
//	msg := diag.Message(len(nodes))                // when nothing was feasible
//
// # Cost
//
// Prepare does the per-pod work once (parsing the affinity, the scalar
// requests, the features), and keeps only the filters and scorers of the
// plugins that apply to the pod, so that filtering a node is a loop over a
// few interface calls and a pod without a constraint pays nothing for the
// plugin that checks it (no nodeName, no host ports, no nodeSelector, no
// feature, no pod affinity, no spread constraint: six of the nine filters
// skipped, InterPodAffinity's too when no pod's anti-affinity matches it).
// The plugins that count pods on other nodes read the snapshot's lists of
// nodes with affinity pods, not every pod. A plugin whose per-pod state
// is the pod itself binds it as a named pointer type over cache.PodInfo
// (type nodePortsFilter cache.PodInfo), which allocates nothing; the others
// allocate one small struct per pod that uses them. Filtering and scoring
// a node allocate nothing in the common case: a feasible node costs no
// allocation, a rejected one only its entry in the Diagnosis. A scorer
// scores the whole feasible list in one call, so that scoring makes one
// dynamic call per plugin, not per node.
//
// # Notes
//
//   - Statuses returned by this package may be shared between nodes and pods:
//     treat them as read-only.
//   - There is no CycleState: each plugin's per-pod state is its PodFilter or
//     PodScorer value (docs/RATIONALE.md says why); reserve and preBind
//     plugins reach theirs through PodState.PluginFilter and keep more with
//     PodState.Write.
//   - Required node affinity with nodeSelectorTerms and preferred node
//     affinity are matched by k8s.io/component-helpers, which allocates a
//     small fields map per node; nodeSelector alone allocates nothing.
//   - Deviations from upstream, all outside what a default v1.37 cluster
//     exercises: a scoring strategy configured with an extended resource
//     backed by DRA scores it only on nodes that advertise it (upstream's
//     also counts the class's devices on the others); the Lt/Gt toleration operators
//     are off (upstream's TaintTolerationComparisonOperators, alpha, off); a
//     pending pod never has a deferred resize, so the
//     InPlacePodVerticalScalingSchedulerPreemption skips do not arise.
//   - PreScore runs in Score, after filtering, as upstream's; like
//     upstream, a cycle with a single feasible node does not score.
//   - The cycle tells the state which pods are nominated to which node
//     (AddNominated); Filter then checks those nodes as upstream's
//     RunFilterPluginsWithNominatedPods: with the nominated pods, and also
//     without them when a filter keeps state about other pods.
//   - Ties between the best scores are broken uniformly at random
//     (SelectHost). Upstream v1.37 keeps the order of its score heap unless
//     an extender set a random tie-breaker, which in practice is the arbitrary
//     order its parallel filtering found the nodes in.
package framework
