package policytest

import (
	"encoding/json"
	"fmt"

	"github.com/wasmsched/wasmsched/abi"
)

// A pod, node or event of a case may be given as the record the scheduler
// built, in base64 under the key record: a Shadow's samples carry their
// inputs so (SchedulingPolicy status.replicas[].shadow.samples[].case), and
// `wasmsched policy diff` runs them as cases. Keys after record change
// the record's fields.
func init() {
	podFields["record"] = abiRecord(func(b []byte, p *abi.Pod) error {
		v, err := abi.ReadPod(b)
		if err != nil {
			return err
		}
		return v.Decode(p)
	})
	nodeFields["record"] = abiRecord(func(b []byte, n *abi.Node) error {
		v, err := abi.ReadNode(b)
		if err != nil {
			return err
		}
		return v.Decode(n)
	})
	eventFields["record"] = abiRecord(func(b []byte, e *abi.Event) error {
		v, err := abi.ReadEvent(b)
		if err != nil {
			return err
		}
		e.Resource, e.Action = v.Resource(), v.Action()
		e.Old, e.New = append([]byte(nil), v.OldBytes()...), append([]byte(nil), v.NewBytes()...)
		return nil
	})
}

// abiRecord decodes a base64 record into rec.
func abiRecord[T any](decode func(b []byte, rec *T) error) field[T] {
	return func(rec *T, raw json.RawMessage, path string) error {
		var b []byte
		if err := json.Unmarshal(raw, &b); err != nil {
			return fmt.Errorf("%s: want the record in base64: %w", path, err)
		}
		if err := decode(b, rec); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		return nil
	}
}
