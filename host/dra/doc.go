// Package dra is the scheduler's shared view of dynamic resource allocation
// (upstream's DRA manager, pkg/scheduler/framework/plugins/dynamicresources
// dra_manager.go and allocateddevices.go): the ResourceClaims as the
// scheduler sees them (an assume cache over the claim informer), the
// devices their allocations take, the allocations reserved by pods not yet
// bound (in flight), the ResourceSlices with DeviceTaintRules applied (the
// k8s.io/dynamic-resource-allocation tracker) and the DeviceClasses.
//
// One Manager serves every profile of a scheduler (framework.Handle.DRA builds it once),
// so that a device reserved by a pod of one profile is taken for all.
//
// # Notes
//
// Unlike upstream, whose scheduling cycles run one at a time, wasmsched's
// reservations are checked again when they are made: Reserve refuses an
// allocation that takes a device another claim has taken or reserved since
// the pod's PreFilter looked (ErrConflict), so two pods in concurrent cycles
// cannot take the same device.
package dra
