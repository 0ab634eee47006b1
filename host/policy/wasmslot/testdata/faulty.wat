;; A module that serves every slot and misbehaves in each one differently, so
;; the adapters' fallbacks can be tested:
;;   queue/backoff less   trap (unreachable)
;;   queue/backoff key    a valid all-zero key for an empty pod record (288
;;                        bytes, what the adapter probes with), a spin for any
;;                        other pod, so the deadline stops it
;;   backoff may_pop      returns 7, neither true nor false
;;   pre_enqueue          returns 10 bytes that are not a gate record
;;   hint_events          a valid registration: plugin "X", Node, Add
;;   queueing_hint        returns -ErrPolicy with a message
;;   victim_order         returns 4 bytes whatever the number of victims
(module
  (memory (export "memory") 2)
  ;; 0x100: the registration record (33 bytes); 0x200: the error message;
  ;; 0x400: input buffer; 0x10000 (page 2): outputs (zeroed).
  (data (i32.const 0x100)
    "\21\00\00\00" "\08\00" "\10\00"    ;; size 33, tag registrations, fixed 16
    "\10\00\00\00" "\01\00\00\00"       ;; list at 16, one element
    "\20\00\00\00" "\01\00\00\00"       ;; plugin "X" at 32
    "\03\00\00\00" "\01\00\00\00"       ;; resource Node, action Add
    "X")
  (data (i32.const 0x200) "policy exploded")
  (func (export "wasmsched_abi_version") (result i32) (i32.const 0x00010000))
  (func (export "wasmsched_buffer") (param $n i32) (result i32)
    (if (result i32) (i32.gt_u (local.get $n) (i32.const 0xfc00))
      (then (i32.const 0))
      (else (i32.const 0x400))))
  (func (export "wasmsched_last_error") (result i64)
    (i64.or (i64.shl (i64.const 0x200) (i64.const 32)) (i64.const 15)))

  (func $key (param $n i32) (result i64)
    (if (i32.ne (local.get $n) (i32.const 288))
      (then (loop $forever (br $forever))))
    (i64.or (i64.shl (i64.const 0x10000) (i64.const 32)) (i64.const 32)))

  (func (export "wasmsched_queue_sort_less") (param i32 i32) (result i32) (unreachable))
  (func (export "wasmsched_queue_sort_key") (param $n i32) (result i64) (call $key (local.get $n)))
  (func (export "wasmsched_backoff_sort_less") (param i32 i32) (result i32) (unreachable))
  (func (export "wasmsched_backoff_sort_key") (param $n i32) (result i64) (call $key (local.get $n)))
  (func (export "wasmsched_backoff_may_pop") (param i32) (result i32) (i32.const 7))
  (func (export "wasmsched_pre_enqueue") (param i32) (result i64)
    (i64.or (i64.shl (i64.const 0x10000) (i64.const 32)) (i64.const 10)))
  (func (export "wasmsched_hint_events") (result i64)
    (i64.or (i64.shl (i64.const 0x100) (i64.const 32)) (i64.const 33)))
  (func (export "wasmsched_queueing_hint") (param i32) (result i64) (i64.const -2))
  (func (export "wasmsched_victim_order") (param i32) (result i64)
    (i64.or (i64.shl (i64.const 0x10000) (i64.const 32)) (i64.const 4)))
)
