;; preEnqueue-slow: a preEnqueue policy module that is slow only for some
;; inputs: it spins when the pod's priority is odd, and otherwise answers
;; quickly with a gate that holds the pod (plugin "Slow", reason "even
;; priority").
;; Otherwise it follows the contract (abi/abi.go). Memory: 0x100 registrations,
;; 0x200 error message, 0x300 gates, 0x3c0 an all-zero sort key, 0x400 the
;; input buffer (up to 0xfc00 bytes), 0x10000 outputs.
(module
  (memory (export "memory") 2)
  (data (i32.const 0x200) "policy exploded")
  (data (i32.const 0x300)
    "\31\00\00\00" "\07\00" "\20\00"    ;; gate: size 49, tag 7, fixed 32
    "\01\00\00\00" "\00\00\00\00"       ;; code wait, reserved
    "\20\00\00\00" "\04\00\00\00"       ;; plugin at 32, 4 bytes
    "\24\00\00\00" "\0d\00\00\00"       ;; reason at 36, 13 bytes
    "Slow" "even priority")
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

  (func (export "wasmsched_pre_enqueue") (param $n i32) (result i64)
    (if (call $odd (i32.const 0x400)) (then (loop $forever (br $forever))))
    ;; the wait gate at 0x300, 49 bytes
    (i64.const 0x0000030000000031))
)
