package deploy_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/util/intstr"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	"github.com/wasmsched/wasmsched/abi"
	"github.com/wasmsched/wasmsched/config"
	"github.com/wasmsched/wasmsched/deploy"
	"github.com/wasmsched/wasmsched/host/policyapi"
)

var update = flag.Bool("update", false, "rewrite configmap.yaml from config.yaml")

const (
	configFile    = "config.yaml"
	configMapFile = "configmap.yaml"
	kustomization = "kustomization.yaml"
	namespace     = "wasmsched"
)

// access is one thing the scheduler does to the API: a verb on a resource
// of a group, on any object ("") or on one name.
type access struct {
	Group, Resource, Verb, Name string
}

// clusterNeeds is what the scheduler does cluster-wide. The ClusterRole must
// grant exactly this: extend the list when the scheduler needs more.
var clusterNeeds = []access{
	{"", "pods", "get", ""}, {"", "pods", "list", ""}, {"", "pods", "watch", ""}, {"", "pods", "delete", ""},
	{"", "pods/binding", "create", ""},
	{"", "pods/status", "patch", ""}, {"", "pods/status", "update", ""},
	{"", "nodes", "get", ""}, {"", "nodes", "list", ""}, {"", "nodes", "watch", ""},
	{"", "events", "create", ""}, {"", "events", "patch", ""}, {"", "events", "update", ""},
	{"events.k8s.io", "events", "create", ""}, {"events.k8s.io", "events", "patch", ""}, {"events.k8s.io", "events", "update", ""},
	{"scheduling.k8s.io", "podgroups", "get", ""}, {"scheduling.k8s.io", "podgroups", "list", ""}, {"scheduling.k8s.io", "podgroups", "watch", ""},
	{"scheduling.k8s.io", "podgroups/status", "patch", ""}, {"scheduling.k8s.io", "podgroups/status", "update", ""},
	{"scheduling.k8s.io", "workloads", "get", ""}, {"scheduling.k8s.io", "workloads", "list", ""}, {"scheduling.k8s.io", "workloads", "watch", ""},
	{"policy", "poddisruptionbudgets", "get", ""}, {"policy", "poddisruptionbudgets", "list", ""}, {"policy", "poddisruptionbudgets", "watch", ""},
	{"", "namespaces", "get", ""}, {"", "namespaces", "list", ""}, {"", "namespaces", "watch", ""},
	{"", "services", "get", ""}, {"", "services", "list", ""}, {"", "services", "watch", ""},
	{"", "replicationcontrollers", "get", ""}, {"", "replicationcontrollers", "list", ""}, {"", "replicationcontrollers", "watch", ""},
	{"apps", "replicasets", "get", ""}, {"apps", "replicasets", "list", ""}, {"apps", "replicasets", "watch", ""},
	{"apps", "statefulsets", "get", ""}, {"apps", "statefulsets", "list", ""}, {"apps", "statefulsets", "watch", ""},
	{"", "persistentvolumes", "get", ""}, {"", "persistentvolumes", "list", ""}, {"", "persistentvolumes", "watch", ""},
	{"", "persistentvolumes", "update", ""}, {"", "persistentvolumes", "patch", ""},
	{"", "persistentvolumeclaims", "get", ""}, {"", "persistentvolumeclaims", "list", ""}, {"", "persistentvolumeclaims", "watch", ""},
	{"", "persistentvolumeclaims", "update", ""}, {"", "persistentvolumeclaims", "patch", ""},
	{"storage.k8s.io", "storageclasses", "get", ""}, {"storage.k8s.io", "storageclasses", "list", ""}, {"storage.k8s.io", "storageclasses", "watch", ""},
	{"storage.k8s.io", "csinodes", "get", ""}, {"storage.k8s.io", "csinodes", "list", ""}, {"storage.k8s.io", "csinodes", "watch", ""},
	{"storage.k8s.io", "csidrivers", "get", ""}, {"storage.k8s.io", "csidrivers", "list", ""}, {"storage.k8s.io", "csidrivers", "watch", ""},
	{"storage.k8s.io", "csistoragecapacities", "get", ""}, {"storage.k8s.io", "csistoragecapacities", "list", ""}, {"storage.k8s.io", "csistoragecapacities", "watch", ""},
	{"storage.k8s.io", "volumeattachments", "get", ""}, {"storage.k8s.io", "volumeattachments", "list", ""}, {"storage.k8s.io", "volumeattachments", "watch", ""},
	{"resource.k8s.io", "deviceclasses", "get", ""}, {"resource.k8s.io", "deviceclasses", "list", ""}, {"resource.k8s.io", "deviceclasses", "watch", ""},
	{"resource.k8s.io", "resourceslices", "get", ""}, {"resource.k8s.io", "resourceslices", "list", ""}, {"resource.k8s.io", "resourceslices", "watch", ""},
	{"resource.k8s.io", "devicetaintrules", "get", ""}, {"resource.k8s.io", "devicetaintrules", "list", ""}, {"resource.k8s.io", "devicetaintrules", "watch", ""},
	{"resource.k8s.io", "resourceclaims", "get", ""}, {"resource.k8s.io", "resourceclaims", "list", ""}, {"resource.k8s.io", "resourceclaims", "watch", ""},
	{"resource.k8s.io", "resourceclaims", "update", ""}, {"resource.k8s.io", "resourceclaims", "patch", ""},
	{"resource.k8s.io", "resourceclaims", "create", ""}, {"resource.k8s.io", "resourceclaims", "delete", ""},
	{"resource.k8s.io", "resourceclaims/status", "get", ""}, {"resource.k8s.io", "resourceclaims/status", "list", ""}, {"resource.k8s.io", "resourceclaims/status", "watch", ""},
	{"resource.k8s.io", "resourceclaims/status", "update", ""}, {"resource.k8s.io", "resourceclaims/status", "patch", ""},
	{"resource.k8s.io", "resourceclaims/binding", "update", ""}, {"resource.k8s.io", "resourceclaims/binding", "patch", ""},
	{"", "pods/finalizers", "update", ""},
	{"wasmsched.io", "schedulingpolicies", "get", ""}, {"wasmsched.io", "schedulingpolicies", "list", ""}, {"wasmsched.io", "schedulingpolicies", "watch", ""},
	{"wasmsched.io", "schedulingpolicies/status", "get", ""}, {"wasmsched.io", "schedulingpolicies/status", "patch", ""}, {"wasmsched.io", "schedulingpolicies/status", "update", ""},
}

