package testenv

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
)

// Namespace creates a namespace for this test (named after it) and deletes
// it, with everything in it, in tb.Cleanup. It is the isolation unit on a
// Shared control plane.
func (e *Env) Namespace(tb testing.TB) string {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	name, err := e.CreateNamespace(ctx, tb.Name())
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if tb.Failed() && e.shared { // Start prints the tails of its own environments
			tb.Logf("testenv: the test failed; tail of the shared kube-apiserver's log:\n%s", e.apiserver.Tail(30))
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := e.DeleteNamespace(ctx, name); err != nil {
			tb.Errorf("testenv: clean up namespace %s: %v", name, err)
		}
	})
	return name
}

// CreateNamespace creates a namespace whose name starts with a DNS-label form
// of hint and ends in a random suffix, and returns its name.
func (e *Env) CreateNamespace(ctx context.Context, hint string) (string, error) {
	ns, err := e.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{
		ObjectMeta: metav1.ObjectMeta{GenerateName: dnsLabelPrefix(hint, 50) + "-"},
	}, metav1.CreateOptions{})
	if err != nil {
		return "", fmt.Errorf("create namespace for %q: %w", hint, err)
	}
	return ns.Name, nil
}

// DeleteNamespace deletes a namespace and everything in it, doing the work of
// kube-controller-manager's namespace controller, which does not run here:
// it marks the namespace terminating (so nothing new is created in it),
// clears the finalizers of every object in it (PodGroups carry
// scheduling.k8s.io/podgroup-protection, which only kube-controller-manager
// lifts), deletes every namespaced resource with grace period 0 (bound pods
// would otherwise wait forever for a kubelet), then finalizes the namespace.
// It returns when the namespace is gone; a missing namespace is not an error.
func (e *Env) DeleteNamespace(ctx context.Context, name string) error {
	nsClient := e.Client.CoreV1().Namespaces()
	if err := nsClient.Delete(ctx, name, metav1.DeleteOptions{}); apierrors.IsNotFound(err) {
		return nil
	} else if err != nil {
		return fmt.Errorf("delete namespace %s: %w", name, err)
	}
	if err := e.deleteNamespaceContent(ctx, name); err != nil {
		return fmt.Errorf("delete the content of namespace %s: %w", name, err)
	}
	ns, err := nsClient.Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	} else if err != nil {
		return err
	}
	if len(ns.Spec.Finalizers) > 0 {
		ns.Spec.Finalizers = nil
		if _, err := nsClient.Finalize(ctx, ns, metav1.UpdateOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("finalize namespace %s: %w", name, err)
		}
	}
	if len(ns.Finalizers) > 0 {
		if err := e.clearFinalizers(ctx, schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}, "", name); err != nil {
			return err
		}
	}
	// A terminating namespace without finalizers goes on the next delete,
	// as in the namespace controller.
	if err := nsClient.Delete(ctx, name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete finalized namespace %s: %w", name, err)
	}
	return nil
}

// deleteNamespaceContent deletes every object of every listable, deletable
// namespaced resource in ns, clearing finalizers first.
func (e *Env) deleteNamespaceContent(ctx context.Context, ns string) error {
	lists, err := e.Client.Discovery().ServerPreferredNamespacedResources()
	if err != nil && len(lists) == 0 {
		return fmt.Errorf("discover namespaced resources: %w", err)
	}
	lists = discovery.FilteredBy(discovery.SupportsAllVerbs{Verbs: []string{"list", "delete", "deletecollection"}}, lists)
	var gvrs []schema.GroupVersionResource
	for _, l := range lists {
		gv, err := schema.ParseGroupVersion(l.GroupVersion)
		if err != nil {
			continue
		}
		for _, r := range l.APIResources {
			if !strings.Contains(r.Name, "/") {
				gvrs = append(gvrs, gv.WithResource(r.Name))
			}
		}
	}
	// Pods first: once they are gone nothing (a scheduler under test, KWOK)
	// has a reason to touch the rest.
	pods := schema.GroupVersionResource{Version: "v1", Resource: "pods"}
	if err := e.deleteAll(ctx, pods, ns); err != nil {
		return err
	}
	var (
		mu   sync.Mutex
		errs []error
		wg   sync.WaitGroup
		sem  = make(chan struct{}, 8)
	)
	for _, gvr := range gvrs {
		if gvr == pods {
			continue
		}
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			if err := e.deleteAll(ctx, gvr, ns); err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

func (e *Env) deleteAll(ctx context.Context, gvr schema.GroupVersionResource, ns string) error {
	ri := e.dyn.Resource(gvr).Namespace(ns)
	list, err := ri.List(ctx, metav1.ListOptions{})
	if apierrors.IsNotFound(err) || apierrors.IsMethodNotSupported(err) {
		return nil
	} else if err != nil {
		return fmt.Errorf("list %s: %w", gvr, err)
	}
	if len(list.Items) == 0 {
		return nil
	}
	for _, it := range list.Items {
		if len(it.GetFinalizers()) > 0 {
			if err := e.clearFinalizers(ctx, gvr, ns, it.GetName()); err != nil {
				return err
			}
		}
	}
	zero := int64(0)
	err = ri.DeleteCollection(ctx, metav1.DeleteOptions{GracePeriodSeconds: &zero}, metav1.ListOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete %s: %w", gvr, err)
	}
	return nil
}

// clearFinalizers removes all finalizers of one object.
func (e *Env) clearFinalizers(ctx context.Context, gvr schema.GroupVersionResource, ns, name string) error {
	patch := []byte(`{"metadata":{"finalizers":null}}`)
	var err error
	if ns == "" {
		_, err = e.dyn.Resource(gvr).Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{})
	} else {
		_, err = e.dyn.Resource(gvr).Namespace(ns).Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{})
	}
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("clear finalizers of %s %s/%s: %w", gvr.Resource, ns, name, err)
	}
	return nil
}

// dnsLabelPrefix turns s into lowercase letters, digits and single dashes,
// starting with a letter, at most n bytes long.
func dnsLabelPrefix(s string, n int) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(s) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9' && b.Len() > 0:
			b.WriteRune(r)
			dash = false
		case b.Len() > 0 && !dash:
			b.WriteByte('-')
			dash = true
		}
		if b.Len() >= n {
			break
		}
	}
	out := strings.TrimRight(b.String(), "-")
	if out == "" {
		return "test"
	}
	return out
}
