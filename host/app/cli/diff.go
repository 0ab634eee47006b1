package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/wasmsched/wasmsched/abi"
	"github.com/wasmsched/wasmsched/config"
	"github.com/wasmsched/wasmsched/guest-sdk/policytest"
	"github.com/wasmsched/wasmsched/host/app/cli/internal/flags"
	"github.com/wasmsched/wasmsched/host/policyapi"
)

// `wasmsched policy diff A.wasm B.wasm --cases FILE` runs one case file
// through one slot of two modules, each loaded as the scheduler loads it,
// and prints the cases where their answers differ. FILE is a case file
// (guest-sdk/policytest's format), or SchedulingPolicies as `kubectl get
// schedulingpolicy NAME -o yaml` prints them (one object or a List): the
// samples a Shadow recorded carry their decision as a case whose want is
// the serving policy's answer, so a disagreement seen in production is run
// again offline, and --write-cases keeps it as a regression test.

func policyDiffCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("policy diff", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfgFile := fs.String("config", "", "configuration file (YAML) whose sandbox limits apply")
	casesFile := fs.String("cases", "", "a case file, or SchedulingPolicies (kubectl get -o yaml) whose Shadow samples are the cases (required)")
	writeCases := fs.String("write-cases", "", "also write the cases read as a case file here (for SchedulingPolicies: their samples, the serving policy's answers as want)")
	var sets flags.Sets
	fs.Var(&sets, "set", "override a configuration key, key=value (repeatable)")
	files, err := parseWithFiles(fs, args)
	if err != nil {
		return err
	}
	if len(files) != 2 {
		return fmt.Errorf("%w: policy diff takes two module files, A and B", errUsage)
	}
	if *casesFile == "" {
		return fmt.Errorf("%w: policy diff needs --cases FILE", errUsage)
	}
	cfg, err := config.Load(config.Source{File: *cfgFile, Environ: os.Environ(), Overrides: sets})
	if err != nil {
		return fmt.Errorf("configuration: %w", err)
	}
	data, err := os.ReadFile(*casesFile)
	if err != nil {
		return err
	}
	if data, err = casesFromPolicies(*casesFile, data); err != nil {
		return err
	}
	cases, err := policytest.ParseCaseFile(*casesFile, data)
	if err != nil {
		return err
	}
	if *writeCases != "" {
		out, err := yaml.JSONToYAML(data)
		if err == nil {
			err = os.WriteFile(*writeCases, out, 0o644)
		}
		if err != nil {
			return fmt.Errorf("--write-cases: %w", err)
		}
	}
	return diffCases(ctx, files[0], files[1], cases, cfg, stdout, stderr)
}

// casesFromPolicies turns SchedulingPolicies into a case file of their
// Shadow samples (JSON); a case file is returned as it is.
func casesFromPolicies(path string, data []byte) ([]byte, error) {
	var head struct {
		Kind  string            `json:"kind"`
		Items []json.RawMessage `json:"items"`
	}
	if err := yaml.Unmarshal(data, &head); err != nil || (head.Kind != policyapi.Kind && head.Kind != "List" && head.Kind != policyapi.Kind+"List") {
		return data, nil // a case file: ParseCaseFile says what is wrong with it
	}
	items := head.Items
	if head.Kind == policyapi.Kind {
		j, err := yaml.YAMLToJSON(data)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		items = []json.RawMessage{j}
	}
	slot := ""
	var cases []json.RawMessage
	for i, raw := range items {
		var p policyapi.SchedulingPolicy
		if err := json.Unmarshal(raw, &p); err != nil {
			return nil, fmt.Errorf("%s: item %d: %w", path, i, err)
		}
		if slot != "" && p.Spec.Slot != slot {
			return nil, fmt.Errorf("%s: SchedulingPolicies of two slots (%s, %s): diff one slot at a time (kubectl get schedulingpolicy NAME -o yaml)", path, slot, p.Spec.Slot)
		}
		slot = p.Spec.Slot
		for _, r := range p.Status.Replicas {
			if r.Shadow == nil {
				continue
			}
			for _, s := range r.Shadow.Samples {
				if s.Case != "" {
					cases = append(cases, json.RawMessage(s.Case))
				}
			}
		}
	}
	if len(cases) == 0 {
		return nil, fmt.Errorf("%s: no Shadow samples with a case in status.replicas[].shadow.samples: a Shadow records them as it disagrees (or fails)", path)
	}
	if _, ok := abi.ParseSlot(slot); !ok {
		return nil, fmt.Errorf("%s: spec.slot %q: want one of %s", path, slot, abi.SlotNames())
	}
	return json.Marshal(struct {
		Slot  string            `json:"slot"`
		Cases []json.RawMessage `json:"cases"`
	}{slot, cases})
}

var errDiffer = errors.New("the modules answer differently")

// diffCases runs every case through modules a and b.
func diffCases(ctx context.Context, a, b string, f *policytest.CaseFile, cfg *config.Config, w, stderr io.Writer) error {
	type side struct {
		path  string
		rec   *caseRecorder
		slots policytest.Slots
	}
	var sides [2]side
	for i, path := range []string{a, b} {
		lf, err := loadFile(ctx, path, cfg.Sandbox, stderr)
		if err != nil {
			return err
		}
		defer lf.rt.Close(context.Background())
		rec := &caseRecorder{}
		slots, err := wasmSlot(lf.m, f.Slot(), rec)
		if err != nil {
			return fmt.Errorf("%s: slot %s: %w", path, f.Slot(), err)
		}
		sides[i] = side{path, rec, slots}
	}
	cases := f.Cases()
	differ := 0
	for i := range cases {
		c := &cases[i]
		var got [2]string
		var want string // the case's: for a Shadow's sample, the serving policy's answer
		for j := range sides {
			s := &sides[j]
			s.rec.failures = s.rec.failures[:0]
			r := c.Run(s.slots)
			got[j], want = r.Got, r.Want
			if len(s.rec.failures) > 0 {
				got[j] = "failed (" + strings.Join(s.rec.failures, "; ") + ")"
			}
		}
		if got[0] == got[1] {
			fmt.Fprintf(w, "SAME  %s: %s\n", c.Name(), got[0])
			continue
		}
		differ++
		fmt.Fprintf(w, "DIFF  %s: A %s, B %s (want %s)\n", c.Name(), got[0], got[1], want)
	}
	fmt.Fprintf(w, "A %s, B %s, slot %s: %d cases, %d differ\n", a, b, f.Slot(), len(cases), differ)
	if differ > 0 {
		return fmt.Errorf("%w on %d of %d cases", errDiffer, differ, len(cases))
	}
	return nil
}
