;; queueingHint-slow: a queueingHint policy module that is slow only for some
;; inputs: it spins when the first pod of the batch has an odd priority, and
;; otherwise answers quickly with Skip for every pod.
;; Otherwise it follows the contract (abi/abi.go). Memory: 0x100 registrations,
;; 0x200 error message, 0x300 gates, 0x3c0 an all-zero sort key, 0x400 the
;; input buffer (up to 0xfc00 bytes), 0x10000 outputs.
(module
  (memory (export "memory") 2)
  (data (i32.const 0x100)
    "\21\00\00\00" "\08\00" "\10\00"    ;; registrations: size 33, tag 8, fixed 16
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
    (i64.const 0x000002000000000f)) ;; "policy exploded"

  ;; The priority of the pod record at $pod (offset 8), and whether it is odd.
  (func $priority (param $pod i32) (result i32) (i32.load (i32.add (local.get $pod) (i32.const 8))))
  (func $odd (param $pod i32) (result i32) (i32.and (call $priority (local.get $pod)) (i32.const 1)))

  (func (export "wasmsched_hint_events") (result i64)
    ;; the registration record at 0x100, 33 bytes
    (i64.const 0x0000010000000021))

  (func (export "wasmsched_queueing_hint") (param $n i32) (result i64)
    (local $count i32) (local $i i32) (local $first i32)
    ;; the first pod: the batch's pod list (offset at +16) holds (offset, length)
    ;; pairs relative to the batch
    (local.set $first (i32.add (i32.const 0x400)
      (i32.load (i32.add (i32.const 0x400) (i32.load (i32.const 0x410))))))
    (if (call $odd (local.get $first)) (then (loop $forever (br $forever))))
    (local.set $count (i32.load (i32.const 0x414)))
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $i) (local.get $count)))
        (i32.store8 (i32.add (i32.const 0x10000) (local.get $i)) (i32.const 0)) ;; Skip
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $next)))
    (i64.or (i64.const 0x0001000000000000) (i64.extend_i32_u (local.get $count))))
)
