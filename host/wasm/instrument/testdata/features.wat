;; Regenerate: wat2wasm --enable-threads --enable-tail-call features.wat -o features.wasm
;; Post-MVP instructions: SIMD, bulk memory, reference types, tail calls,
;; threads, saturating truncation and sign extension, each inside a loop.
(module
  (type $unop (func (param i32) (result i32)))
  (memory 1 1 shared)
  (table $t 4 funcref)
  (table $u 4 funcref)
  (elem $e func $inc $dbl)
  (data $d "\03\03\03\03\03\03\03\03\03\03\03\03\03\03\03\03")
  (global $vg (mut v128) (v128.const i32x4 3 3 3 3))
  (global $fr funcref (ref.func $inc))

  (func $inc (type $unop) (i32.add (local.get 0) (i32.const 1)))
  (func $dbl (type $unop) (i32.shl (local.get 0) (i32.const 1)))

  ;; SIMD: accumulate lanes over n iterations.
  (func (export "simd") (param $n i32) (result i32)
    (local $v v128)
    (v128.store offset=64 (i32.const 0) (v128.const i8x16 3 3 3 3 3 3 3 3 3 3 3 3 3 3 3 3))
    (local.set $v (global.get $vg))
    (block $done
      (loop $l
        (br_if $done (i32.eqz (local.get $n)))
        (local.set $v (i32x4.add (local.get $v) (v128.load offset=64 (i32.const 0))))
        (local.set $v (i8x16.shuffle 3 2 1 0 7 6 5 4 11 10 9 8 15 14 13 12 (local.get $v) (local.get $v)))
        (local.set $v (v128.load32_lane offset=64 3 (i32.const 0) (local.get $v)))
        (local.set $v (i32x4.replace_lane 3 (local.get $v) (i32x4.extract_lane 0 (local.get $v))))
        (local.set $n (i32.sub (local.get $n) (i32.const 1)))
        (br $l)))
    (i32.add (i32x4.extract_lane 3 (local.get $v)) (i8x16.extract_lane_u 3 (local.get $v))))

  ;; Bulk memory and tables, reference types.
  (func (export "bulk") (param $n i32) (result i32)
    (local $acc i32) (local $i i32)
    (memory.init $d (i32.const 128) (i32.const 0) (i32.const 16))
    (memory.copy (i32.const 256) (i32.const 128) (i32.const 16))
    (memory.fill (i32.const 272) (i32.const 3) (i32.const 3))
    (table.init $t $e (i32.const 0) (i32.const 0) (i32.const 2))
    (table.copy $u $t (i32.const 1) (i32.const 0) (i32.const 2))
    (drop (table.grow $u (ref.null func) (i32.const 1)))
    (table.fill $u (i32.const 3) (global.get $fr) (i32.const 1))
    (table.set $t (i32.const 2) (table.get $u (i32.const 1)))
    (loop $l
      (local.set $acc
        (i32.add (local.get $acc)
          (call_indirect $t (type $unop) (i32.load8_u offset=3 (local.get $i)) (i32.rem_u (local.get $i) (i32.const 3)))))
      (local.set $acc (i32.add (local.get $acc) (i32.load8_u (i32.add (i32.const 256) (local.get $i)))))
      (local.set $acc (i32.add (local.get $acc)
        (select (result i32) (i32.const 3) (table.size $u) (ref.is_null (table.get $u (i32.const 0))))))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br_if $l (i32.lt_u (local.get $i) (local.get $n))))
    (local.get $acc))

  (func (export "drop_segments")
    (data.drop $d)
    (elem.drop $e))

  ;; Tail calls: constant stack however large n is.
  (func $tsum (param $n i64) (param $acc i64) (result i64)
    (if (i64.eqz (local.get $n)) (then (return (local.get $acc))))
    (return_call $tsum (i64.sub (local.get $n) (i64.const 1)) (i64.add (local.get $acc) (local.get $n))))
  (func (export "tailsum") (param $n i64) (result i64)
    (return_call $tsum (local.get $n) (i64.const 0)))
  (func (export "tailindirect") (param $x i32) (result i32)
    (table.init $t $e (i32.const 0) (i32.const 0) (i32.const 2))
    (return_call_indirect $t (type $unop) (local.get $x) (i32.const 1)))

  ;; Threads: atomic read-modify-write in a loop.
  (func (export "atomics") (param $n i32) (result i32)
    (i32.atomic.store offset=512 (i32.const 0) (i32.const 0))
    (loop $l
      (drop (i32.atomic.rmw.add offset=512 (i32.const 0) (i32.const 3)))
      (atomic.fence)
      (local.set $n (i32.sub (local.get $n) (i32.const 1)))
      (br_if $l (local.get $n)))
    (drop (memory.atomic.notify offset=512 (i32.const 0) (i32.const 1)))
    (i32.atomic.load offset=512 (i32.const 0)))

  ;; Saturating truncation and sign extension.
  (func (export "numeric") (param $x f64) (result i64)
    (i64.add
      (i64.trunc_sat_f64_s (local.get $x))
      (i64.extend8_s (i64.extend_i32_u (i32.trunc_sat_f64_u (local.get $x)))))))
