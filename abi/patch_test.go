package abi

import "testing"

func TestSetPodQueueState(t *testing.T) {
	p := Pod{Name: "p", Priority: 7, PreemptNever: true, Labels: []KV{{"a", "b"}}, QueuedTime: 1, Attempts: 1}
	rec := AppendPod(nil, &p)
	want := PodQueueState{QueuedTime: 11, InitialAttemptTime: 12, BackoffExpiry: 13, Attempts: 4, LastFailureError: true}
	if err := SetPodQueueState(rec, want); err != nil {
		t.Fatal(err)
	}
	v, err := ReadPod(rec)
	if err != nil {
		t.Fatal(err)
	}
	if got := v.QueueState(); got != want {
		t.Errorf("QueueState = %+v, want %+v", got, want)
	}
	// Everything else is untouched.
	if v.Priority() != 7 || !v.PreemptNever() || v.Name() != "p" {
		t.Errorf("patch changed other fields: priority %d preemptNever %v name %q", v.Priority(), v.PreemptNever(), v.Name())
	}
	if val, ok := v.Labels().Get("a"); !ok || val != "b" {
		t.Errorf("labels damaged: %q %v", val, ok)
	}
	want.LastFailureError = false
	if err := SetPodQueueState(rec, want); err != nil {
		t.Fatal(err)
	}
	if v.LastFailureError() || !v.PreemptNever() {
		t.Error("clearing LastFailureError must keep PreemptNever")
	}
	if err := SetPodQueueState(AppendNode(nil, &Node{Name: "n"}), want); err == nil {
		t.Error("patching a node record: want an error")
	}
	if err := SetPodQueueState(rec[:5], want); err == nil {
		t.Error("patching a truncated record: want an error")
	}
}

func TestPodSetQueueState(t *testing.T) {
	want := PodQueueState{QueuedTime: 1, InitialAttemptTime: 2, BackoffExpiry: 3, Attempts: 4, LastFailureError: true}
	p := Pod{Name: "p", Priority: 9}
	p.SetQueueState(want)
	v, err := ReadPod(AppendPod(nil, &p))
	if err != nil {
		t.Fatal(err)
	}
	if got := v.QueueState(); got != want || v.Priority() != 9 {
		t.Errorf("QueueState = %+v (priority %d), want %+v (priority 9)", got, v.Priority(), want)
	}
}
