;; Imports every WASI function of the sandbox allow-list and exercises each
;; through a contract export, as a TinyGo wasip1 guest would.
(module
  (import "wasi_snapshot_preview1" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_close" (func $fd_close (param i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_seek" (func $fd_seek (param i32 i64 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "random_get" (func $random_get (param i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "clock_time_get" (func $clock_time_get (param i32 i64 i32) (result i32)))
  (import "wasi_snapshot_preview1" "args_sizes_get" (func $args_sizes_get (param i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "args_get" (func $args_get (param i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "environ_sizes_get" (func $environ_sizes_get (param i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "environ_get" (func $environ_get (param i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "proc_exit" (func $proc_exit (param i32)))

  (memory (export "memory") 1)
  (data (i32.const 100) "hello\n")
  (data (i32.const 110) "x\n")
  (data (i32.const 120) "partial")
  ;; iovecs (ptr, len): "hel" + "lo\n" at 200, "x\n" at 216, "partial" at 224,
  ;; one outside memory at 232.
  (data (i32.const 200) "\64\00\00\00\03\00\00\00\67\00\00\00\03\00\00\00")
  (data (i32.const 216) "\6e\00\00\00\02\00\00\00")
  (data (i32.const 224) "\78\00\00\00\07\00\00\00")
  (data (i32.const 232) "\00\ff\ff\ff\08\00\00\00")

  (func (export "wasmsched_abi_version") (result i32) (i32.const 0x00010000))
  (func (export "wasmsched_buffer") (param $n i32) (result i32) (i32.const 1024))
  (func (export "wasmsched_last_error") (result i64) (i64.const 0))

  ;; may_pop(n): writes the line "hello" to stdout n times, in two pieces each.
  (func (export "wasmsched_backoff_may_pop") (param $n i32) (result i32)
    (block $done
      (loop $next
        (br_if $done (i32.eqz (local.get $n)))
        (drop (call $fd_write (i32.const 1) (i32.const 200) (i32.const 2) (i32.const 300)))
        (local.set $n (i32.sub (local.get $n) (i32.const 1)))
        (br $next)))
    (i32.const 1))

  ;; less(fd, _): writes "x\n" to fd and returns the errno.
  (func (export "wasmsched_queue_sort_less") (param $fd i32) (param $b i32) (result i32)
    (call $fd_write (local.get $fd) (i32.const 216) (i32.const 1) (i32.const 300)))

  ;; backoff less(fd, _): fd_write with an iovec outside memory; returns the errno.
  (func (export "wasmsched_backoff_sort_less") (param $fd i32) (param $b i32) (result i32)
    (call $fd_write (local.get $fd) (i32.const 232) (i32.const 1) (i32.const 300)))

  ;; backoff key(n): writes "partial" to stderr without a newline; returns (0, 0).
  (func (export "wasmsched_backoff_sort_key") (param $n i32) (result i64)
    (drop (call $fd_write (i32.const 2) (i32.const 224) (i32.const 1) (i32.const 300)))
    (i64.const 0))

  ;; key(n): 32 random bytes at 8192.
  (func (export "wasmsched_queue_sort_key") (param $n i32) (result i64)
    (if (call $random_get (i32.const 8192) (i32.const 32)) (then (unreachable)))
    (i64.const 0x0000200000000020))

  ;; pre_enqueue(n): at 8192, after filling 32 bytes with 0xff: the time (8
  ;; bytes), argc, argv size, environ count, environ size, the sum of the six
  ;; errnos, and 4 bytes that args_get and environ_get must leave alone.
  (func (export "wasmsched_pre_enqueue") (param $n i32) (result i64)
    (i64.store (i32.const 8192) (i64.const -1))
    (i64.store (i32.const 8200) (i64.const -1))
    (i64.store (i32.const 8208) (i64.const -1))
    (i64.store (i32.const 8216) (i64.const -1))
    (i32.store (i32.const 8216)
      (i32.add
        (i32.add
          (i32.add (call $clock_time_get (i32.const 0) (i64.const 1) (i32.const 8192))
                   (call $clock_time_get (i32.const 1) (i64.const 1) (i32.const 8192)))
          (i32.add (call $args_sizes_get (i32.const 8200) (i32.const 8204))
                   (call $environ_sizes_get (i32.const 8208) (i32.const 8212))))
        (i32.add (call $args_get (i32.const 8220) (i32.const 8220))
                 (call $environ_get (i32.const 8220) (i32.const 8220)))))
    (i64.const 0x0000200000000020))

  ;; hint_events(): fd_seek(1), fd_seek(7), fd_close(1), fd_close(7) errnos,
  ;; one per byte from the most significant.
  (func (export "wasmsched_hint_events") (result i64)
    (i64.extend_i32_u
      (i32.or
        (i32.or
          (i32.shl (call $fd_seek (i32.const 1) (i64.const 0) (i32.const 0) (i32.const 300)) (i32.const 24))
          (i32.shl (call $fd_seek (i32.const 7) (i64.const 0) (i32.const 0) (i32.const 300)) (i32.const 16)))
        (i32.or
          (i32.shl (call $fd_close (i32.const 1)) (i32.const 8))
          (call $fd_close (i32.const 7))))))

  ;; victim_order(code): proc_exit(code).
  (func (export "wasmsched_victim_order") (param $code i32) (result i64)
    (call $proc_exit (local.get $code))
    (unreachable))
)
