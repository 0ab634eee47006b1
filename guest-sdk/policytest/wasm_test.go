package policytest

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/wasmsched/wasmsched/abi"
	"github.com/wasmsched/wasmsched/guest-sdk/queuesort"
)

const (
	faulty       = "testdata/faulty/faulty.wasm"
	prioritySort = "../examples/prioritysort/prioritysort.wasm"
)

func byPriority(a, b abi.PodView) bool { return a.Priority() > b.Priority() }

func noPlugin(abi.PodView) abi.Gate { return abi.Gate{Code: abi.GateWait, Reason: "no plugin"} }

// catchCases are runs that must fail, each with a message its output must
// contain. They run in a child process, since a failing *testing.T cannot be
// observed from inside the test binary.
var catchCases = map[string]struct {
	policy Policy
	body   func(t *testing.T, s Slots)
	want   []string
}{
	"trap": {
		policy: Policy{WasmPath: faulty, QueueSort: &queuesort.Policy{Less: byPriority}, PreEnqueue: noPlugin},
		body: func(t *testing.T, s Slots) {
			if strings.HasSuffix(t.Name(), "/wasm") {
				s.QueueSort.Less(MakePod().Name("trap").View(), MakePod().Name("other").View())
			}
		},
		want: []string{
			"--- FAIL: TestWasmRunCatches/wasm",
			"a call into the module's queueSort slot failed (trap)",
			"the queueSort slot answered 1 decisions with the native fallback",
		},
	},
	"refused gate": {
		policy: Policy{WasmPath: faulty, QueueSort: &queuesort.Policy{Less: byPriority}, PreEnqueue: noPlugin},
		body: func(t *testing.T, s Slots) {
			s.PreEnqueue.PreEnqueue(MakePod().Name("p").View())
		},
		want: []string{
			"--- FAIL: TestWasmRunCatches/native",
			"which the host refuses",
			"--- FAIL: TestWasmRunCatches/wasm",
			"a call into the module's preEnqueue slot failed (bad_output)",
		},
	},
	"slot the policy lacks": {
		policy: Policy{WasmPath: faulty, QueueSort: &queuesort.Policy{Less: byPriority}},
		want:   []string{"implements the preEnqueue slot, but the policytest.Policy lacks it"},
	},
	"slot the module lacks": {
		policy: Policy{WasmPath: prioritySort, QueueSort: &queuesort.Policy{Less: byPriority},
			VictimOrder: func(a, b abi.Victim) bool { return false }},
		want: []string{"does not implement the victimOrder slot"},
	},
	"keyed module, policy without key": {
		policy: Policy{WasmPath: prioritySort, QueueSort: &queuesort.Policy{Less: byPriority}},
		want:   []string{"computes sort keys: true; the policytest.Policy has a Key: false"},
	},
	"missing module": {
		policy: Policy{WasmPath: "testdata/nonexistent.wasm", QueueSort: &queuesort.Policy{Less: byPriority}},
		want:   []string{"build it with `make policies`"},
	},
}

const caseEnv = "POLICYTEST_CATCH_CASE"

// TestWasmRunCatches checks that Run fails when the wasm run is not answered
// by the module the Policy describes.
func TestWasmRunCatches(t *testing.T) {
	if name := os.Getenv(caseEnv); name != "" {
		c := catchCases[name]
		body := c.body
		if body == nil {
			body = func(*testing.T, Slots) {}
		}
		Run(t, c.policy, body)
		return
	}
	if testing.Short() {
		t.Skip("runs child processes")
	}
	for name, c := range catchCases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			cmd := exec.Command(os.Args[0], "-test.run=^TestWasmRunCatches$", "-test.v")
			cmd.Env = append(os.Environ(), caseEnv+"="+name)
			out, err := cmd.CombinedOutput()
			if err == nil {
				t.Fatalf("the run passed, want it to fail; output:\n%s", out)
			}
			for _, w := range c.want {
				if !strings.Contains(string(out), w) {
					t.Errorf("output lacks %q; output:\n%s", w, out)
				}
			}
		})
	}
}
