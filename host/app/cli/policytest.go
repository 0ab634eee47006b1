package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/wasmsched/wasmsched/abi"
	"github.com/wasmsched/wasmsched/config"
	"github.com/wasmsched/wasmsched/guest-sdk/policytest"
	"github.com/wasmsched/wasmsched/host/app/cli/internal/flags"
	"github.com/wasmsched/wasmsched/host/policy"
	"github.com/wasmsched/wasmsched/host/wasm"
)

// `wasmsched policy test MODULE --cases CASES.yaml` runs a case file (the
// format of package guest-sdk/policytest, which runs the same files from
// `go test`) through one slot of a module, loaded as the scheduler loads it
// (sandbox limits from -config and -set), and prints each case's answer.
// A call into the module that fails fails its case, even when the native
// default's answer is the one wanted.

// policyTestCmd parses `policy test` arguments; flags may come before or
// after the module file.
func policyTestCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("policy test", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfgFile := fs.String("config", "", "configuration file (YAML) whose sandbox limits apply")
	casesFile := fs.String("cases", "", "YAML file of test cases (required)")
	var sets flags.Sets
	fs.Var(&sets, "set", "override a configuration key, key=value (repeatable), e.g. -set sandbox.deadline=1s")
	files, err := parseWithFiles(fs, args)
	if err != nil {
		return err
	}
	if len(files) != 1 {
		return fmt.Errorf("%w: policy test takes one module file", errUsage)
	}
	if *casesFile == "" {
		return fmt.Errorf("%w: policy test needs --cases FILE", errUsage)
	}
	cfg, err := config.Load(config.Source{File: *cfgFile, Environ: os.Environ(), Overrides: sets})
	if err != nil {
		return fmt.Errorf("configuration: %w", err)
	}
	cases, err := policytest.ReadCaseFile(*casesFile)
	if err != nil {
		return err
	}
	return runCases(ctx, files[0], cases, cfg.Sandbox, stdout, stderr)
}

// parseWithFiles parses args with fs, flags before and after the files
// among them, and returns the files in order.
func parseWithFiles(fs *flag.FlagSet, args []string) ([]string, error) {
	var files []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, fmt.Errorf("%w: %v", errUsage, err)
		}
		if fs.NArg() == 0 {
			return files, nil
		}
		files = append(files, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

// caseRecorder collects the failed calls of one case. It embeds
// policy.Discard for the Recorder methods it does not need.
type caseRecorder struct {
	policy.Discard
	failures []string
}

func (r *caseRecorder) Failed(_ abi.Slot, reason string, err error) {
	r.failures = append(r.failures, reason+": "+err.Error())
}

// wasmSlot returns the host's adapter of the slot under test; the native
// default answers a failed call.
func wasmSlot(m *wasm.Module, slot abi.Slot, rec policy.Recorder) (policytest.Slots, error) {
	var s policytest.Slots
	err := s.AddWasm(m, slot, nil, rec)
	return s, err
}

func runCases(ctx context.Context, path string, f *policytest.CaseFile, sandbox config.Sandbox, w, stderr io.Writer) error {
	lf, err := loadFile(ctx, path, sandbox, stderr)
	if err != nil {
		return err
	}
	defer lf.rt.Close(context.Background())
	rec := &caseRecorder{}
	slots, err := wasmSlot(lf.m, f.Slot(), rec)
	if err != nil {
		return fmt.Errorf("slot %s: %w", f.Slot(), err)
	}
	cases := f.Cases()
	failed := 0
	for i := range cases {
		c := &cases[i]
		rec.failures = rec.failures[:0]
		r := c.Run(slots)
		switch {
		case len(rec.failures) > 0:
			failed++
			fmt.Fprintf(w, "FAIL  %s: the module failed (%s); the native default answered %s, want %s\n",
				c.Name(), strings.Join(rec.failures, "; "), r.Got, r.Want)
		case !r.OK:
			failed++
			fmt.Fprintf(w, "FAIL  %s: got %s, want %s\n", c.Name(), r.Got, r.Want)
		default:
			fmt.Fprintf(w, "PASS  %s: %s\n", c.Name(), r.Got)
		}
	}
	noun := "cases"
	if len(cases) == 1 {
		noun = "case"
	}
	fmt.Fprintf(w, "%s %s: %d %s, %d passed, %d failed\n", path, f.Slot(), len(cases), noun, len(cases)-failed, failed)
	if failed > 0 {
		return fmt.Errorf("%d of %d cases failed", failed, len(cases))
	}
	return nil
}
