;; Returns results and buffers outside its memory (1 page, 65536 bytes).
(module
  (memory (export "memory") 1)
  (func (export "wasmsched_abi_version") (result i32) (i32.const 0x00010000))
  ;; The buffer is at 65530 whatever the size: only up to 6 bytes fit.
  (func (export "wasmsched_buffer") (param $n i32) (result i32) (i32.const 65530))
  (func (export "wasmsched_last_error") (result i64) (i64.const 0))

  ;; Pointer far outside memory: (0x7fff0000, 16).
  (func (export "wasmsched_queue_sort_key") (param $n i32) (result i64)
    (i64.const 0x7fff000000000010))
  ;; Straddles the end of memory: (65530, 16).
  (func (export "wasmsched_pre_enqueue") (param $n i32) (result i64)
    (i64.const 0x0000fffa00000010))
  ;; Length far beyond memory: (0, 0xffffffff).
  (func (export "wasmsched_victim_order") (param $n i32) (result i64)
    (i64.const 0x00000000ffffffff))
  ;; A boolean that is neither 0 nor 1.
  (func (export "wasmsched_backoff_may_pop") (param $n i32) (result i32)
    (i32.const 7))
)
