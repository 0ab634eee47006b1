;; Regenerate: wat2wasm env.wat -o env.wasm
;; Provides the imports of imports.wat.
(module
  (global (export "g0") i32 (i32.const 7))
  (global (export "g1") (mut i32) (i32.const 11))
  (memory (export "mem") 1)
  (func (export "f") (result i32) (i32.const 1)))
