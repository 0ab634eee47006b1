package e2e

import (
	"testing"

	"github.com/wasmsched/wasmsched/e2e/testenv"
)

// Every test starts its own kube-apiserver on the binary's shared etcd
// (testenv.Start), so Nodes and cluster-scoped objects are private to it.
func TestMain(m *testing.M) { testenv.Main(m) }
