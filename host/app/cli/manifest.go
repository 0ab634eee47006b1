package cli

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/yaml"

	"github.com/wasmsched/wasmsched/abi"
	"github.com/wasmsched/wasmsched/config"
	"github.com/wasmsched/wasmsched/host/app/cli/internal/flags"
	"github.com/wasmsched/wasmsched/host/policyapi"
)

// policyManifestCmd is `wasmsched policy manifest`: it validates a module
// as `policy validate` does, checks that it serves the slot, and prints the
// SchedulingPolicy that puts it there, so that
// `wasmsched policy manifest fifo.wasm --slot queueSort | kubectl apply -f -`
// is a swap on every replica.
func policyManifestCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("policy manifest", flag.ContinueOnError)
	fs.SetOutput(stderr)
	slotName := fs.String("slot", "", "the slot the module serves: "+abi.SlotNames())
	profile := fs.String("profile", "", "scheduler name of the profile (default: the default profile)")
	name := fs.String("name", "", "the object's name (default: the file's name without .wasm, plus the slot)")
	cmRef := fs.String("configmap", "", "NAME/KEY: refer to a binaryData key of a ConfigMap in the scheduler's namespace instead of putting the module inline")
	cfgFile := fs.String("config", "", "configuration file (YAML) whose sandbox limits the module is validated under")
	mode := fs.String("mode", "", "Active (the default: the module serves the slot) or Shadow (it is evaluated beside what serves the slot, deciding nothing)")
	rate := fs.String("sample-rate", "", "a Shadow's sample rate, 0 to 1 (default 1; 0.1 of the pops for the sorts)")
	var sets flags.Sets
	fs.Var(&sets, "set", "override a configuration key, key=value (repeatable)")
	// The module may come before the flags, as in the usage line.
	var file string
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		file, args = args[0], args[1:]
	}
	if err := fs.Parse(args); err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	if file == "" && fs.NArg() == 1 {
		file = fs.Arg(0)
	} else if fs.NArg() != 0 || file == "" {
		return fmt.Errorf("%w: policy manifest takes one module file", errUsage)
	}
	slot, ok := abi.ParseSlot(*slotName)
	if !ok {
		return fmt.Errorf("%w: --slot %q: want one of %s", errUsage, *slotName, abi.SlotNames())
	}
	switch *mode {
	case "", policyapi.ModeActive, policyapi.ModeShadow:
	default:
		return fmt.Errorf("%w: --mode %q: want Active or Shadow", errUsage, *mode)
	}
	if *rate != "" && *mode != policyapi.ModeShadow {
		return fmt.Errorf("%w: --sample-rate is a Shadow's: add --mode Shadow", errUsage)
	}
	if *rate != "" {
		if _, err := policyapi.ParseSampleRate(*rate); err != nil {
			return fmt.Errorf("%w: --sample-rate %w", errUsage, err)
		}
	}
	if *name == "" {
		*name = strings.ToLower(strings.TrimSuffix(filepath.Base(file), ".wasm")) + "-" + strings.ToLower(slot.String())
		if *mode == policyapi.ModeShadow {
			// Not the active object's name: applying a shadow must not
			// turn the policy serving the slot into one.
			*name += "-shadow"
		}
	}
	if msgs := validation.IsDNS1123Subdomain(*name); len(msgs) > 0 {
		return fmt.Errorf("%w: --name %q is not a valid object name: %s", errUsage, *name, strings.Join(msgs, "; "))
	}
	cfg, err := config.Load(config.Source{File: *cfgFile, Environ: os.Environ(), Overrides: sets})
	if err != nil {
		return fmt.Errorf("configuration: %w", err)
	}
	lf, err := loadFile(ctx, file, cfg.Sandbox, stderr)
	if err != nil {
		return fmt.Errorf("refused: %w", err)
	}
	defer lf.rt.Close(context.Background())
	for _, exp := range slot.RequiredExports() {
		if !lf.m.HasExport(exp) {
			return fmt.Errorf("refused: %s cannot serve the %s slot: it does not export %s (check the slot, or build the module with the guest SDK's package for it)", file, slot, exp)
		}
	}
	bin, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	sum := sha256.Sum256(bin)
	spec := policyapi.Spec{Profile: *profile, Slot: slot.String(), SHA256: hex.EncodeToString(sum[:]), Mode: *mode}
	if *rate != "" {
		spec.Shadow = &policyapi.ShadowSpec{SampleRate: *rate}
	}
	if *cmRef != "" {
		cm, key, ok := strings.Cut(*cmRef, "/")
		if !ok || cm == "" || key == "" {
			return fmt.Errorf("%w: --configmap %q: want NAME/KEY", errUsage, *cmRef)
		}
		spec.Module.ConfigMapRef = &policyapi.ConfigMapKeyRef{Name: cm, Key: key}
	} else {
		spec.Module.Inline = bin
	}
	obj := policyapi.New(*name, spec)
	// Only what the object asks for: no status, no empty metadata fields.
	out, err := yaml.Marshal(struct {
		APIVersion string         `json:"apiVersion"`
		Kind       string         `json:"kind"`
		Metadata   map[string]any `json:"metadata"`
		Spec       policyapi.Spec `json:"spec"`
	}{obj.APIVersion, obj.Kind, map[string]any{"name": obj.Name}, obj.Spec})
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "# %s: sha256 %s, %d bytes, validated for slot %s\n", file, spec.SHA256, len(bin), slot)
	if spec.Module.ConfigMapRef != nil {
		fmt.Fprintf(stdout, "# put the module in the ConfigMap first: kubectl -n %s create configmap %s --from-file=%s=%s\n",
			cfg.PolicyAPI.Namespace, spec.Module.ConfigMapRef.Name, spec.Module.ConfigMapRef.Key, file)
	}
	_, err = stdout.Write(out)
	return err
}
