package testenv

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

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

// errorsTB records what Consistently reports.
type errorsTB struct {
	testing.TB
	errs []string
}

func (e *errorsTB) Helper() {}
func (e *errorsTB) Errorf(format string, args ...any) {
	e.errs = append(e.errs, fmt.Sprintf(format, args...))
}

// TestConsistently: the condition is looked at through the window and at its
// end, and the first error fails the check at once.
func TestConsistently(t *testing.T) {
	var tb errorsTB
	looks := 0
	start := time.Now()
	if !Consistently(&tb, 50*time.Millisecond, 10*time.Millisecond, func() error { looks++; return nil }) || len(tb.errs) != 0 {
		t.Errorf("a condition that holds: %v", tb.errs)
	}
	if d := time.Since(start); d < 50*time.Millisecond {
		t.Errorf("returned after %v, before the end of the 50ms window", d)
	}
	if looks < 2 {
		t.Errorf("%d looks in a 50ms window at 10ms intervals, want at least the first and the last", looks)
	}

	looks = 0
	ok := Consistently(&tb, time.Hour, time.Millisecond, func() error {
		if looks++; looks == 3 {
			return errors.New("pod bound")
		}
		return nil
	})
	if ok || looks != 3 || len(tb.errs) != 1 || !strings.Contains(tb.errs[0], "pod bound") || !strings.Contains(tb.errs[0], "1h0m0s window") {
		t.Errorf("a condition that fails at the third look: ok %v after %d looks, errors %q", ok, looks, tb.errs)
	}
}

func TestSumSamples(t *testing.T) {
	page := []byte(`# HELP scheduler_pending_pods Pending pods.
# TYPE scheduler_pending_pods gauge
scheduler_pending_pods{queue="active"} 1
scheduler_pending_pods{queue="gated"} 2
scheduler_pending_pods_other{queue="gated"} 40
scheduler_schedule_attempts_total{profile="a",result="scheduled"} 3
scheduler_schedule_attempts_total{profile="b",result="scheduled"} 4
scheduler_schedule_attempts_total{profile="b",result="error"} 5
plain 6
`)
	for _, tc := range []struct {
		name   string
		labels []string
		want   float64
	}{
		{"scheduler_pending_pods", []string{`queue="gated"`}, 2},
		{"scheduler_pending_pods", nil, 3},
		{"scheduler_schedule_attempts_total", []string{`result="scheduled"`}, 7},
		{"scheduler_schedule_attempts_total", []string{`result="scheduled"`, `profile="b"`}, 4},
		{"plain", nil, 6},
		{"absent", nil, 0},
	} {
		if got := SumSamples(page, tc.name, tc.labels...); got != tc.want {
			t.Errorf("SumSamples(%s, %q) = %v, want %v", tc.name, tc.labels, got, tc.want)
		}
	}
}