// policyModuleNeeds is what the scheduler does in policyAPI.namespace: read
// the ConfigMaps that SchedulingPolicies refer to.
var policyModuleNeeds = []access{{"", "configmaps", "get", ""}, {"", "configmaps", "list", ""}, {"", "configmaps", "watch", ""}}

// The roles for people who may change scheduling policy: every verb on
// SchedulingPolicies, and on the ConfigMaps holding modules.
var (
	policyEditorGrants = []access{
		{"wasmsched.io", "schedulingpolicies", "get", ""}, {"wasmsched.io", "schedulingpolicies", "list", ""}, {"wasmsched.io", "schedulingpolicies", "watch", ""},
		{"wasmsched.io", "schedulingpolicies", "create", ""}, {"wasmsched.io", "schedulingpolicies", "update", ""}, {"wasmsched.io", "schedulingpolicies", "patch", ""},
		{"wasmsched.io", "schedulingpolicies", "delete", ""},
	}
	moduleEditorGrants = []access{
		{"", "configmaps", "get", ""}, {"", "configmaps", "list", ""}, {"", "configmaps", "watch", ""},
		{"", "configmaps", "create", ""}, {"", "configmaps", "update", ""}, {"", "configmaps", "patch", ""}, {"", "configmaps", "delete", ""},
	}
)

// leaseNeeds is what leader election (client-go's LeaseLock) does in the
// Lease's namespace, for the Lease named name.
func leaseNeeds(name string) []access {
	return []access{
		{"coordination.k8s.io", "leases", "create", ""},
		{"coordination.k8s.io", "leases", "get", name},
		{"coordination.k8s.io", "leases", "update", name},
	}
}

// The secure port's delegated authentication and authorization (kube-scheduler's
// needs too): TokenReviews and SubjectAccessReviews cluster-wide, and reading the
// client CA in kube-system's extension-apiserver-authentication ConfigMap.
// Granted by built-in roles, whose rules (bootstrap policy, v1.37) are these;
// e2e/deploy_test.go asks the real apiserver.
var (
	authDelegatorNeeds = []access{
		{"authentication.k8s.io", "tokenreviews", "create", ""},
		{"authorization.k8s.io", "subjectaccessreviews", "create", ""},
	}
	authReaderNeeds = []access{
		{"", "configmaps", "get", "extension-apiserver-authentication"},
		{"", "configmaps", "list", "extension-apiserver-authentication"},
		{"", "configmaps", "watch", "extension-apiserver-authentication"},
	}
)

const (
	authDelegatorRole = "system:auth-delegator"
	authReaderRole    = "extension-apiserver-authentication-reader"
	authNamespace     = "kube-system"
	securePort        = 10359
)

