//! Checks the committed vectors with the Rust client: each step's frame through a
//! [`Replay`] of the quickstart's description, compared with what the step expects (the
//! message decoded, in JSON; the row callbacks, in order; the rows of each table).

use crate::rows::{sort, Message, User};
use parking_lot::Mutex;
use serde_json::{json, Value};
use std::path::Path;
use std::sync::Arc;
use wasmod_abi::encoding::to_vec;
use wasmod_abi::Encode;
use wasmod_client::json::JsonModule;
use wasmod_client::Replay;
use wasmod_protocol::description::ModuleDescription;

/// The row callbacks fired, as the vectors write them.
type Events = Arc<Mutex<Vec<Value>>>;

/// What differs between the vectors in `dir` and what the client makes of their frames: one
/// line a difference, none if all agree.
pub fn failures(dir: &Path) -> Vec<String> {
    let read = |name: &str| {
        std::fs::read(dir.join(name)).unwrap_or_else(|error| panic!("{name}: {error}"))
    };
    let manifest: Value = serde_json::from_slice(&read("vectors.json")).expect("vectors.json");
    let description: ModuleDescription =
        serde_json::from_slice(&read("module.json")).expect("module.json");
    let module = Arc::new(JsonModule::new(&description).expect("the description reads back"));
    let mut replay = Replay::new(&module).expect("a replay of the quickstart");
    let events = Events::default();
    listen::<Message>(&replay, &module, "message", &events);
    listen::<User>(&replay, &module, "user", &events);

    let steps = manifest["steps"].as_array().expect("steps");
    assert!(!steps.is_empty(), "no steps in vectors.json");
    let mut failures = Vec::new();
    for step in steps {
        let name = step["name"].as_str().unwrap_or("?");
        let mut fail = |what: &str, expected: &Value, actual: &Value| {
            failures.push(format!("{name}: {what}: expected {expected}, got {actual}"));
        };
        let frame = read(step["frame"].as_str().expect("a frame file"));
        let decoded = match replay.apply(&frame) {
            Ok(message) => match module.message_json(&message) {
                Ok(text) => serde_json::from_str(&text).expect("JSON"),
                Err(error) => json!({ "not JSON": error.to_string() }),
            },
            Err(_) => Value::Null,
        };
        if decoded != step["decoded"] {
            fail("decoded", &step["decoded"], &decoded);
        }
        // A compressed frame's message uncompressed: what a reader without that compression
        // applies instead (the browser build reads no brotli).
        if let Some(plain) = step["plain"].as_str() {
            let message = wasmod_protocol::ws::BinaryServerMessage::from_bytes(&read(plain));
            let text = message.map(|message| module.message_json(&message));
            let plain: Value = match text {
                Ok(Ok(text)) => serde_json::from_str(&text).expect("JSON"),
                other => json!({ "not decoded": format!("{other:?}") }),
            };
            if plain != step["decoded"] {
                fail("the plain frame decoded", &step["decoded"], &plain);
            }
        }
        let fired = Value::Array(std::mem::take(&mut *events.lock()));
        if fired != step["events"] {
            fail("callbacks", &step["events"], &fired);
        }
        for (table, expected) in step["rows"].as_object().expect("rows").iter() {
            let mut rows: Vec<Value> = replay
                .rows(table)
                .iter()
                .map(|row| row_json(&module, table, row))
                .collect();
            sort(&mut rows);
            let rows = Value::Array(rows);
            if rows != *expected {
                fail(&format!("rows of {table}"), expected, &rows);
            }
        }
    }
    failures
}

/// Records `table`'s callbacks (rows decoded as `T`, then written in JSON) in `events`.
fn listen<T>(replay: &Replay, module: &Arc<JsonModule>, table: &'static str, events: &Events)
where
    T: wasmod_abi::Decode + Encode + 'static,
{
    let handle = replay.table::<T>(table);
    let (module_, events_) = (module.clone(), events.clone());
    handle.on_insert(move |row| {
        let row = row_json(&module_, table, &to_vec(row));
        events_
            .lock()
            .push(json!({"table": table, "event": "insert", "row": row}));
    });
    let (module_, events_) = (module.clone(), events.clone());
    handle.on_delete(move |row| {
        let row = row_json(&module_, table, &to_vec(row));
        events_
            .lock()
            .push(json!({"table": table, "event": "delete", "row": row}));
    });
    let (module, events) = (module.clone(), events.clone());
    handle.on_update(move |old, new| {
        let (old, new) = (
            row_json(&module, table, &to_vec(old)),
            row_json(&module, table, &to_vec(new)),
        );
        events
            .lock()
            .push(json!({"table": table, "event": "update", "old": old, "new": new}));
    });
}

fn row_json(module: &JsonModule, table: &str, row: &[u8]) -> Value {
    match module.row_json(table, row) {
        Ok(raw) => serde_json::from_str(raw.get()).expect("JSON"),
        Err(error) => json!({ "not a row": error.to_string() }),
    }
}
