;; Regenerate: wat2wasm compute.wat -o compute.wasm
;; Terminating computations whose results must not change under instrumentation.
(module
  (type $unop (func (param i32) (result i32)))
  (memory (export "memory") 1)
  (table 2 funcref)
  (elem (i32.const 0) $sq $neg)
  (func $sq (type $unop) (i32.mul (local.get 0) (local.get 0)))
  (func $neg (type $unop) (i32.sub (i32.const 0) (local.get 0)))

  ;; sum of 1..n
  (func (export "sum") (param $n i32) (result i64)
    (local $acc i64)
    (block $done
      (loop $next
        (br_if $done (i32.eqz (local.get $n)))
        (local.set $acc (i64.add (local.get $acc) (i64.extend_i32_u (local.get $n))))
        (local.set $n (i32.sub (local.get $n) (i32.const 1)))
        (br $next)))
    (local.get $acc))

  ;; sum over i, j < n of (i*j) mod 7
  (func (export "nested") (param $n i32) (result i32)
    (local $i i32) (local $j i32) (local $acc i32)
    (loop $outer
      (local.set $j (i32.const 0))
      (loop $inner
        (local.set $acc (i32.add (local.get $acc)
          (i32.rem_u (i32.mul (local.get $i) (local.get $j)) (i32.const 7))))
        (local.set $j (i32.add (local.get $j) (i32.const 1)))
        (br_if $inner (i32.lt_u (local.get $j) (local.get $n))))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br_if $outer (i32.lt_u (local.get $i) (local.get $n))))
    (local.get $acc))

  ;; br_table dispatch
  (func (export "classify") (param $x i32) (result i32)
    (block $d
      (block $c
        (block $b
          (block $a
            (br_table $a $b $c $d (local.get $x)))
          (return (i32.const 100)))
        (return (i32.const 200)))
      (return (i32.const 300)))
    (i32.const 400))

  ;; Collatz steps: if/else inside a loop with a result, leaving via a block result.
  (func (export "collatz") (param $n i64) (result i32)
    (local $steps i32)
    (block $done (result i32)
      (loop $l (result i32)
        (drop (br_if $done (local.get $steps) (i64.le_u (local.get $n) (i64.const 1))))
        (if (i64.eqz (i64.and (local.get $n) (i64.const 1)))
          (then (local.set $n (i64.shr_u (local.get $n) (i64.const 1))))
          (else (local.set $n (i64.add (i64.mul (local.get $n) (i64.const 3)) (i64.const 1)))))
        (local.set $steps (i32.add (local.get $steps) (i32.const 1)))
        (br $l))))

  ;; Fibonacci through a multi-value loop (block type is a type index).
  (func (export "fib") (param $n i32) (result i64)
    (local $a i64) (local $b i64)
    (i64.const 0)
    (i64.const 1)
    (loop $l (param i64 i64) (result i64 i64)
      (local.set $b)
      (local.set $a)
      (if (i32.eqz (local.get $n)) (then (return (local.get $a))))
      (local.set $n (i32.sub (local.get $n) (i32.const 1)))
      (local.get $b)
      (i64.add (local.get $a) (local.get $b))
      (br $l))
    (drop)
    (drop)
    (i64.const -1))

  ;; Sieve of Eratosthenes in linear memory (n <= 65536).
  (func (export "primes") (param $n i32) (result i32)
    (local $i i32) (local $j i32) (local $count i32)
    (memory.fill (i32.const 0) (i32.const 0) (local.get $n))
    (local.set $i (i32.const 2))
    (block $done
      (loop $outer
        (br_if $done (i32.ge_u (local.get $i) (local.get $n)))
        (if (i32.eqz (i32.load8_u offset=0 (local.get $i)))
          (then
            (local.set $count (i32.add (local.get $count) (i32.const 1)))
            (local.set $j (i32.mul (local.get $i) (local.get $i)))
            (block $b
              (loop $mark
                (br_if $b (i32.ge_u (local.get $j) (local.get $n)))
                (i32.store8 (local.get $j) (i32.const 1))
                (local.set $j (i32.add (local.get $j) (local.get $i)))
                (br $mark)))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $outer)))
    (local.get $count))

  ;; call_indirect, select and a block with a result.
  (func (export "dispatch") (param $k i32) (param $x i32) (result i32)
    (local $r i32)
    (local.set $r
      (block $out (result i32)
        (if (i32.gt_u (local.get $k) (i32.const 1)) (then (br $out (i32.const -1))))
        (call_indirect (type $unop) (local.get $x) (local.get $k))))
    (select (local.get $r) (i32.const 3) (i32.ne (local.get $r) (i32.const 0))))

  ;; The benchmark loop: n additions.
  (func (export "countdown") (param $n i32) (result i32)
    (local $acc i32)
    (if (i32.eqz (local.get $n)) (then (return (i32.const 0))))
    (loop $l
      (local.set $acc (i32.add (local.get $acc) (local.get $n)))
      (br_if $l (local.tee $n (i32.sub (local.get $n) (i32.const 1)))))
    (local.get $acc)))