// decoder decodes strictly (unknown or duplicate fields fail) into the
// typed objects of the groups the manifests may use.
func decoder(t *testing.T) runtime.Decoder {
	t.Helper()
	sch := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{corev1.AddToScheme, appsv1.AddToScheme, rbacv1.AddToScheme, networkingv1.AddToScheme, apiextensionsv1.AddToScheme} {
		if err := add(sch); err != nil {
			t.Fatal(err)
		}
	}
	return serializer.NewCodecFactory(sch, serializer.EnableStrict).UniversalDeserializer()
}

// decodeAll decodes every document of a YAML stream.
func decodeAll(dec runtime.Decoder, data []byte) ([]runtime.Object, error) {
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var objs []runtime.Object
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return objs, nil
		}
		if err != nil {
			return nil, err
		}
		if len(bytes.TrimSpace(stripComments(doc))) == 0 {
			continue
		}
		obj, _, err := dec.Decode(doc, nil, nil)
		if err != nil {
			return nil, err
		}
		objs = append(objs, obj)
	}
}

func stripComments(doc []byte) []byte {
	var out []byte
	for line := range bytes.Lines(doc) {
		if !bytes.HasPrefix(bytes.TrimSpace(line), []byte("#")) {
			out = append(out, line...)
		}
	}
	return out
}

// manifests are the decoded objects of every manifest, by file.
type manifests map[string][]runtime.Object

func load(t *testing.T) manifests {
	t.Helper()
	dec := decoder(t)
	names, err := filepath.Glob("*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	m := manifests{}
	for _, name := range names {
		if name == configFile || name == kustomization {
			continue
		}
		data, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		objs, err := decodeAll(dec, data)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(objs) == 0 {
			t.Fatalf("%s: no object", name)
		}
		m[name] = objs
	}
	return m
}

// one returns the only object of type T across the manifests.
func one[T runtime.Object](t *testing.T, m manifests) T {
	t.Helper()
	var found []T
	for _, objs := range m {
		for _, o := range objs {
			if x, ok := o.(T); ok {
				found = append(found, x)
			}
		}
	}
	if len(found) != 1 {
		var zero T
		t.Fatalf("want one %T, found %d", zero, len(found))
	}
	return found[0]
}

// named returns the object of type T named name across the manifests.
func named[T interface {
	runtime.Object
	GetName() string
}](t *testing.T, m manifests, name string) T {
	t.Helper()
	for _, objs := range m {
		for _, o := range objs {
			if x, ok := o.(T); ok && x.GetName() == name {
				return x
			}
		}
	}
	var zero T
	t.Fatalf("no %T named %s", zero, name)
	return zero
}

// bindingOf returns the RoleBinding of the Role named role.
func bindingOf(t *testing.T, m manifests, role string) *rbacv1.RoleBinding {
	t.Helper()
	for _, objs := range m {
		for _, o := range objs {
			if b, ok := o.(*rbacv1.RoleBinding); ok && b.RoleRef.Name == role {
				return b
			}
		}
	}
	t.Fatalf("no RoleBinding of Role %s", role)
	return nil
}

// TestFiles checks that deploy.Files holds every YAML file of the folder as
// it is on disk.
func TestFiles(t *testing.T) {
	disk, err := filepath.Glob("*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	embedded, err := fs.Glob(deploy.Files(), "*")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(disk, embedded); diff != "" {
		t.Fatalf("deploy.Files (-disk, +embedded):\n%s", diff)
	}
	for _, name := range disk {
		a, _ := os.ReadFile(name)
		b, _ := fs.ReadFile(deploy.Files(), name)
		if !bytes.Equal(a, b) {
			t.Errorf("embedded %s differs from the file", name)
		}
	}
}

func TestStrictDecoding(t *testing.T) {
	_, err := decodeAll(decoder(t), []byte("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: x}\nspec:\n  replica: 2\n"))
	if err == nil || !strings.Contains(err.Error(), `unknown field "spec.replica"`) {
		t.Errorf("a misspelt field decoded: %v", err)
	}
}

// TestKustomization checks that kustomization.yaml lists every manifest (and
// nothing else) and that every file of the folder is accounted for.
func TestKustomization(t *testing.T) {
	m := load(t)
	data, err := os.ReadFile(kustomization)
	if err != nil {
		t.Fatal(err)
	}
	js, err := utilyaml.ToJSON(data)
	if err != nil {
		t.Fatal(err)
	}
	var k struct {
		APIVersion string   `json:"apiVersion"`
		Kind       string   `json:"kind"`
		Resources  []string `json:"resources"`
	}
	d := json.NewDecoder(bytes.NewReader(js))
	d.DisallowUnknownFields()
	if err := d.Decode(&k); err != nil {
		t.Fatalf("%s: %v", kustomization, err)
	}
	if k.APIVersion != "kustomize.config.k8s.io/v1beta1" || k.Kind != "Kustomization" {
		t.Errorf("%s is a %s %s", kustomization, k.APIVersion, k.Kind)
	}
	var want []string
	for name := range m {
		want = append(want, name)
	}
	slices.Sort(want)
	if diff := cmp.Diff(want, slices.Sorted(slices.Values(k.Resources))); diff != "" {
		t.Errorf("%s resources (-manifests, +listed):\n%s", kustomization, diff)
	}
	if k.Resources[0] != "namespace.yaml" {
		t.Errorf("%s lists %s first, want namespace.yaml", kustomization, k.Resources[0])
	}

	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		switch name := e.Name(); {
		case name == configFile || name == kustomization || name == "README.md" || strings.HasSuffix(name, ".go"):
		case m[name] != nil:
		default:
			t.Errorf("%s: neither a manifest, the config, the README nor Go", name)
		}
	}
}

