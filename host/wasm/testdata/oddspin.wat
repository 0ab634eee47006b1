;; Slow only for some inputs: queue_sort_less(a, b) loops forever when a is odd, else returns a < b.
(module
  (memory (export "memory") 1)
  (func (export "wasmsched_abi_version") (result i32) (i32.const 0x00010000))
  (func (export "wasmsched_buffer") (param $n i32) (result i32) (i32.const 1024))
  (func (export "wasmsched_last_error") (result i64) (i64.const 0))

  (func (export "wasmsched_queue_sort_less") (param $a i32) (param $b i32) (result i32)
    (if (i32.and (local.get $a) (i32.const 1))
      (then (loop $forever (br $forever))))
    (i32.lt_u (local.get $a) (local.get $b)))
  ;; key(n): the input itself.
  (func (export "wasmsched_queue_sort_key") (param $n i32) (result i64)
    (i64.or (i64.const 0x0000040000000000) (i64.extend_i32_u (local.get $n))))
)
