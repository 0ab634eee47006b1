;; Leaks like a guest built with TinyGo's leaking GC that allocates on every
;; call: each call of may_pop grows memory by one page and answers true.
(module
  (memory (export "memory") 1)
  (func (export "wasmsched_abi_version") (result i32) (i32.const 0x00010000))
  (func (export "wasmsched_buffer") (param $n i32) (result i32) (i32.const 1024))
  (func (export "wasmsched_last_error") (result i64) (i64.const 0))
  (func (export "wasmsched_backoff_may_pop") (param i32) (result i32)
    (drop (memory.grow (i32.const 1)))
    (i32.const 1))
)