// configMapYAML is configmap.yaml for a config file: the file verbatim
// under data.config.yaml.
func configMapYAML(cfg []byte) []byte {
	var b bytes.Buffer
	b.WriteString(`# Generated from deploy/config.yaml by ` + "`go test ./deploy -update`" + `: edit
# that file, then regenerate this one (a test fails while they differ).
apiVersion: v1
kind: ConfigMap
metadata:
  name: wasmsched-config
  namespace: wasmsched
  labels:
    app.kubernetes.io/name: wasmsched
data:
  config.yaml: |
`)
	for line := range bytes.Lines(cfg) {
		if len(bytes.TrimSpace(line)) > 0 {
			b.WriteString("    ")
		}
		b.Write(line)
	}
	return b.Bytes()
}

func TestConfigMap(t *testing.T) {
	cfg, err := os.ReadFile(configFile)
	if err != nil {
		t.Fatal(err)
	}
	want := configMapYAML(cfg)
	if *update {
		if err := os.WriteFile(configMapFile, want, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(configMapFile)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s does not carry %s verbatim: run go test ./deploy -update", configMapFile, configFile)
	}
	cm := one[*corev1.ConfigMap](t, load(t))
	if cm.Data[configFile] != string(cfg) {
		t.Errorf("the ConfigMap's %s differs from %s (-want, +got):\n%s", configFile, configFile, cmp.Diff(string(cfg), cm.Data[configFile]))
	}
}

// deployed is the configuration the Deployment runs with: config.yaml with
// the container's flags as overrides, as `wasmsched run` maps them.
func deployed(t *testing.T, d *appsv1.Deployment) (*config.Config, string) {
	t.Helper()
	args := d.Spec.Template.Spec.Containers[0].Args
	if len(args) == 0 || args[0] != "run" {
		t.Fatalf("args %q: want the run command first", args)
	}
	flagKeys := map[string]string{
		"scheduler-name":       "schedulerName",
		"metrics-bind-address": "metrics.bindAddress",
		"leader-elect":         "leaderElection.enabled",
	}
	var file string
	over := map[string]string{}
	for _, a := range args[1:] {
		name, value, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		switch key, ok := flagKeys[name]; {
		case name == "config":
			file = value
		case ok && name == "leader-elect" && !hasValue:
			over[key] = "true"
		case ok && hasValue:
			over[key] = value
		default:
			t.Fatalf("argument %q: this test does not know it; map it onto its config key here", a)
		}
	}
	mount := d.Spec.Template.Spec.Containers[0].VolumeMounts[0].MountPath
	if filepath.Join(mount, configFile) != file {
		t.Errorf("--config=%s, but config.yaml is mounted at %s", file, filepath.Join(mount, configFile))
	}
	c, err := config.Load(config.Source{File: configFile, Overrides: over})
	if err != nil {
		t.Fatalf("the Deployment's configuration (%s with %v): %v", configFile, over, err)
	}
	return c, file
}

func TestConfigLoads(t *testing.T) {
	if _, err := config.Load(config.Source{File: configFile}); err != nil {
		t.Fatalf("%s: %v", configFile, err)
	}
}

func TestDeployment(t *testing.T) {
	m := load(t)
	d := one[*appsv1.Deployment](t, m)
	c, _ := deployed(t, d)
	spec := d.Spec.Template.Spec
	if n := len(spec.Containers); n != 1 {
		t.Fatalf("%d containers, want 1", n)
	}
	ct := spec.Containers[0]
	if d.Spec.Replicas == nil || *d.Spec.Replicas != 2 {
		t.Errorf("replicas %v, want 2", d.Spec.Replicas)
	}
	if !c.LeaderElection.Enabled {
		t.Error("two replicas without leader election would both schedule")
	}
	// The replica's name in the Lease and in SchedulingPolicy status.
	var podName bool
	for _, e := range ct.Env {
		if e.Name == "POD_NAME" && e.ValueFrom != nil && e.ValueFrom.FieldRef != nil && e.ValueFrom.FieldRef.FieldPath == "metadata.name" {
			podName = true
		}
	}
	if !podName {
		t.Error("no POD_NAME from the downward API (metadata.name): replicas would be named host_pid")
	}
	if c.AdminEndpoint {
		t.Error("policies.adminEndpoint is on: no HTTP endpoint may change policy in deploy/ (SchedulingPolicies do)")
	}
	if !c.PolicyAPI.Enabled {
		t.Error("policyAPI.enabled is off: SchedulingPolicies would be ignored")
	}
	if ct.Image != "wasmsched:dev" {
		t.Errorf("image %q, want wasmsched:dev", ct.Image)
	}

	// Only the secure port listens, on every interface for the probes and
	// scrapers, and no endpoint accepts a module.
	if c.SecureServing.BindAddress != "0.0.0.0:10359" {
		t.Errorf("secureServing.bindAddress %q: the kubelet's probes and scrapers need 0.0.0.0:10359", c.SecureServing.BindAddress)
	}
	if c.Metrics.BindAddress != "" {
		t.Errorf("metrics.bindAddress %q: the plain listener has no authentication; turn it off in deploy/", c.Metrics.BindAddress)
	}
	if c.AdminEndpoint {
		t.Error("policies.adminEndpoint is on: no endpoint may accept a module in deploy/")
	}
	if len(ct.Ports) != 1 || ct.Ports[0].ContainerPort != securePort || ct.Ports[0].Name != "https" || ct.Ports[0].Protocol != corev1.ProtocolTCP {
		t.Errorf("ports %+v, want https 10359/TCP", ct.Ports)
	}
	for _, p := range []struct {
		name  string
		probe *corev1.Probe
		path  string
	}{{"readiness", ct.ReadinessProbe, "/readyz"}, {"liveness", ct.LivenessProbe, "/livez"}} {
		if p.probe == nil || p.probe.HTTPGet == nil {
			t.Errorf("no HTTP %s probe", p.name)
			continue
		}
		if g := p.probe.HTTPGet; g.Path != p.path || g.Port.String() != "https" || g.Scheme != corev1.URISchemeHTTPS {
			t.Errorf("%s probe %s %s on port %s, want HTTPS %s on https", p.name, g.Scheme, g.Path, g.Port.String(), p.path)
		}
	}

	if ct.Resources.Requests.Cpu().IsZero() || ct.Resources.Requests.Memory().IsZero() {
		t.Errorf("resource requests %v: want cpu and memory", ct.Resources.Requests)
	}
	sc := ct.SecurityContext
	switch {
	case sc == nil:
		t.Fatal("no container securityContext")
	case sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot:
		t.Error("runAsNonRoot is not true")
	case sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem:
		t.Error("readOnlyRootFilesystem is not true")
	case sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation:
		t.Error("allowPrivilegeEscalation is not false")
	case sc.Capabilities == nil || !slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) || len(sc.Capabilities.Add) > 0:
		t.Errorf("capabilities %+v, want drop ALL and add none", sc.Capabilities)
	}

	// The config volume carries the ConfigMap of configmap.yaml.
	cm := one[*corev1.ConfigMap](t, m)
	var found bool
	for _, v := range spec.Volumes {
		if v.Name != ct.VolumeMounts[0].Name || v.Projected == nil {
			continue
		}
		for _, s := range v.Projected.Sources {
			if s.ConfigMap != nil && s.ConfigMap.Name == cm.Name && (s.ConfigMap.Optional == nil || !*s.ConfigMap.Optional) {
				found = true
			}
		}
	}
	if !found {
		t.Errorf("no volume mounted at %s projects the ConfigMap %s", ct.VolumeMounts[0].MountPath, cm.Name)
	}
	sa := one[*corev1.ServiceAccount](t, m)
	if spec.ServiceAccountName != sa.Name {
		t.Errorf("serviceAccountName %q, want %q", spec.ServiceAccountName, sa.Name)
	}
	if sel := d.Spec.Selector.MatchLabels; !matches(sel, d.Spec.Template.Labels) {
		t.Errorf("selector %v does not match the pod labels %v", sel, d.Spec.Template.Labels)
	}
}

