package e2e

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/wasmsched/wasmsched/e2e/testenv"
)

// Every test starts its own kube-apiserver on the binary's shared etcd
// (testenv.Start), so Nodes and cluster-scoped objects are private to it.
// The wasmsched binary the tests built (schedulerBinary) is removed after
// them: 130 MB in the temporary directory per run otherwise.
func TestMain(m *testing.M) {
	testenv.Main(m, func() {
		if binary != "" {
			_ = os.RemoveAll(filepath.Dir(binary))
		}
	})
}
