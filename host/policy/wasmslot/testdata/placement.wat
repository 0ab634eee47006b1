;; placement: a placement module of ABI 1.3 that serves both placement slots
;; and reports what the host sent it, for the adapter tests in
;; placement_test.go.
;;
;; wasmsched_nodes counts, per instance, its calls (syncs) and how many of
;; them sent each id (upserts); a reset forgets the upserts. It fails with
;; ErrDecode for an id of 0x1000 or more, or an upsert that is not a node
;; record.
;;
;; wasmsched_score scores node i of the placement:
;;   - a node named by id: syncs*10^9 + calls*10^6 + upserts[id]*10^3 + id,
;;     where calls counts the instance's score calls, this one included;
;;   - a node sent inline: minus the length of its name.
;; wasmsched_filter judges node i by i mod 3: Pass, Unschedulable for reason
;; 0 "unschedulable #c", Unresolvable for reason 1 "unresolvable #c", where c
;; is the last digit of the count of the instance's filter calls, this one
;; included.
;; Both fail with ErrPolicy ("asked about a node it was not sent") when a node
;; named by id was never upserted.
;; The pre-steps (wasmsched_pre_filter, wasmsched_pre_score) skip the pods
;; whose priority is below -1. Every function but wasmsched_nodes traps for a
;; pod of priority -1.
;; wasmsched_placement_options declares normalised scores and one filter
;; event: Node, Add|UpdateNodeLabel.
;;
;; Memory: 0x100 the options record, 0x200 the error message, 0x300 the
;; reasons' text, 0x400 the input buffer (up to 0x7c00 bytes), 0x8000
;; outputs, 0x10000 the upserts of each id (u32).
(module
  (memory (export "memory") 2)
  (data (i32.const 0x100)
    "\20\00\00\00" "\0d\00" "\18\00"   ;; placement options: size 32, tag 13, fixed 24
    "\01\00\00\00" "\00\00\00\00"      ;; flags: scores normalised; reserved
    "\18\00\00\00" "\01\00\00\00"      ;; filter events at 24, one
    "\03\00\00\00" "\09\00\00\00")     ;; Node, Add|UpdateNodeLabel
  (data (i32.const 0x200) "asked about a node it was not sent")
  (data (i32.const 0x300) "unschedulable #")
  (data (i32.const 0x320) "unresolvable #")
  (global $syncs (mut i32) (i32.const 0))
  (global $scores (mut i32) (i32.const 0))
  (global $filters (mut i32) (i32.const 0))

  (func (export "wasmsched_abi_version") (result i32) (i32.const 0x00010003))
  (func (export "wasmsched_buffer") (param $n i32) (result i32)
    (if (result i32) (i32.gt_u (local.get $n) (i32.const 0x7c00))
      (then (i32.const 0))
      (else (i32.const 0x400))))
  (func (export "wasmsched_last_error") (result i64)
    (i64.const 0x0000020000000022)) ;; "asked about a node it was not sent"
  (func (export "wasmsched_placement_options") (result i64)
    (i64.const 0x0000010000000020)) ;; the record at 0x100, 32 bytes

  ;; The node sync record is at 0x400: flags at +8 (bit 0: reset), the
  ;; upserts at +16 (offset relative to the record, count), each 16 bytes:
  ;; u32 id, u32 reserved, the node record (offset, length).
  (func (export "wasmsched_nodes") (param $n i32) (result i32)
    (local $list i32) (local $count i32) (local $i i32) (local $e i32) (local $id i32) (local $at i32)
    (if (i32.and (i32.load (i32.const 0x408)) (i32.const 1))
      (then
        (block $done
          (loop $next
            (br_if $done (i32.ge_u (local.get $i) (i32.const 0x1000)))
            (i32.store (i32.add (i32.const 0x10000) (i32.shl (local.get $i) (i32.const 2))) (i32.const 0))
            (local.set $i (i32.add (local.get $i) (i32.const 1)))
            (br $next)))
        (local.set $i (i32.const 0))))
    (global.set $syncs (i32.add (global.get $syncs) (i32.const 1)))
    (local.set $list (i32.add (i32.const 0x400) (i32.load (i32.const 0x410))))
    (local.set $count (i32.load (i32.const 0x414)))
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $i) (local.get $count)))
        (local.set $e (i32.add (local.get $list) (i32.shl (local.get $i) (i32.const 4))))
        (local.set $id (i32.load (local.get $e)))
        (if (i32.ge_u (local.get $id) (i32.const 0x1000)) (then (return (i32.const -1))))
        ;; the node record's tag (2: node)
        (if (i32.ne (i32.load16_u (i32.add (i32.const 0x404) (i32.load (i32.add (local.get $e) (i32.const 8)))))
                    (i32.const 2))
          (then (return (i32.const -1))))
        (local.set $at (i32.add (i32.const 0x10000) (i32.shl (local.get $id) (i32.const 2))))
        (i32.store (local.get $at) (i32.add (i32.load (local.get $at)) (i32.const 1)))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $next)))
    (i32.const 0))

  ;; The placement record is at 0x400: the pod is the record referenced at
  ;; +16, the ids the u32 list at +24, the inline nodes the list of
  ;; (offset, length) references at +32; offsets are relative to the record.
  (func $pod (result i32) (i32.add (i32.const 0x400) (i32.load (i32.const 0x410))))
  (func $ids (result i32) (i32.load (i32.const 0x41c)))
  (func $count (result i32) (i32.add (call $ids) (i32.load (i32.const 0x424))))
  (func $id (param $i i32) (result i32)
    (i32.load (i32.add (i32.add (i32.const 0x400) (i32.load (i32.const 0x418))) (i32.shl (local.get $i) (i32.const 2)))))
  ;; The address of inline node $j.
  (func $inline (param $j i32) (result i32)
    (i32.add (i32.const 0x400)
      (i32.load (i32.add (i32.add (i32.const 0x400) (i32.load (i32.const 0x420))) (i32.shl (local.get $j) (i32.const 3))))))
  ;; The upserts of $id: 0 if it was never sent.
  (func $upserts (param $id i32) (result i32)
    (if (result i32) (i32.ge_u (local.get $id) (i32.const 0x1000))
      (then (i32.const 0))
      (else (i32.load (i32.add (i32.const 0x10000) (i32.shl (local.get $id) (i32.const 2)))))))
  ;; Whether every node named by id was sent.
  (func $held (result i32)
    (local $i i32)
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $i) (call $ids)))
        (if (i32.eqz (call $upserts (call $id (local.get $i)))) (then (return (i32.const 0))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $next)))
    (i32.const 1))
  ;; Traps if the pod record at $pod has priority -1.
  (func $trapOn (param $pod i32)
    (if (i32.eq (i32.load (i32.add (local.get $pod) (i32.const 8))) (i32.const -1))
      (then (unreachable))))

  ;; The pre-steps: the input is a pod record.
  (func $pre (param $n i32) (result i32)
    (call $trapOn (i32.const 0x400))
    (i32.ge_s (i32.load (i32.const 0x408)) (i32.const -1)))
  (export "wasmsched_pre_filter" (func $pre))
  (export "wasmsched_pre_score" (func $pre))

  (func (export "wasmsched_score") (param $n i32) (result i64)
    (local $i i32) (local $id i32) (local $v i64)
    (call $trapOn (call $pod))
    (if (i32.eqz (call $held)) (then (return (i64.const -2))))
    (global.set $scores (i32.add (global.get $scores) (i32.const 1)))
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $i) (call $count)))
        (if (i32.lt_u (local.get $i) (call $ids))
          (then
            (local.set $id (call $id (local.get $i)))
            (local.set $v
              (i64.add
                (i64.add
                  (i64.mul (i64.extend_i32_u (global.get $syncs)) (i64.const 1000000000))
                  (i64.mul (i64.extend_i32_u (global.get $scores)) (i64.const 1000000)))
                (i64.add
                  (i64.mul (i64.extend_i32_u (call $upserts (local.get $id))) (i64.const 1000))
                  (i64.extend_i32_u (local.get $id))))))
          (else
            ;; minus the length of the inline node's name (the string at +16)
            (local.set $v (i64.sub (i64.const 0)
              (i64.extend_i32_u (i32.load (i32.add (call $inline (i32.sub (local.get $i) (call $ids))) (i32.const 20))))))))
        (i64.store (i32.add (i32.const 0x8000) (i32.shl (local.get $i) (i32.const 3))) (local.get $v))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $next)))
    (i64.or (i64.const 0x0000800000000000) (i64.extend_i32_u (i32.shl (call $count) (i32.const 3)))))

  ;; Copies $len bytes from $src to $dst.
  (func $copy (param $dst i32) (param $src i32) (param $len i32)
    (local $i i32)
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $i) (local.get $len)))
        (i32.store8 (i32.add (local.get $dst) (local.get $i)) (i32.load8_u (i32.add (local.get $src) (local.get $i))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $next))))

  ;; The verdicts record at 0x8000: the verdict list at 32, the reason list
  ;; ($r) after it, the reasons' text after that.
  (func (export "wasmsched_filter") (param $n i32) (result i64)
    (local $count i32) (local $r i32) (local $i i32) (local $k i32) (local $c i32)
    (call $trapOn (call $pod))
    (if (i32.eqz (call $held)) (then (return (i64.const -2))))
    (global.set $filters (i32.add (global.get $filters) (i32.const 1)))
    (local.set $c (i32.add (i32.const 0x30) (i32.rem_u (global.get $filters) (i32.const 10)))) ;; '0' + calls mod 10
    (local.set $count (call $count))
    (local.set $r (i32.add (i32.const 32) (i32.shl (local.get $count) (i32.const 2))))
    (i32.store (i32.const 0x8000) (i32.add (local.get $r) (i32.const 47))) ;; size
    (i32.store16 (i32.const 0x8004) (i32.const 12))                       ;; tag: verdicts
    (i32.store16 (i32.const 0x8006) (i32.const 32))                       ;; fixed part
    (i64.store (i32.const 0x8008) (i64.const 0))
    (i32.store (i32.const 0x8010) (i32.const 32))                         ;; verdicts at 32,
    (i32.store (i32.const 0x8014) (local.get $count))                     ;; one per node
    (i32.store (i32.const 0x8018) (local.get $r))                         ;; reasons at $r,
    (i32.store (i32.const 0x801c) (i32.const 2))                          ;; two
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $i) (local.get $count)))
        (local.set $k (i32.rem_u (local.get $i) (i32.const 3)))
        (i32.store (i32.add (i32.const 0x8020) (i32.shl (local.get $i) (i32.const 2)))
          (if (result i32) (i32.eqz (local.get $k))
            (then (i32.const 0))                 ;; Pass
            (else (if (result i32) (i32.eq (local.get $k) (i32.const 1))
              (then (i32.const 0x001))           ;; Unschedulable, reason 0
              (else (i32.const 0x102))))))       ;; Unresolvable, reason 1
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $next)))
    ;; reason 0: 16 bytes at $r+16; reason 1: 15 bytes at $r+32
    (i32.store (i32.add (i32.const 0x8000) (local.get $r)) (i32.add (local.get $r) (i32.const 16)))
    (i32.store (i32.add (i32.const 0x8004) (local.get $r)) (i32.const 16))
    (i32.store (i32.add (i32.const 0x8008) (local.get $r)) (i32.add (local.get $r) (i32.const 32)))
    (i32.store (i32.add (i32.const 0x800c) (local.get $r)) (i32.const 15))
    (call $copy (i32.add (i32.const 0x8010) (local.get $r)) (i32.const 0x300) (i32.const 15))
    (i32.store8 (i32.add (i32.const 0x801f) (local.get $r)) (local.get $c))
    (call $copy (i32.add (i32.const 0x8020) (local.get $r)) (i32.const 0x320) (i32.const 14))
    (i32.store8 (i32.add (i32.const 0x802e) (local.get $r)) (local.get $c))
    (i64.or (i64.const 0x0000800000000000) (i64.extend_i32_u (i32.add (local.get $r) (i32.const 47)))))
)