func matches(sel, labels map[string]string) bool {
	for k, v := range sel {
		if labels[k] != v {
			return false
		}
	}
	return len(sel) > 0
}

// grants expands RBAC rules into accesses; a wildcard fails the test.
func grants(t *testing.T, rules []rbacv1.PolicyRule) []access {
	t.Helper()
	var out []access
	for _, r := range rules {
		names := r.ResourceNames
		if len(names) == 0 {
			names = []string{""}
		}
		for _, g := range r.APIGroups {
			for _, res := range r.Resources {
				for _, v := range r.Verbs {
					for _, n := range names {
						if g == "*" || res == "*" || v == "*" || strings.HasSuffix(res, "/*") {
							t.Errorf("rule %+v has a wildcard: grant what the scheduler needs by name", r)
						}
						out = append(out, access{g, res, v, n})
					}
				}
			}
		}
		if len(r.NonResourceURLs) > 0 {
			t.Errorf("rule %+v grants non-resource URLs", r)
		}
	}
	return out
}

func sortAccess(a []access) []access {
	return slices.SortedFunc(slices.Values(a), func(x, y access) int {
		return strings.Compare(x.Group+"/"+x.Resource+"/"+x.Verb+"/"+x.Name, y.Group+"/"+y.Resource+"/"+y.Verb+"/"+y.Name)
	})
}

