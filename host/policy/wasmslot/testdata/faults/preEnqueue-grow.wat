;; preEnqueue-grow: a preEnqueue policy module that grows memory one page at a
;; time until memory.grow fails at the sandbox limit, then traps, in every slot
;; function (the sort-key probe aside).
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

  ;; Grow memory a page at a time until memory.grow fails (the sandbox limit).
  (func $grow
    (loop $more
      (br_if $more (i32.ne (memory.grow (i32.const 1)) (i32.const -1)))))

  (func (export "wasmsched_pre_enqueue") (param $n i32) (result i64)
    (call $grow)
    (unreachable))
)
