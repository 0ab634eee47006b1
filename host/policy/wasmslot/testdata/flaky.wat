;; A queue-sort module for the hot-swap and circuit-breaker tests. It orders
;; pods the other way round from PrioritySort, so its answers are told apart
;; from the native default's and from guest-sdk/examples/prioritysort's:
;;   queue_sort_less(a, b)  priority(a) < priority(b); traps if priority(a) < 0
;;   queue_sort_key(p)      the constant key {7, 0, 0, 0}; traps if priority(p) < 0
;;   pre_enqueue            always traps (a module that fails its smoke call)
;; A pod record's priority is the i32 at offset 8 (abi/pod.go).
(module
  (memory (export "memory") 2)
  ;; 0x400: input buffer; 0x10000 (page 2): the key.
  (data (i32.const 0x10000) "\07\00\00\00\00\00\00\00")
  (func (export "wasmsched_abi_version") (result i32) (i32.const 0x00010000))
  (func (export "wasmsched_buffer") (param $n i32) (result i32)
    (if (result i32) (i32.gt_u (local.get $n) (i32.const 0xfc00))
      (then (i32.const 0))
      (else (i32.const 0x400))))
  (func (export "wasmsched_last_error") (result i64) (i64.const 0))

  ;; $prio reads the priority of the record at $at and traps if it is negative.
  (func $prio (param $at i32) (result i32)
    (local $p i32)
    (local.set $p (i32.load (i32.add (local.get $at) (i32.const 8))))
    (if (i32.lt_s (local.get $p) (i32.const 0)) (then (unreachable)))
    (local.get $p))

  (func (export "wasmsched_queue_sort_less") (param $a i32) (param $b i32) (result i32)
    (i32.lt_s
      (call $prio (i32.const 0x400))
      (call $prio (i32.add (i32.const 0x400) (local.get $a)))))
  (func (export "wasmsched_queue_sort_key") (param $n i32) (result i64)
    (drop (call $prio (i32.const 0x400)))
    (i64.or (i64.shl (i64.const 0x10000) (i64.const 32)) (i64.const 32)))
  (func (export "wasmsched_pre_enqueue") (param i32) (result i64) (unreachable))
)
