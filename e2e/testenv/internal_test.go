package testenv

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestDNSLabelPrefix(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"TestFoo", "testfoo"},
		{"TestFoo/sub_test#01", "testfoo-sub-test-01"},
		{"Delete Me!", "delete-me"},
		{"123abc", "abc"},
		{"--", "test"},
		{"", "test"},
		{strings.Repeat("a", 80), strings.Repeat("a", 50)},
		{strings.Repeat("a", 49) + "/b", strings.Repeat("a", 49)},
	} {
		if got := dnsLabelPrefix(tc.in, 50); got != tc.want {
			t.Errorf("dnsLabelPrefix(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestDecodeManifests(t *testing.T) {
	in := `
# leading comment
---
apiVersion: v1
kind: ServiceAccount
metadata: {name: a, namespace: n}
---
---
apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: ConfigMap
  metadata: {name: b}
- apiVersion: rbac.authorization.k8s.io/v1
  kind: ClusterRole
  metadata: {name: c}
---
{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "d"}}
`
	objs, err := decodeManifests([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, o := range objs {
		got = append(got, o.GetKind()+"/"+o.GetName())
	}
	want := []string{"ServiceAccount/a", "ConfigMap/b", "ClusterRole/c", "Namespace/d"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("decoded objects (-want, +got):\n%s", diff)
	}

	for _, bad := range []string{"apiVersion: v1\nmetadata: {name: x}\n", "kind: [unclosed\n"} {
		if _, err := decodeManifests([]byte(bad)); err == nil {
			t.Errorf("decodeManifests(%q) succeeded", bad)
		}
	}
}
