;; filter-grow: a filter policy module that grows memory one page at a time
;; until memory.grow fails at the sandbox limit, then traps, in
;; wasmsched_filter on every call but the host's smoke call.
;; Otherwise it follows the contract of ABI 1.3 (abi/abi.go, abi/placement.go):
;; wasmsched_nodes accepts every node sync (the module keeps no node), and
;; the host's smoke call gets a well-formed answer. Memory: 0x200 error
;; message, 0x300 the smoke pod's namespace, 0x310 a rejection reason, 0x400
;; the input buffer (up to 0xfc00 bytes), 0x10000 outputs.
(module
  (memory (export "memory") 2)
  (data (i32.const 0x200) "policy exploded")
  (data (i32.const 0x300) "wasmsched-smoke")
  (data (i32.const 0x310) "even priority")
  (func (export "wasmsched_abi_version") (result i32) (i32.const 0x00010003))
  (func (export "wasmsched_buffer") (param $n i32) (result i32)
    (if (result i32) (i32.gt_u (local.get $n) (i32.const 0xfc00))
      (then (i32.const 0))
      (else (i32.const 0x400))))
  (func (export "wasmsched_last_error") (result i64)
    (i64.const 0x000002000000000f)) ;; "policy exploded"

  ;; Every node sync is accepted; the records are not kept.
  (func (export "wasmsched_nodes") (param $n i32) (result i32) (i32.const 0))

  ;; The placement record is at 0x400: the pod is the record referenced at
  ;; +16 (offsets are relative to the placement record), and the nodes are
  ;; the ids (their count at +28) followed by the inline nodes (count at +36).
  (func $pod (result i32) (i32.add (i32.const 0x400) (i32.load (i32.const 0x410))))
  (func $count (result i32) (i32.add (i32.load (i32.const 0x41c)) (i32.load (i32.const 0x424))))

  ;; Whether this is the host's smoke call: its pod's namespace (the string
  ;; referenced at +80 of the pod record) is "wasmsched-smoke", which no
  ;; test pod uses.
  (func $smoke (result i32)
    (local $ns i32) (local $i i32)
    (if (i32.ne (i32.load (i32.add (call $pod) (i32.const 84))) (i32.const 15))
      (then (return (i32.const 0))))
    (local.set $ns (i32.add (call $pod) (i32.load (i32.add (call $pod) (i32.const 80)))))
    (block $differ
      (loop $next
        (if (i32.ge_u (local.get $i) (i32.const 15)) (then (return (i32.const 1))))
        (br_if $differ (i32.ne (i32.load8_u (i32.add (local.get $ns) (local.get $i)))
                               (i32.load8_u (i32.add (i32.const 0x300) (local.get $i)))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $next)))
    (i32.const 0))

  ;; A verdicts record at 0x10000 giving each of the $n nodes the verdict $v
  ;; (a code in the low 8 bits, the index of its reason above them), with no
  ;; reasons.
  (func $verdicts (param $n i32) (param $v i32) (result i64)
    (local $size i32) (local $i i32)
    (local.set $size (i32.add (i32.const 32) (i32.shl (local.get $n) (i32.const 2))))
    (i32.store (i32.const 0x10000) (local.get $size))
    (i32.store16 (i32.const 0x10004) (i32.const 12)) ;; tag: verdicts
    (i32.store16 (i32.const 0x10006) (i32.const 32)) ;; fixed part
    (i64.store (i32.const 0x10008) (i64.const 0))
    (i32.store (i32.const 0x10010) (i32.const 32))   ;; verdicts at 32,
    (i32.store (i32.const 0x10014) (local.get $n))   ;; $n of them
    (i64.store (i32.const 0x10018) (i64.const 0))    ;; reasons: none
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $i) (local.get $n)))
        (i32.store (i32.add (i32.const 0x10020) (i32.shl (local.get $i) (i32.const 2))) (local.get $v))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $next)))
    (i64.or (i64.const 0x0001000000000000) (i64.extend_i32_u (local.get $size))))

  ;; Grow memory a page at a time until memory.grow fails (the sandbox limit).
  (func $grow
    (loop $more
      (br_if $more (i32.ne (memory.grow (i32.const 1)) (i32.const -1)))))

  (func (export "wasmsched_filter") (param $n i32) (result i64)
    (if (call $smoke) (then (return (call $verdicts (call $count) (i32.const 0)))))
    (call $grow)
    (unreachable))
)
