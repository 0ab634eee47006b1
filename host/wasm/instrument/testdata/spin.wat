;; Regenerate: wat2wasm spin.wat -o spin.wasm
;; Runaway guests for the interruption tests. "started" lets the test know the
;; call is running before it raises the interrupt global, and the count at
;; address 0 of memory (one per loop iteration or call of $rec, each past an
;; interrupt check) that it is well inside its loop or recursion. The memory
;; also makes Instrument emit its periodic memory.grow 0, without which a GC
;; that starts while a guest spins would wait for it forever (see
;; TestYieldDuringGC).
(module
  (import "env" "started" (func $started))
  (memory (export "memory") 1)

  ;; Spins forever: only the loop-header check can stop it.
  (func (export "spin")
    (call $started)
    (loop $l
      (i32.store (i32.const 0) (i32.add (i32.load (i32.const 0)) (i32.const 1)))
      (br $l)))

  ;; Tree recursion of depth 62: bounded stack, practically unbounded time,
  ;; no loop instructions, so only the function-entry check can stop it.
  (func $rec (param $d i32)
    (i32.store (i32.const 0) (i32.add (i32.load (i32.const 0)) (i32.const 1)))
    (if (local.get $d)
      (then
        (call $rec (i32.sub (local.get $d) (i32.const 1)))
        (call $rec (i32.sub (local.get $d) (i32.const 1))))))
  (func (export "recurse")
    (call $started)
    (call $rec (i32.const 62)))

  (func (export "add") (param i32 i32) (result i32)
    (i32.add (local.get 0) (local.get 1))))
