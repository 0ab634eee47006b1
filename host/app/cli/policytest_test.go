package cli

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func policyModule(name string) string {
	return filepath.Join("..", "..", "..", "policies", name, name+".wasm")
}

// casesFile is one of the case files of package guest-sdk/policytest, which
// owns the format.
func casesFile(name string) string {
	return filepath.Join("..", "..", "..", "guest-sdk", "policytest", "testdata", "cases", name+".yaml")
}

// noDeadline raises the sandbox deadline of `policy test` to one no case
// reaches: the default 100 ms is wall-clock, and a call descheduled that long
// on a loaded machine would fail its case.
var noDeadline = []string{"-set", "sandbox.deadline=10s"}

// TestPolicyTestPasses runs the reference policies against case files that
// describe them correctly.
func TestPolicyTestPasses(t *testing.T) {
	for _, tc := range []struct {
		module, cases string
		n             int
	}{
		{"backoffpop", "queuesort", 4},
		{"backoffpop", "backoffsort", 5},
		{"gangpreempt", "preenqueue", 4},
		{"hints", "hints", 7},
		{"gangpreempt", "victims", 2},
	} {
		t.Run(tc.cases, func(t *testing.T) {
			code, out, errOut := runCLI(append([]string{"policy", "test", policyModule(tc.module), "--cases", casesFile(tc.cases)}, noDeadline...)...)
			if code != 0 {
				t.Fatalf("code %d, want 0\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
			}
			if got := strings.Count("\n"+out, "\nPASS  "); got != tc.n {
				t.Errorf("%d PASS lines, want %d:\n%s", got, tc.n, out)
			}
			if strings.Contains(out, "FAIL") {
				t.Errorf("output has a FAIL:\n%s", out)
			}
			if want := "cases, " + strconv.Itoa(tc.n) + " passed, 0 failed\n"; !strings.HasSuffix(out, want) {
				t.Errorf("output does not end with the summary %q:\n%s", want, out)
			}
		})
	}
}

// TestPolicyTestFails: wrong expectations fail with got and want, a summary
// and exit code 1; flags may precede the module.
func TestPolicyTestFails(t *testing.T) {
	code, out, errOut := runCLI(append([]string{"policy", "test", "--cases", casesFile("queuesort-fail"), policyModule("backoffpop")}, noDeadline...)...)
	if code != 1 {
		t.Fatalf("code %d, want 1\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	for _, want := range []string{
		"PASS  higher priority first: true\n",
		"FAIL  lower priority first (wrong): got false, want true\n",
		"FAIL  pop order (wrong): got [high low], want [low high]\n",
		"queueSort: 3 cases, 1 passed, 2 failed\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(errOut, "2 of 3 cases failed") {
		t.Errorf("stderr %q lacks the count of failed cases", errOut)
	}
}

// TestPolicyTestModuleFailure: a case the module cannot answer (it overruns
// the configured deadline) fails, even though the native fallback's answer
// is the one wanted.
func TestPolicyTestModuleFailure(t *testing.T) {
	slow := filepath.Join("..", "..", "..", "host", "policy", "wasmslot", "testdata", "faults", "preEnqueue-slow.wasm")
	code, out, errOut := runCLI("policy", "test", slow, "--cases", casesFile("preenqueue-any"), "-set", "sandbox.deadline=50ms")
	if code != 1 {
		t.Fatalf("code %d, want 1\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	for _, want := range []string{"FAIL  a pod with an odd priority is admitted: the module failed (deadline:", "longer than 50ms", "the native default answered admit, want admit"} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout lacks %q:\n%s", want, out)
		}
	}
}

// TestPolicyTestRefused: a module that cannot serve the file's slot, or that
// the sandbox refuses, is an error before any case runs.
func TestPolicyTestRefused(t *testing.T) {
	for _, tc := range []struct {
		module, cases string
		want          []string
	}{
		{policyModule("backoffpop"), casesFile("preenqueue"), []string{"slot preEnqueue", "does not export wasmsched_pre_enqueue"}},
		{filepath.Join("..", "..", "..", "host", "policy", "wasmslot", "testdata", "faults", "preEnqueue-fs.wasm"), casesFile("preenqueue-any"), []string{"preEnqueue-fs.wasm", "forbidden imports wasi_snapshot_preview1.path_open"}},
	} {
		code, out, errOut := runCLI("policy", "test", tc.module, "--cases", tc.cases)
		if code != 1 || out != "" {
			t.Errorf("%s with %s: code %d, stdout %q; want 1 and no case run", tc.module, tc.cases, code, out)
		}
		for _, want := range tc.want {
			if !strings.Contains(errOut, want) {
				t.Errorf("%s with %s: stderr %q lacks %q", tc.module, tc.cases, errOut, want)
			}
		}
	}
}

// TestPolicyTestMalformedCases: a case file the command cannot use is an
// error naming the file, the line or case, and the field.
func TestPolicyTestMalformedCases(t *testing.T) {
	bogusSlot := filepath.Join(t.TempDir(), "bogus.yaml")
	if err := os.WriteFile(bogusSlot, []byte("slot: queueSrot\ncases:\n- less: {a: {}, b: {}}\n  want: true\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		file string
		want []string
	}{
		{casesFile("bad-field"), []string{"bad-field.yaml:6: case 2", `unknown field "priorty"`}},
		{casesFile("bad-want"), []string{`bad-want.yaml:3: case 1 ("one hint short")`, "want: 1 hints for 2 pods"}},
		{casesFile("bad-enum"), []string{`bad-enum.yaml:3: case 1 ("unknown action")`, `event.action: "UpdateNodeLabels" is not an action`}},
		{casesFile("bad-question"), []string{"bad-question.yaml:3", "less: not a question for the preEnqueue slot"}},
		{casesFile("bad-syntax"), []string{"bad-syntax.yaml", "line 4"}},
		{bogusSlot, []string{"bogus.yaml: slot:", `"queueSrot" is not a slot`, "queueSort, backoffSort"}},
	} {
		t.Run(filepath.Base(tc.file), func(t *testing.T) {
			code, out, errOut := runCLI("policy", "test", policyModule("hints"), "--cases", tc.file)
			if code != 1 || out != "" {
				t.Errorf("code %d, stdout %q; want 1 and no case run", code, out)
			}
			for _, want := range tc.want {
				if !strings.Contains(errOut, want) {
					t.Errorf("stderr %q lacks %q", errOut, want)
				}
			}
		})
	}
}

func TestPolicyTestUsage(t *testing.T) {
	mod, cases := policyModule("backoffpop"), casesFile("queuesort")
	for _, args := range [][]string{
		{"policy", "test", mod},
		{"policy", "test", "--cases", cases},
		{"policy", "test", mod, mod, "--cases", cases},
		{"policy", "test", "--frobnicate", mod, "--cases", cases},
	} {
		code, _, errOut := runCLI(args...)
		if code != 2 || !strings.Contains(errOut, "usage: wasmsched") || !strings.Contains(errOut, "policy test") {
			t.Errorf("%q: code %d, stderr %q; want 2 and the usage", args, code, errOut)
		}
	}
	code, _, errOut := runCLI("policy", "test", mod, "--cases", filepath.Join(t.TempDir(), "missing.yaml"))
	if code != 1 || !strings.Contains(errOut, "missing.yaml") {
		t.Errorf("missing case file: code %d, stderr %q; want 1 and the file's name", code, errOut)
	}
}
