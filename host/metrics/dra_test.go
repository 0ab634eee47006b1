package metrics

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

func TestDRARecorder(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	d, err := NewDRA(reg)
	if err != nil {
		t.Fatal(err)
	}
	d.ClaimCreated(true)
	d.ClaimCreated(true)
	d.ClaimCreated(false)
	want := `
# HELP dynamic_resource_allocation_resourceclaim_creates_total Number of ResourceClaims creation requests, categorized by creation status, admin access, and owning API group and kind (either Pod or scheduling.k8s.io/PodGroup)
# TYPE dynamic_resource_allocation_resourceclaim_creates_total counter
dynamic_resource_allocation_resourceclaim_creates_total{admin_access="false",owner_api_group="",owner_api_kind="Pod",status="failure"} 1
dynamic_resource_allocation_resourceclaim_creates_total{admin_access="false",owner_api_group="",owner_api_kind="Pod",status="success"} 2
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want)); err != nil {
		t.Error(err)
	}
	if _, err := NewDRA(reg); err == nil {
		t.Error("NewDRA registered its collectors twice")
	}
}
