;; placement-abi1.2: a module that exports the placement functions
;; (wasmsched_nodes, wasmsched_filter, wasmsched_score) but reports ABI 1.2,
;; the minor before the placement slots: their adapters refuse it.
;; Otherwise it follows the contract: it keeps no node, passes every node and
;; scores every node 0. Memory: 0x200 the error message, 0x400 the input
;; buffer (up to 0xfc00 bytes), 0x10000 outputs.
(module
  (memory (export "memory") 2)
  (data (i32.const 0x200) "policy exploded")
  (func (export "wasmsched_abi_version") (result i32) (i32.const 0x00010002))
  (func (export "wasmsched_buffer") (param $n i32) (result i32)
    (if (result i32) (i32.gt_u (local.get $n) (i32.const 0xfc00))
      (then (i32.const 0))
      (else (i32.const 0x400))))
  (func (export "wasmsched_last_error") (result i64)
    (i64.const 0x000002000000000f)) ;; "policy exploded"
  (func (export "wasmsched_nodes") (param $n i32) (result i32) (i32.const 0))

  ;; The number of nodes of the placement record at 0x400: ids (count at
  ;; +28), then inline nodes (count at +36).
  (func $count (result i32) (i32.add (i32.load (i32.const 0x41c)) (i32.load (i32.const 0x424))))

  ;; A verdicts record at 0x10000 passing every node (the output area is
  ;; zero, so the verdicts are 0: Pass).
  (func (export "wasmsched_filter") (param $n i32) (result i64)
    (local $size i32)
    (local.set $size (i32.add (i32.const 32) (i32.shl (call $count) (i32.const 2))))
    (i32.store (i32.const 0x10000) (local.get $size))
    (i32.store16 (i32.const 0x10004) (i32.const 12))
    (i32.store16 (i32.const 0x10006) (i32.const 32))
    (i32.store (i32.const 0x10010) (i32.const 32))
    (i32.store (i32.const 0x10014) (call $count))
    (i64.or (i64.const 0x0001000000000000) (i64.extend_i32_u (local.get $size))))

  ;; One zero i64 per node at 0x18000 (never written).
  (func (export "wasmsched_score") (param $n i32) (result i64)
    (i64.or (i64.const 0x0001800000000000) (i64.extend_i32_u (i32.shl (call $count) (i32.const 3)))))
)
