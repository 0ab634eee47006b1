;; Declares a maximum memory (1000 pages) above the default limit.
(module
  (memory (export "memory") 1 1000)
  (func (export "wasmsched_abi_version") (result i32) (i32.const 0x00010000))
  (func (export "wasmsched_buffer") (param $n i32) (result i32) (i32.const 1024))
  (func (export "wasmsched_last_error") (result i64) (i64.const 0))
)
