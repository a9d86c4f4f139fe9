//! The quickstart's row types, as the vectors' session writes and reads them, and the order
//! the vectors keep rows in.

use serde_json::Value;

#[path = "../shared/rows.rs"]
mod quickstart;
pub use quickstart::{Message, User};

/// Sorts rows (a cache holds them in no order) by their JSON text with keys sorted, as the
/// JavaScript check sorts them too.
pub fn sort(rows: &mut [Value]) {
    rows.sort_by_cached_key(canonical);
}

/// `value`'s JSON text with every object's keys in order.
fn canonical(value: &Value) -> String {
    match value {
        Value::Object(map) => {
            let mut entries: Vec<(&String, &Value)> = map.iter().collect();
            entries.sort_by_key(|(key, _)| *key);
            let fields: Vec<String> = entries
                .into_iter()
                .map(|(key, value)| format!("{}:{}", Value::from(key.as_str()), canonical(value)))
                .collect();
            format!("{{{}}}", fields.join(","))
        }
        Value::Array(items) => {
            let items: Vec<String> = items.iter().map(canonical).collect();
            format!("[{}]", items.join(","))
        }
        other => other.to_string(),
    }
}
