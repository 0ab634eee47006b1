;; Starts with 300 pages (18.75 MiB) of memory, above the default limit.
(module
  (memory (export "memory") 300)
  (func (export "wasmsched_abi_version") (result i32) (i32.const 0x00010000))
  (func (export "wasmsched_buffer") (param $n i32) (result i32) (i32.const 1024))
  (func (export "wasmsched_last_error") (result i64) (i64.const 0))
)
