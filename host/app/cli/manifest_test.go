package cli

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"

	"github.com/wasmsched/wasmsched/host/policyapi"
)

// TestPolicyManifest: the printed object decodes strictly into a
// SchedulingPolicy that carries the module (inline, or the ConfigMap key)
// with its sha256, for the slot and profile asked for; a module refused by
// the loader, or that does not serve the slot, prints nothing and exits 1
// with the reason.
func TestPolicyManifest(t *testing.T) {
	fifo := filepath.Join("..", "..", "..", "guest-sdk", "examples", "fifosort", "fifosort.wasm")
	bin, err := os.ReadFile(fifo)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(bin)
	pin := hex.EncodeToString(sum[:])
	decode := func(t *testing.T, out string) *policyapi.SchedulingPolicy {
		t.Helper()
		var p policyapi.SchedulingPolicy
		if err := yaml.UnmarshalStrict([]byte(out), &p); err != nil {
			t.Fatalf("the manifest does not decode: %v\n%s", err, out)
		}
		return &p
	}

	t.Run("inline", func(t *testing.T) {
		code, out, errOut := runCLI("policy", "manifest", fifo, "--slot", "queueSort")
		if code != 0 {
			t.Fatalf("code %d, stderr %q", code, errOut)
		}
		want := policyapi.New("fifosort-queuesort", policyapi.Spec{Slot: "queueSort", Module: policyapi.Module{Inline: bin}, SHA256: pin})
		if diff := cmp.Diff(want, decode(t, out)); diff != "" {
			t.Errorf("manifest (-want, +got):\n%s", diff)
		}
		if !strings.Contains(out, "inline: AGFzbQ") {
			t.Errorf("the module is not inline as base64:\n%.300s", out)
		}
	})
	t.Run("shadow", func(t *testing.T) {
		code, out, errOut := runCLI("policy", "manifest", fifo, "--slot", "queueSort", "--mode", "Shadow", "--sample-rate", "0.5")
		if code != 0 {
			t.Fatalf("code %d, stderr %q", code, errOut)
		}
		// Named apart from the active object, which applying it must not
		// replace.
		want := policyapi.New("fifosort-queuesort-shadow", policyapi.Spec{Slot: "queueSort", Module: policyapi.Module{Inline: bin}, SHA256: pin,
			Mode: policyapi.ModeShadow, Shadow: &policyapi.ShadowSpec{SampleRate: "0.5"}})
		if diff := cmp.Diff(want, decode(t, out)); diff != "" {
			t.Errorf("manifest (-want, +got):\n%s", diff)
		}
	})
	t.Run("configmap", func(t *testing.T) {
		code, out, errOut := runCLI("policy", "manifest", "--slot", "queueSort", "--profile", "wasmsched-fifo", "--name", "fifo",
			"--configmap", "policies/fifo.wasm", fifo)
		if code != 0 {
			t.Fatalf("code %d, stderr %q", code, errOut)
		}
		want := policyapi.New("fifo", policyapi.Spec{Profile: "wasmsched-fifo", Slot: "queueSort", SHA256: pin,
			Module: policyapi.Module{ConfigMapRef: &policyapi.ConfigMapKeyRef{Name: "policies", Key: "fifo.wasm"}}})
		if diff := cmp.Diff(want, decode(t, out)); diff != "" {
			t.Errorf("manifest (-want, +got):\n%s", diff)
		}
		if !strings.Contains(out, "kubectl -n wasmsched create configmap policies --from-file=fifo.wasm="+fifo) {
			t.Errorf("no hint to create the ConfigMap:\n%s", out)
		}
	})
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"forbidden import", []string{filepath.Join("..", "..", "..", "host", "policy", "wasmslot", "testdata", "faults", "queueSort-fs.wasm"), "--slot", "queueSort"}, 1, "refused: load module \"../../../host/policy/wasmslot/testdata/faults/queueSort-fs.wasm\": forbidden imports"},
		{"wrong slot", []string{fifo, "--slot", "preEnqueue"}, 1, "cannot serve the preEnqueue slot: it does not export wasmsched_pre_enqueue"},
		{"unknown slot", []string{fifo, "--slot", "placement"}, 2, `--slot "placement": want one of queueSort, backoffSort`},
		{"no slot", []string{fifo}, 2, `--slot "": want one of`},
		{"bad configmap", []string{fifo, "--slot", "queueSort", "--configmap", "nokey"}, 2, "want NAME/KEY"},
		{"bad name", []string{fifo, "--slot", "queueSort", "--name", "Not_A_Name"}, 2, "not a valid object name"},
		{"no file", []string{"--slot", "queueSort"}, 2, "takes one module file"},
		{"bad mode", []string{fifo, "--slot", "queueSort", "--mode", "Canary"}, 2, `--mode "Canary": want Active or Shadow`},
		{"rate without shadow", []string{fifo, "--slot", "queueSort", "--sample-rate", "0.5"}, 2, "--sample-rate is a Shadow's: add --mode Shadow"},
		{"bad rate", []string{fifo, "--slot", "queueSort", "--mode", "Shadow", "--sample-rate", "x"}, 2, `--sample-rate "x": want a decimal from 0 to 1`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := runCLI(append([]string{"policy", "manifest"}, tc.args...)...)
			if code != tc.code || !strings.Contains(errOut, tc.want) || out != "" {
				t.Errorf("code %d, stdout %q, stderr %q; want %d, no output and %q", code, out, errOut, tc.code, tc.want)
			}
		})
	}
}