func TestClusterRole(t *testing.T) {
	m := load(t)
	cr := named[*rbacv1.ClusterRole](t, m, "wasmsched")
	if diff := cmp.Diff(sortAccess(clusterNeeds), sortAccess(grants(t, cr.Rules))); diff != "" {
		t.Errorf("ClusterRole %s grants (-needed, +granted):\n%s", cr.Name, diff)
	}
	b := named[*rbacv1.ClusterRoleBinding](t, m, "wasmsched")
	checkBinding(t, b.Name, b.RoleRef, b.Subjects, "ClusterRole", cr.Name, one[*corev1.ServiceAccount](t, m))
}

func TestLeaseRole(t *testing.T) {
	m := load(t)
	c, _ := deployed(t, one[*appsv1.Deployment](t, m))
	r := named[*rbacv1.Role](t, m, "wasmsched-leader-election")
	if r.Namespace != c.LeaderElection.Namespace {
		t.Errorf("Role %s is in namespace %q, the Lease in %q (leaderElection.namespace)", r.Name, r.Namespace, c.LeaderElection.Namespace)
	}
	if diff := cmp.Diff(sortAccess(leaseNeeds(c.LeaderElection.Name)), sortAccess(grants(t, r.Rules))); diff != "" {
		t.Errorf("Role %s grants (-needed, +granted):\n%s", r.Name, diff)
	}
	b := named[*rbacv1.RoleBinding](t, m, "wasmsched-leader-election")
	if b.Namespace != r.Namespace {
		t.Errorf("RoleBinding %s is in %q, its Role in %q", b.Name, b.Namespace, r.Namespace)
	}
	checkBinding(t, b.Name, b.RoleRef, b.Subjects, "Role", r.Name, one[*corev1.ServiceAccount](t, m))
}

func checkBinding(t *testing.T, name string, ref rbacv1.RoleRef, subjects []rbacv1.Subject, kind, role string, sa *corev1.ServiceAccount) {
	t.Helper()
	if want := (rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: kind, Name: role}); ref != want {
		t.Errorf("binding %s refers to %+v, want %+v", name, ref, want)
	}
	if want := []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: sa.Name, Namespace: sa.Namespace}}; !slices.Equal(subjects, want) {
		t.Errorf("binding %s binds %+v, want %+v", name, subjects, want)
	}
}

// TestDelegatedAuth: the ServiceAccount is bound to the built-in roles of
// delegated authentication and authorization, which grant what the
// secure port needs.
func TestDelegatedAuth(t *testing.T) {
	m := load(t)
	sa := one[*corev1.ServiceAccount](t, m)
	var delegator, reader bool
	for _, objs := range m {
		for _, o := range objs {
			switch b := o.(type) {
			case *rbacv1.ClusterRoleBinding:
				if b.RoleRef.Name == authDelegatorRole {
					delegator = true
					checkBinding(t, b.Name, b.RoleRef, b.Subjects, "ClusterRole", authDelegatorRole, sa)
				}
			case *rbacv1.RoleBinding:
				if b.RoleRef.Name == authReaderRole {
					reader = true
					checkBinding(t, b.Name, b.RoleRef, b.Subjects, "Role", authReaderRole, sa)
					if b.Namespace != authNamespace {
						t.Errorf("RoleBinding %s to %s is in %q: the Role and its ConfigMap are in %s", b.Name, authReaderRole, b.Namespace, authNamespace)
					}
				}
			}
		}
	}
	if !delegator {
		t.Errorf("no ClusterRoleBinding to %s: the secure port could not review tokens or access (%v)", authDelegatorRole, authDelegatorNeeds)
	}
	if !reader {
		t.Errorf("no RoleBinding to %s in %s: the secure port could not read the client CA (%v)", authReaderRole, authNamespace, authReaderNeeds)
	}
}

