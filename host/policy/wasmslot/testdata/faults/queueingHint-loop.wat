;; queueingHint-loop: a queueingHint policy module that spins forever in every
;; slot function (the sort-key probe aside): the watchdog must stop each call
;; at the deadline.
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

  (func (export "wasmsched_hint_events") (result i64)
    ;; the registration record at 0x100, 33 bytes
    (i64.const 0x0000010000000021))

  (func (export "wasmsched_queueing_hint") (param $n i32) (result i64)
    (loop $forever (br $forever))
    (unreachable))
)
