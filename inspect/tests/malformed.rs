//! Bad input is an error, never a panic: empty, garbage, every truncation and every single-byte
//! corruption of a small module.

use wasmod_inspect::{inspect, InspectError};

/// A small module with names, a table, a `br_table` and an indirect call.
const MODULE: &str = r#"
(module
  (type $t (func (param i32) (result i32)))
  (table 1 funcref)
  (elem (i32.const 0) func $a)
  (func $a (type $t) (local.get 0))
  (func $__call_reducer__ (export "__call_reducer__") (param i32) (result i32)
    block
      block
        local.get 0
        br_table 0 1
      end
      (return (call $a (local.get 0)))
    end
    (call_indirect (type $t) (local.get 0) (i32.const 0))))
"#;

fn module() -> Vec<u8> {
    wat::parse_str(MODULE).expect("valid text format")
}

#[test]
fn empty_and_garbage_input_are_errors() {
    for input in [&b""[..], b"\0asm", b"not wasm at all", &[0xff; 64]] {
        assert!(
            matches!(inspect(input), Err(InspectError::Malformed(_))),
            "{input:?}"
        );
    }
}

#[test]
fn every_truncation_is_an_error() {
    let wasm = module();
    inspect(&wasm).expect("the whole module is fine");
    for length in 0..wasm.len() {
        let result = inspect(&wasm[..length]);
        assert!(result.is_err(), "truncated to {length} bytes");
        let message = result
            .err()
            .map(|error| error.to_string())
            .unwrap_or_default();
        assert!(!message.is_empty());
    }
}

#[test]
fn corrupted_bytes_never_panic() {
    let wasm = module();
    for at in 8..wasm.len() {
        for value in [0x00, 0x01, 0x0b, 0x0e, 0x11, 0x7f, 0x80, 0xff] {
            let mut corrupted = wasm.clone();
            corrupted[at] = value;
            // Either a report or an error: what matters is that it returns.
            let _ = inspect(&corrupted).map(|report| report.to_json());
        }
    }
}