// TestMetricsReader: the ClusterRole for scrapers grants GET /metrics and
// nothing else.
func TestMetricsReader(t *testing.T) {
	cr := named[*rbacv1.ClusterRole](t, load(t), "wasmsched-metrics-reader")
	want := []rbacv1.PolicyRule{{NonResourceURLs: []string{"/metrics"}, Verbs: []string{"get"}}}
	if diff := cmp.Diff(want, cr.Rules); diff != "" {
		t.Errorf("ClusterRole %s rules (-want, +got):\n%s", cr.Name, diff)
	}
}

// TestNetworkPolicy: the scheduler pods admit ingress to the secure port
// only, from anywhere (scrapers, the kubelet's probes), and egress is
// left alone.
func TestNetworkPolicy(t *testing.T) {
	m := load(t)
	np := one[*networkingv1.NetworkPolicy](t, m)
	d := one[*appsv1.Deployment](t, m)
	if sel := np.Spec.PodSelector; len(sel.MatchExpressions) > 0 || !matches(sel.MatchLabels, d.Spec.Template.Labels) {
		t.Errorf("podSelector %+v does not select the scheduler pods %v", sel, d.Spec.Template.Labels)
	}
	if !slices.Equal(np.Spec.PolicyTypes, []networkingv1.PolicyType{networkingv1.PolicyTypeIngress}) {
		t.Errorf("policyTypes %v, want [Ingress]", np.Spec.PolicyTypes)
	}
	tcp, port := corev1.ProtocolTCP, intstr.FromInt32(securePort)
	want := []networkingv1.NetworkPolicyIngressRule{{Ports: []networkingv1.NetworkPolicyPort{{Protocol: &tcp, Port: &port}}}}
	if diff := cmp.Diff(want, np.Spec.Ingress); diff != "" {
		t.Errorf("ingress (-want, +got):\n%s", diff)
	}
	if p := d.Spec.Template.Spec.Containers[0].Ports; len(p) != 1 || p[0].ContainerPort != securePort {
		t.Errorf("the container listens on %+v, the NetworkPolicy admits %d", p, securePort)
	}
}

// TestNamespaces checks that every namespaced object is in the namespace
// namespace.yaml creates, and cluster-scoped ones name none. The one
// exception is the RoleBinding to the client CA reader, which must be in
// kube-system.
func TestNamespaces(t *testing.T) {
	m := load(t)
	ns := one[*corev1.Namespace](t, m)
	if ns.Name != namespace {
		t.Errorf("namespace %q, want %q", ns.Name, namespace)
	}
	for file, objs := range m {
		for _, o := range objs {
			meta := o.(interface {
				GetNamespace() string
				GetName() string
			})
			switch o := o.(type) {
			case *corev1.Namespace, *rbacv1.ClusterRole, *rbacv1.ClusterRoleBinding, *apiextensionsv1.CustomResourceDefinition:
				if meta.GetNamespace() != "" {
					t.Errorf("%s: cluster-scoped %s has namespace %q", file, meta.GetName(), meta.GetNamespace())
				}
			case *rbacv1.RoleBinding:
				want := namespace
				if o.RoleRef.Name == authReaderRole {
					want = authNamespace
				}
				if meta.GetNamespace() != want {
					t.Errorf("%s: %s is in namespace %q, want %q", file, meta.GetName(), meta.GetNamespace(), want)
				}
			default:
				if meta.GetNamespace() != namespace {
					t.Errorf("%s: %s is in namespace %q, want %q", file, meta.GetName(), meta.GetNamespace(), namespace)
				}
			}
		}
	}
}

