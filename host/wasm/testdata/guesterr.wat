;; Returns negative results (-ErrCode) with messages from last_error.
(module
  (memory (export "memory") 1)
  (data (i32.const 16) "quota exceeded for team-a")
  (data (i32.const 2048) "\ff\fe bad utf-8")
  ;; What wasmsched_last_error returns: set by the failing function.
  (global $err (mut i64) (i64.const 0))

  (func (export "wasmsched_abi_version") (result i32) (i32.const 0x00010000))
  (func (export "wasmsched_buffer") (param $n i32) (result i32) (i32.const 1024))
  (func (export "wasmsched_last_error") (result i64) (global.get $err))

  ;; -ErrPolicy, message "quota exceeded for team-a" (16, 25).
  (func (export "wasmsched_pre_enqueue") (param $n i32) (result i64)
    (global.set $err (i64.const 0x0000001000000019))
    (i64.const -2))
  ;; -ErrDecode, message of 5000 bytes (longer than abi.MaxReasonLen).
  (func (export "wasmsched_queue_sort_key") (param $n i32) (result i64)
    (global.set $err (i64.const 0x0000001000001388))
    (i64.const -1))
  ;; -ErrUnsupported as an i32 boolean result, message not valid UTF-8 (2048, 12).
  (func (export "wasmsched_backoff_may_pop") (param $n i32) (result i32)
    (global.set $err (i64.const 0x000008000000000c))
    (i32.const -3))
  ;; -ErrPolicy, and last_error points outside memory.
  (func (export "wasmsched_victim_order") (param $n i32) (result i64)
    (global.set $err (i64.const 0x7fff000000000010))
    (i64.const -2))
)
