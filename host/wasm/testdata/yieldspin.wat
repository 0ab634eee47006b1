;; Loops forever in queue_sort_less like spin.wat, but exits to Go (memory.grow
;; 0, a call into the host in wazero's compiler) every 4096 iterations: the
;; shape the instrumented checks need so that a spinning guest cannot hold off
;; a Go stop-the-world (see TestSpinDuringGC).
(module
  (memory (export "memory") 1)
  (global $n (mut i32) (i32.const 0))
  (func (export "wasmsched_abi_version") (result i32) (i32.const 0x00010000))
  (func (export "wasmsched_buffer") (param $n i32) (result i32) (i32.const 1024))
  (func (export "wasmsched_last_error") (result i64) (i64.const 0))

  (func (export "wasmsched_queue_sort_less") (param $a i32) (param $b i32) (result i32)
    (loop $forever
      (global.set $n (i32.add (global.get $n) (i32.const 1)))
      (if (i32.eqz (i32.and (global.get $n) (i32.const 4095)))
        (then (drop (memory.grow (i32.const 0)))))
      (br $forever))
    (i32.const 0))
)