// TestPolicyRoles: the scheduler reads the module ConfigMaps of
// policyAPI.namespace and nothing more there; the editor roles grant every
// verb on SchedulingPolicies and on those ConfigMaps, and are bound to
// nobody (the operator chooses who may change scheduling policy).
func TestPolicyRoles(t *testing.T) {
	m := load(t)
	c, _ := deployed(t, one[*appsv1.Deployment](t, m))
	sa := one[*corev1.ServiceAccount](t, m)
	r := named[*rbacv1.Role](t, m, "wasmsched-policy-modules")
	if r.Namespace != c.PolicyAPI.Namespace {
		t.Errorf("Role %s is in %q, the modules in %q (policyAPI.namespace)", r.Name, r.Namespace, c.PolicyAPI.Namespace)
	}
	if diff := cmp.Diff(sortAccess(policyModuleNeeds), sortAccess(grants(t, r.Rules))); diff != "" {
		t.Errorf("Role %s grants (-needed, +granted):\n%s", r.Name, diff)
	}
	b := bindingOf(t, m, r.Name)
	checkBinding(t, b.Name, b.RoleRef, b.Subjects, "Role", r.Name, sa)

	editor := named[*rbacv1.ClusterRole](t, m, "wasmsched-policy-editor")
	if diff := cmp.Diff(sortAccess(policyEditorGrants), sortAccess(grants(t, editor.Rules))); diff != "" {
		t.Errorf("ClusterRole %s grants (-want, +granted):\n%s", editor.Name, diff)
	}
	modEditor := named[*rbacv1.Role](t, m, "wasmsched-policy-module-editor")
	if modEditor.Namespace != c.PolicyAPI.Namespace {
		t.Errorf("Role %s is in %q, the modules in %q", modEditor.Name, modEditor.Namespace, c.PolicyAPI.Namespace)
	}
	if diff := cmp.Diff(sortAccess(moduleEditorGrants), sortAccess(grants(t, modEditor.Rules))); diff != "" {
		t.Errorf("Role %s grants (-want, +granted):\n%s", modEditor.Name, diff)
	}
	for _, objs := range m {
		for _, o := range objs {
			switch b := o.(type) {
			case *rbacv1.ClusterRoleBinding:
				if b.RoleRef.Name == editor.Name {
					t.Errorf("ClusterRoleBinding %s binds %s: leave that to the operator", b.Name, editor.Name)
				}
			case *rbacv1.RoleBinding:
				if b.RoleRef.Name == modEditor.Name {
					t.Errorf("RoleBinding %s binds %s: leave that to the operator", b.Name, modEditor.Name)
				}
			}
		}
	}
}

// TestCRD: the CustomResourceDefinition serves the names and the slots of
// host/policyapi, with the status subresource, the validation the
// scheduler relies on and the printer columns.
func TestCRD(t *testing.T) {
	crd := one[*apiextensionsv1.CustomResourceDefinition](t, load(t))
	if crd.Name != policyapi.Resource+"."+policyapi.Group || crd.Spec.Group != policyapi.Group ||
		crd.Spec.Names.Kind != policyapi.Kind || crd.Spec.Names.Plural != policyapi.Resource || crd.Spec.Scope != apiextensionsv1.ClusterScoped {
		t.Errorf("CRD %s: group %s kind %s plural %s scope %s, want %s.%s, %s, cluster-scoped",
			crd.Name, crd.Spec.Group, crd.Spec.Names.Kind, crd.Spec.Names.Plural, crd.Spec.Scope, policyapi.Resource, policyapi.Group, policyapi.Kind)
	}
	if len(crd.Spec.Versions) != 1 || crd.Spec.Versions[0].Name != policyapi.Version || !crd.Spec.Versions[0].Served || !crd.Spec.Versions[0].Storage {
		t.Fatalf("versions %+v, want %s only, served and stored", crd.Spec.Versions, policyapi.Version)
	}
	v := crd.Spec.Versions[0]
	if v.Subresources == nil || v.Subresources.Status == nil {
		t.Error("no status subresource: replicas could overwrite the spec through status writes")
	}
	spec := v.Schema.OpenAPIV3Schema.Properties["spec"]
	var slots []string
	for _, e := range spec.Properties["slot"].Enum {
		var s string
		if err := json.Unmarshal(e.Raw, &s); err != nil {
			t.Fatal(err)
		}
		slots = append(slots, s)
	}
	if diff := cmp.Diff(strings.Split(abi.SlotNames(), ", "), slots); diff != "" {
		t.Errorf("spec.slot enum (-ABI slots, +CRD):\n%s", diff)
	}
	if p := spec.Properties["sha256"].Pattern; p != "^[0-9a-f]{64}$" {
		t.Errorf("spec.sha256 pattern %q", p)
	}
	var sources [][]string
	for _, s := range spec.Properties["module"].OneOf {
		sources = append(sources, s.Required)
	}
	if diff := cmp.Diff([][]string{{"inline"}, {"configMapRef"}}, sources); diff != "" {
		t.Errorf("spec.module oneOf (-want, +got): want exactly one source:\n%s", diff)
	}
	var cols []string
	for _, c := range v.AdditionalPrinterColumns {
		if c.Priority == 0 {
			cols = append(cols, c.Name)
		}
	}
	if diff := cmp.Diff([]string{"Profile", "Slot", "Mode", "Agreement", "Digest", "Accepted", "Age"}, cols); diff != "" {
		t.Errorf("printer columns (-want, +got):\n%s", diff)
	}
	replicas := v.Schema.OpenAPIV3Schema.Properties["status"].Properties["replicas"]
	if replicas.XListType == nil || *replicas.XListType != "map" || !slices.Equal(replicas.XListMapKeys, []string{"name"}) {
		t.Error("status.replicas is not a map list keyed by name: replicas applying their entries would replace each other's")
	}
}
