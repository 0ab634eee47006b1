;; victimOrder-slow: a victimOrder policy module that is slow only for some
;; inputs: it spins when the first victim's priority is odd, and otherwise
;; answers quickly with the victims in reverse order.
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

  (func (export "wasmsched_victim_order") (param $n i32) (result i64)
    (local $count i32) (local $i i32)
    ;; the first victim's priority: the victim list (offset at +16) holds
    ;; 48-byte elements, priority at +4
    (if (i32.and (i32.load (i32.add (i32.const 0x404) (i32.load (i32.const 0x410)))) (i32.const 1))
      (then (loop $forever (br $forever))))
    (local.set $count (i32.load (i32.const 0x414)))
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $i) (local.get $count)))
        (i32.store (i32.add (i32.const 0x10000) (i32.shl (local.get $i) (i32.const 2)))
          (i32.sub (i32.sub (local.get $count) (local.get $i)) (i32.const 1)))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $next)))
    (i64.or (i64.const 0x0001000000000000) (i64.extend_i32_u (i32.shl (local.get $count) (i32.const 2)))))
)
