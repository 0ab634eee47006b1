;; A well-behaved policy module for the runtime tests and benchmarks.
;; Memory layout: 0 init marker, 4 count of wasmsched_buffer calls, 16 error
;; message, 1024 input buffer (4096 bytes), 8192 output.
(module
  (memory (export "memory") 1)
  (data (i32.const 16) "no error")

  ;; The reactor initialiser: abi_version reports 0.0 unless it ran first.
  (func (export "_initialize")
    (i32.store (i32.const 0) (i32.const 1)))

  (func (export "wasmsched_abi_version") (result i32)
    (if (result i32) (i32.eq (i32.load (i32.const 0)) (i32.const 1))
      (then (i32.const 0x00010000))
      (else (i32.const 0))))

  (func (export "wasmsched_buffer") (param $n i32) (result i32)
    (i32.store (i32.const 4) (i32.add (i32.load (i32.const 4)) (i32.const 1)))
    (if (result i32) (i32.le_u (local.get $n) (i32.const 4096))
      (then (i32.const 1024))
      (else (i32.const 0))))

  (func (export "wasmsched_last_error") (result i64)
    (i64.const 0x0000001000000008)) ;; ptr 16, len 8

  ;; less(a, b) = a < b, from the parameters alone.
  (func (export "wasmsched_queue_sort_less") (param $a i32) (param $b i32) (result i32)
    (i32.lt_u (local.get $a) (local.get $b)))

  ;; key(n): the input bytes reversed, at 8192.
  (func (export "wasmsched_queue_sort_key") (param $n i32) (result i64)
    (local $i i32)
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $i) (local.get $n)))
        (i32.store8
          (i32.add (i32.const 8192) (local.get $i))
          (i32.load8_u (i32.sub (i32.add (i32.const 1024) (local.get $n))
                                (i32.add (local.get $i) (i32.const 1)))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $next)))
    (i64.or (i64.const 0x0000200000000000) (i64.extend_i32_u (local.get $n))))

  ;; may_pop(n): the low bit of the first input byte.
  (func (export "wasmsched_backoff_may_pop") (param $n i32) (result i32)
    (i32.and (i32.load8_u (i32.const 1024)) (i32.const 1)))
)
