package metrics

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/wasmsched/wasmsched/host/framework"
)

var _ framework.ClaimRecorder = (*DRA)(nil)

// DRA records dynamic resource allocation's metrics under upstream's names
// and labels (k8s.io/dynamic-resource-allocation/resourceclaim/metrics,
// which kube-scheduler v1.37.1 registers with DRAExtendedResource on).
type DRA struct {
	// created and failed are resourceclaim_creates_total's children for
	// the only claims the scheduler creates: a pod's, without admin
	// access.
	created, failed prometheus.Counter
}

// NewDRA creates and registers the DRA collectors.
func NewDRA(reg prometheus.Registerer) (*DRA, error) {
	creates := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "dynamic_resource_allocation_resourceclaim_creates_total",
		Help: "Number of ResourceClaims creation requests, categorized by creation status, admin access, and owning API group and kind (either Pod or scheduling.k8s.io/PodGroup)",
	}, []string{"status", "admin_access", "owner_api_group", "owner_api_kind"})
	if err := reg.Register(creates); err != nil {
		return nil, err
	}
	return &DRA{created: creates.WithLabelValues("success", "false", "", "Pod"),
		failed: creates.WithLabelValues("failure", "false", "", "Pod")}, nil
}

// ClaimCreated counts one creation request of a pod's claim.
func (d *DRA) ClaimCreated(ok bool) {
	if ok {
		d.created.Inc()
	} else {
		d.failed.Inc()
	}
}
