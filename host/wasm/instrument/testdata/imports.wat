;; Regenerate: wat2wasm imports.wat -o imports.wasm
;; Imported globals come first in the global index space: the interrupt global
;; must get index 3 (two imported, one defined).
(module
  (import "env" "g0" (global $g0 i32))
  (import "env" "f" (func $f (result i32)))
  (import "env" "g1" (global $g1 (mut i32)))
  (import "env" "mem" (memory 1))
  (global $own i32 (i32.const 5))
  (func (export "get") (result i32)
    (i32.add
      (i32.add (global.get $g0) (global.get $g1))
      (i32.add (global.get $own) (call $f)))))
