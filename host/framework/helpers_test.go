package framework_test

import (
	"fmt"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/wasmsched/wasmsched/abi"
	"github.com/wasmsched/wasmsched/host/cache"
	. "github.com/wasmsched/wasmsched/host/framework"
	ft "github.com/wasmsched/wasmsched/host/framework/frameworktest"
	intree "github.com/wasmsched/wasmsched/host/framework/plugins"
	"github.com/wasmsched/wasmsched/host/framework/plugins/nodeaffinity"
	"github.com/wasmsched/wasmsched/host/framework/plugins/nodename"
	"github.com/wasmsched/wasmsched/host/framework/plugins/nodeports"
	"github.com/wasmsched/wasmsched/host/framework/plugins/nodeunschedulable"
	"github.com/wasmsched/wasmsched/host/framework/plugins/tainttoleration"
)

// The framework's tests run the in-tree plugins (host/framework/plugins),
// so they are an external test package; export_test.go lends them the
// internals they check. The framework package itself is imported with a
// dot, so that the tests read as the package's own.

// build is the in-tree registry's Build over a handle of l.
func build(l Listers, c Config) (Built, error) {
	return upstream().Build(NewHandle(HandleOptions{Listers: l}), c)
}

// upstream is the in-tree registry less wasmsched's own plugins (the
// placement plugins, which do nothing without a module): upstream's
// plugins, whose profiles the package's tests compare with upstream's.
var upstream = sync.OnceValue(func() *Registry {
	var rows []Row
	for _, r := range intree.InTree().Rows() {
		if !strings.HasPrefix(r.Name, "wasmsched.io/") {
			rows = append(rows, r)
		}
	}
	return MustRegistry(rows...)
})

// defaultProfileOver is the default profile over a handle of l.
func defaultProfileOver(l Listers) *Profile {
	p, err := upstream().Default(NewHandle(HandleOptions{Listers: l}))
	if err != nil {
		panic(err)
	}
	return p
}

// defaultProfile is the default profile without listers (no namespace
// labels, no default spreading), built once for the package's tests.
var defaultProfile = sync.OnceValue(func() *Profile { return defaultProfileOver(Listers{}) })

// prepare is defaultProfile().Prepare.
func prepare(pod *cache.PodInfo, snap *cache.Snapshot) (*PodState, *Status) {
	return defaultProfile().Prepare(pod, snap)
}

func mustPrepare(pi *cache.PodInfo) *PodState {
	ps, st := prepare(pi, nil)
	if st != nil {
		panic(fmt.Sprintf("Prepare: %+v", st))
	}
	return ps
}

// state is the pod's state under the default profile, on no snapshot.
func state(b *ft.PodBuilder) *PodState { return mustPrepare(b.Info()) }

// The shared statuses of the plugins the tests meet most, as their
// packages build them (each returns its one value for every node).
var (
	statusNodeName = &Status{Code: UnschedulableAndUnresolvable, Plugin: abi.PluginNodeName,
		Reasons: []string{nodename.ReasonNodeName}}
	statusUnschedulable = &Status{Code: UnschedulableAndUnresolvable, Plugin: abi.PluginNodeUnschedulable,
		Reasons: []string{nodeunschedulable.ReasonUnschedulable}}
	statusTaint = &Status{Code: UnschedulableAndUnresolvable, Plugin: abi.PluginTaintToleration,
		Reasons: []string{tainttoleration.ReasonUntoleratedTaint}}
	statusNodeAffinity = &Status{Code: UnschedulableAndUnresolvable, Plugin: abi.PluginNodeAffinity,
		Reasons: []string{nodeaffinity.ReasonNodeAffinity}}
	statusNodePorts = &Status{Code: Unschedulable, Plugin: abi.PluginNodePorts,
		Reasons: []string{nodeports.ReasonNodePorts}}
)

// pluginOf is the in-tree plugin named name with its default args.
func pluginOf(name string) Plugin {
	row, ok := intree.InTree().Row(name)
	if !ok || row.New == nil {
		panic("no in-tree plugin " + name)
	}
	var args any
	if row.Args != nil {
		var err error
		if args, err = row.Args(nil, field.NewPath("args")); err != nil {
			panic(err)
		}
	}
	pl, err := row.New(NewHandle(HandleOptions{}), args)
	if err != nil {
		panic(err)
	}
	return pl
}
