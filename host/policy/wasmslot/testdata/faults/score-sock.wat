;; score-sock: a score policy module that imports the WASI socket functions
;; sock_accept and sock_send and answers over a socket in wasmsched_score;
;; Load refuses the imports.
;; Otherwise it follows the contract of ABI 1.3 (abi/abi.go, abi/placement.go):
;; wasmsched_nodes accepts every node sync (the module keeps no node), and
;; the host's smoke call gets a well-formed answer. Memory: 0x200 error
;; message, 0x300 the smoke pod's namespace, 0x310 a rejection reason, 0x400
;; the input buffer (up to 0xfc00 bytes), 0x10000 outputs.
(module
  (import "wasi_snapshot_preview1" "sock_accept" (func $sock_accept (param i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "sock_send" (func $sock_send (param i32 i32 i32 i32 i32) (result i32)))
  (memory (export "memory") 2)
  (data (i32.const 0x200) "policy exploded")
  (data (i32.const 0x300) "wasmsched-smoke")
  (data (i32.const 0x310) "even priority")
  (func (export "wasmsched_abi_version") (result i32) (i32.const 0x00010003))
  (func (export "wasmsched_buffer") (param $n i32) (result i32)
    (if (result i32) (i32.gt_u (local.get $n) (i32.const 0xfc00))
      (then (i32.const 0))
      (else (i32.const 0x400))))
  (func (export "wasmsched_last_error") (result i64)
    (i64.const 0x000002000000000f)) ;; "policy exploded"

  ;; Every node sync is accepted; the records are not kept.
  (func (export "wasmsched_nodes") (param $n i32) (result i32) (i32.const 0))

  ;; The placement record is at 0x400: the pod is the record referenced at
  ;; +16 (offsets are relative to the placement record), and the nodes are
  ;; the ids (their count at +28) followed by the inline nodes (count at +36).
  (func $pod (result i32) (i32.add (i32.const 0x400) (i32.load (i32.const 0x410))))
  (func $count (result i32) (i32.add (i32.load (i32.const 0x41c)) (i32.load (i32.const 0x424))))

  ;; $n scores at 0x10000, one little-endian i64 per node: node i scores
  ;; $top - i. Returns the Result of the 8*$n bytes.
  (func $scores (param $n i32) (param $top i64) (result i64)
    (local $i i32)
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $i) (local.get $n)))
        (i64.store (i32.add (i32.const 0x10000) (i32.shl (local.get $i) (i32.const 3)))
          (i64.sub (local.get $top) (i64.extend_i32_u (local.get $i))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $next)))
    (i64.or (i64.const 0x0001000000000000) (i64.extend_i32_u (i32.shl (local.get $n) (i32.const 3)))))

  (func (export "wasmsched_score") (param $n i32) (result i64)
    ;; accept a connection on listening socket 3 and send to it
    (drop (call $sock_accept (i32.const 3) (i32.const 0) (i32.const 0x3f0)))
    (drop (call $sock_send (i32.load (i32.const 0x3f0)) (i32.const 0x3e0) (i32.const 1) (i32.const 0) (i32.const 0x3f4)))
    (call $scores (call $count) (i64.const 0)))
)
