;; Imports from a module other than WASI (a socket, a global).
(module
  (import "env" "socket" (func (param i32 i32 i32) (result i32)))
  (import "env" "secret" (global i32))
  (memory (export "memory") 1)
  (func (export "wasmsched_abi_version") (result i32) (i32.const 0x00010000))
  (func (export "wasmsched_buffer") (param $n i32) (result i32) (i32.const 1024))
  (func (export "wasmsched_last_error") (result i64) (i64.const 0))
)
