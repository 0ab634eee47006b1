;; backoffSort-noexport: a backoffSort policy module that lacks a required
;; export of the slot: wasmsched_backoff_may_pop (it exports less and the sort
;; key); the slot adapter refuses it.
;; Otherwise it follows the contract (abi/abi.go). Memory: 0x100 registrations,
;; 0x200 error message, 0x300 gates, 0x3c0 an all-zero sort key, 0x400 the
;; input buffer (up to 0xfc00 bytes), 0x10000 outputs.
(module
  (memory (export "memory") 2)
  (data (i32.const 0x200) "policy exploded")
  (func (export "wasmsched_abi_version") (result i32) (i32.const 0x00010000))
  (func (export "wasmsched_buffer") (param $n i32) (result i32)
    (if (result i32) (i32.gt_u (local.get $n) (i32.const 0xfc00))
      (then (i32.const 0))
      (else (i32.const 0x400))))
  (func (export "wasmsched_last_error") (result i64)
    (i64.const 0x000002000000000f)) ;; "policy exploded"

  ;; The priority of the pod record at $pod (offset 8), and whether it is odd.
  (func $priority (param $pod i32) (result i32) (i32.load (i32.add (local.get $pod) (i32.const 8))))
  (func $odd (param $pod i32) (result i32) (i32.and (call $priority (local.get $pod)) (i32.const 1)))

  (func (export "wasmsched_backoff_sort_less") (param $a i32) (param $b i32) (result i32)
    (i32.gt_s (call $priority (i32.const 0x400)) (call $priority (i32.add (i32.const 0x400) (local.get $a)))))

  (func (export "wasmsched_backoff_sort_key") (param $n i32) (result i64)
    ;; an all-zero key
    (i64.const 0x000003c000000020))
)
