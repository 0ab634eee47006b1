package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/wasmsched/wasmsched/e2e/testenv"
	"github.com/wasmsched/wasmsched/host/policyapi"
)

// shadowPolicies are the Shadows of the shadow kind: object name, slot and
// module (relative to the repository root).
var shadowPolicies = []struct{ name, slot, module string }{
	{"perf-shadow-sort", "queueSort", filepath.Join("guest-sdk", "examples", "fifosort", "fifosort.wasm")},
	{"perf-shadow-hints", "queueingHint", filepath.Join("policies", "hints", "hints.wasm")},
}

// startShadowed installs the SchedulingPolicy API, creates the Shadows for
// the perf profile, starts wasmsched as the wasm kind and returns once
// both Shadows are evaluated; stopping it deletes them, so the next
// scheduler of the run meets none.
func startShadowed(ctx context.Context, env *testenv.Env, bin string) (running, error) {
	root, err := testenv.RepoRoot()
	if err != nil {
		return nil, err
	}
	if err := env.Apply(ctx, filepath.Join(root, "deploy", "crd.yaml")); err != nil {
		return nil, fmt.Errorf("install the SchedulingPolicy API: %w", err)
	}
	ri := env.Dynamic().Resource(policyapi.GVR)
	deleteAll := func() {
		for _, sp := range shadowPolicies {
			if err := ri.Delete(context.Background(), sp.name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
				fmt.Fprintf(os.Stderr, "perf: delete SchedulingPolicy %s: %v\n", sp.name, err)
			}
		}
	}
	// The CRD is served a moment after it is created.
	deadline := time.Now().Add(time.Minute)
	for _, sp := range shadowPolicies {
		bin, err := os.ReadFile(filepath.Join(root, sp.module))
		if err != nil {
			return nil, err
		}
		u, err := policyapi.ToUnstructured(policyapi.New(sp.name, policyapi.Spec{Profile: schedulerName, Slot: sp.slot,
			Mode: policyapi.ModeShadow, Module: policyapi.Module{Inline: bin}}))
		if err != nil {
			return nil, err
		}
		for {
			_, err = ri.Create(ctx, u, metav1.CreateOptions{})
			if err == nil || apierrors.IsAlreadyExists(err) || time.Now().After(deadline) {
				break
			}
			time.Sleep(200 * time.Millisecond)
		}
		if err != nil && !apierrors.IsAlreadyExists(err) {
			deleteAll()
			return nil, fmt.Errorf("create the Shadow %s: %w", sp.name, err)
		}
	}
	r, err := startWasmsched(ctx, env, schedShadow, bin)
	if err != nil {
		deleteAll()
		return nil, err
	}
	// Shadows load before the scheduler reports ready; their status says
	// so a moment later.
	for _, sp := range shadowPolicies {
		for {
			u, err := ri.Get(ctx, sp.name, metav1.GetOptions{})
			if err == nil {
				if p, err := policyapi.FromUnstructured(u); err == nil && shadowing(p) {
					break
				}
			}
			if time.Now().After(deadline) {
				r.stop()
				deleteAll()
				return nil, errors.New("the Shadow " + sp.name + " is not evaluated within a minute: see the scheduler's log")
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	return shadowed{r, deleteAll}, nil
}

func shadowing(p *policyapi.SchedulingPolicy) bool {
	for _, r := range p.Status.Replicas {
		if r.State == policyapi.StateShadowing {
			return true
		}
	}
	return false
}

type shadowed struct {
	running
	cleanup func()
}

func (s shadowed) stop() {
	s.running.stop()
	s.cleanup()
}
