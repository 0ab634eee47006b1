package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/wasmsched/wasmsched/abi"
	"github.com/wasmsched/wasmsched/guest-sdk/policytest"
	"github.com/wasmsched/wasmsched/host/policyapi"
)

// TestPolicyDiff runs cases through FIFO and priority sorts: from a case
// file, and from a SchedulingPolicy's Shadow samples, which --write-cases
// keeps as a case file.
func TestPolicyDiff(t *testing.T) {
	ex := filepath.Join("..", "..", "..", "guest-sdk", "examples")
	fifo, prio := filepath.Join(ex, "fifosort", "fifosort.wasm"), filepath.Join(ex, "prioritysort", "prioritysort.wasm")
	dir := t.TempDir()
	cases := filepath.Join(dir, "cases.yaml")
	if err := os.WriteFile(cases, []byte(`slot: queueSort
cases:
- name: old low before young high
  less: {a: {name: old, priority: 1, created: 10}, b: {name: young, priority: 100, created: 20}}
  want: true
- name: equal priority, older first
  less: {a: {name: old, priority: 5, created: 10, queued: 10}, b: {name: young, priority: 5, created: 20, queued: 20}}
  want: true
`), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runCLI("policy", "diff", fifo, prio, "--cases", cases)
	if code != 1 || !strings.Contains(out, "DIFF  old low before young high: A true, B false (want true)") ||
		!strings.Contains(out, "SAME  equal priority, older first: true") || !strings.Contains(out, "2 cases, 1 differ") {
		t.Errorf("fifo vs priority: code %d\n%s%s", code, out, errOut)
	}
	if code, out, errOut := runCLI("policy", "diff", fifo, fifo, "--cases", cases); code != 0 || !strings.Contains(out, "2 cases, 0 differ") {
		t.Errorf("fifo vs itself: code %d\n%s%s", code, out, errOut)
	}

	// A Shadow's sample: FIFO would have popped "old" before "young",
	// which the serving priority sort popped first.
	rec := func(name string, prio int32, created int64) map[string]any {
		return map[string]any{"record": abi.AppendPod(nil, &abi.Pod{UID: name, Namespace: "ns", Name: name, Priority: prio, CreationTime: created})}
	}
	c, err := json.Marshal(map[string]any{"name": "ns/old before ns/young", "less": map[string]any{"a": rec("old", 1, 10), "b": rec("young", 100, 20)}, "want": false})
	if err != nil {
		t.Fatal(err)
	}
	p := policyapi.New("fifo-shadow", policyapi.Spec{Slot: "queueSort", Mode: policyapi.ModeShadow})
	p.Status.Replicas = []policyapi.ReplicaStatus{{Name: "r1", Shadow: &policyapi.ShadowStatus{Decisions: 3, Disagreements: 1, Since: metav1.Unix(1, 0),
		Samples: []policyapi.ShadowSample{{Pod: "ns/young", Event: "Pop", Kind: "orderInversions", Case: string(c), Time: metav1.Unix(2, 0)}}}}}
	y, err := yaml.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	status := filepath.Join(dir, "policy.yaml")
	if err := os.WriteFile(status, y, 0o644); err != nil {
		t.Fatal(err)
	}
	kept := filepath.Join(dir, "regression.yaml")
	code, out, errOut = runCLI("policy", "diff", prio, fifo, "--cases", status, "--write-cases", kept)
	if code != 1 || !strings.Contains(out, "DIFF  ns/old before ns/young: A false, B true (want false)") {
		t.Errorf("a Shadow's sample: code %d\n%s%s", code, out, errOut)
	}
	f, err := policytest.ReadCaseFile(kept)
	if err != nil {
		t.Fatalf("--write-cases wrote no case file: %v", err)
	}
	if f.Slot() != abi.SlotQueueSort || len(f.Cases()) != 1 {
		t.Errorf("--write-cases: slot %s, %d cases; want queueSort, 1", f.Slot(), len(f.Cases()))
	}

	// Errors.
	p.Status.Replicas[0].Shadow.Samples = nil
	y, _ = yaml.Marshal(p)
	empty := filepath.Join(dir, "empty.yaml")
	if err := os.WriteFile(empty, y, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{fifo, "--cases", cases}, 2, "takes two module files"},
		{[]string{fifo, prio}, 2, "needs --cases FILE"},
		{[]string{fifo, prio, "--cases", empty}, 1, "no Shadow samples with a case"},
	} {
		code, _, errOut := runCLI(append([]string{"policy", "diff"}, tc.args...)...)
		if code != tc.code || !strings.Contains(errOut, tc.want) {
			t.Errorf("policy diff %v: code %d, stderr %q; want %d and %q", tc.args, code, errOut, tc.code, tc.want)
		}
	}
}
