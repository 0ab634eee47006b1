;; queueSort-loop: a queueSort policy module that spins forever in every slot
;; function (the sort-key probe aside): the watchdog must stop each call at the
;; deadline.
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

  (func (export "wasmsched_queue_sort_less") (param $a i32) (param $b i32) (result i32)
    (loop $forever (br $forever))
    (unreachable))

  (func (export "wasmsched_queue_sort_key") (param $n i32) (result i64)
    ;; The adapter probes the key with an empty pod record (288 bytes): answer
    ;; it with a valid all-zero key so that the module loads as a keyed sort.
    (if (i32.eq (local.get $n) (i32.const 288))
      (then (return (i64.const 0x000003c000000020))))
    (loop $forever (br $forever))
    (unreachable))
)
