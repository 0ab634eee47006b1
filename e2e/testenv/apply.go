package testenv

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/restmapper"
)

// FieldManager is the server-side apply field manager of Apply.
const FieldManager = "wasmsched-testenv"

// Apply applies the multi-document YAML (or JSON) manifests at paths with
// server-side apply, as the admin: ServiceAccounts, RBAC, ConfigMaps,
// Deployments, Namespaces, CRDs, anything the apiserver serves. Namespaces
// and CustomResourceDefinitions go first, the rest in file order. A
// namespaced object without a namespace goes to "default"; an object with
// only metadata.generateName is created instead.
func (e *Env) Apply(ctx context.Context, paths ...string) error {
	var objs []*unstructured.Unstructured
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			return fmt.Errorf("apply: %w", err)
		}
		o, err := decodeManifests(b)
		if err != nil {
			return fmt.Errorf("apply %s: %w", p, err)
		}
		objs = append(objs, o...)
	}
	return e.applyObjects(ctx, objs)
}

// ApplyYAML is Apply for manifests held in memory.
func (e *Env) ApplyYAML(ctx context.Context, manifests []byte) error {
	objs, err := decodeManifests(manifests)
	if err != nil {
		return fmt.Errorf("apply: %w", err)
	}
	return e.applyObjects(ctx, objs)
}

func decodeManifests(b []byte) ([]*unstructured.Unstructured, error) {
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(b), 4096)
	var out []*unstructured.Unstructured
	for doc := 1; ; doc++ {
		var m map[string]any
		if err := dec.Decode(&m); errors.Is(err, io.EOF) {
			return out, nil
		} else if err != nil {
			return nil, fmt.Errorf("document %d: %w", doc, err)
		}
		if len(m) == 0 {
			continue // empty document, or only comments
		}
		u := &unstructured.Unstructured{Object: m}
		if u.GetKind() == "" || u.GetAPIVersion() == "" {
			return nil, fmt.Errorf("document %d: apiVersion and kind are required", doc)
		}
		if u.IsList() {
			err := u.EachListItem(func(o runtime.Object) error {
				out = append(out, o.(*unstructured.Unstructured))
				return nil
			})
			if err != nil {
				return nil, fmt.Errorf("document %d: %w", doc, err)
			}
			continue
		}
		out = append(out, u)
	}
}

func (e *Env) applyObjects(ctx context.Context, objs []*unstructured.Unstructured) error {
	rank := func(u *unstructured.Unstructured) int {
		switch u.GroupVersionKind().GroupKind() {
		case schema.GroupKind{Kind: "Namespace"}:
			return 0
		case schema.GroupKind{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition"}:
			return 1
		}
		return 2
	}
	objs = slices.Clone(objs)
	slices.SortStableFunc(objs, func(a, b *unstructured.Unstructured) int { return rank(a) - rank(b) })
	sawCRD := false
	for _, u := range objs {
		if rank(u) == 1 {
			sawCRD = true
		}
		if err := e.applyOne(ctx, u, sawCRD); err != nil {
			return err
		}
	}
	return nil
}

func (e *Env) applyOne(ctx context.Context, u *unstructured.Unstructured, waitForKinds bool) error {
	gvk := u.GroupVersionKind()
	what := fmt.Sprintf("%s %s", gvk.Kind, u.GetName())
	if u.GetName() == "" {
		what = fmt.Sprintf("%s %s*", gvk.Kind, u.GetGenerateName())
	}
	rm := e.restMapper()
	mapping, err := rm.RESTMapping(gvk.GroupKind(), gvk.Version)
	// A kind unknown to the cached discovery: maybe new (a CRD applied just
	// before, which takes a moment to be served). Refresh and retry.
	deadline := time.Now().Add(10 * time.Second)
	for meta.IsNoMatchError(err) {
		rm.Reset()
		mapping, err = rm.RESTMapping(gvk.GroupKind(), gvk.Version)
		if !meta.IsNoMatchError(err) || !waitForKinds || time.Now().After(deadline) {
			break
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
	if err != nil {
		return fmt.Errorf("apply %s: the apiserver does not serve %s: %w", what, gvk, err)
	}
	var ri dynamic.ResourceInterface = e.dyn.Resource(mapping.Resource)
	if mapping.Scope.Name() == meta.RESTScopeNameNamespace {
		if u.GetNamespace() == "" {
			u.SetNamespace(metav1.NamespaceDefault)
		}
		ri = e.dyn.Resource(mapping.Resource).Namespace(u.GetNamespace())
		what += " in namespace " + u.GetNamespace()
	} else {
		u.SetNamespace("")
	}
	if u.GetName() == "" {
		_, err = ri.Create(ctx, u, metav1.CreateOptions{FieldManager: FieldManager})
	} else {
		_, err = ri.Apply(ctx, u.GetName(), u, metav1.ApplyOptions{FieldManager: FieldManager, Force: true})
	}
	if err != nil {
		return fmt.Errorf("apply %s: %w", what, err)
	}
	return nil
}

// restMapper is a discovery-backed RESTMapper, cached per Env.
type restMapper = restmapper.DeferredDiscoveryRESTMapper

func (e *Env) restMapper() *restMapper {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.rm == nil {
		e.rm = restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(e.Client.Discovery()))
	}
	return e.rm
}
