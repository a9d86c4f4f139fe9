//! A module's description as text.
//!
//! The text is rendered from the same JSON that `--json` prints
//! ([`wasmod_server::describe::describe`]), so the two cannot disagree.

use serde_json::Value;
use std::fmt::Write as _;
use wasmod_abi::EntryKind;

/// The whole description: tables, entry points, types.
pub fn description(json: &Value) -> String {
    let mut out = String::new();
    tables(json, &mut out);
    entry_points(json, &mut out);
    types(json, &mut out);
    out
}

/// The entry points by category, with their ids.
pub fn entry_points(json: &Value, out: &mut String) {
    let list = |kind: EntryKind| &json[kind.list()];
    section(out, "reducers", list(EntryKind::Reducer), |out, reducer| {
        let _ = write!(out, "{}", signature(reducer));
        if let Some(lifecycle) = reducer["lifecycle"].as_str() {
            let _ = write!(out, "  [lifecycle: {lifecycle}]");
        }
    });
    for (title, kind) in [
        ("procedures", EntryKind::Procedure),
        ("views (per caller)", EntryKind::View),
        ("anonymous views", EntryKind::AnonymousView),
    ] {
        section(out, title, list(kind), |out, entry| {
            let _ = write!(out, "{} -> {}", signature(entry), text(&entry["returns"]));
        });
    }
    section(
        out,
        "http handlers",
        list(EntryKind::HttpHandler),
        |out, handler| {
            let _ = write!(
                out,
                "{}  {} {}",
                text(&handler["name"]),
                text(&handler["method"]),
                text(&handler["path"])
            );
        },
    );
}

fn tables(json: &Value, out: &mut String) {
    section(out, "tables", &json["tables"], |out, table| {
        let visibility = if table["public"] == true {
            "public"
        } else {
            "private"
        };
        let _ = write!(out, "{}  {visibility}", text(&table["name"]));
        let primary_key = table["primary_key"].as_str();
        let auto_inc = items(&table["auto_inc"]);
        for column in items(&table["columns"]) {
            let name = text(&column["name"]);
            let _ = write!(out, "\n       {name}: {}", text(&column["type"]));
            if primary_key == Some(name) {
                out.push_str("  primary key");
            }
            if auto_inc.iter().any(|auto| auto.as_str() == Some(name)) {
                out.push_str("  auto_inc");
            }
        }
        for index in items(&table["indexes"]) {
            let columns: Vec<&str> = items(&index["columns"]).iter().map(text).collect();
            let unique = if index["unique"] == true {
                "  unique"
            } else {
                ""
            };
            let _ = write!(
                out,
                "\n     index #{} {} ({}){unique}",
                index["id"],
                text(&index["name"]),
                columns.join(", ")
            );
        }
    });
}

fn types(json: &Value, out: &mut String) {
    let list = items(&json["types"]);
    if list.is_empty() {
        return;
    }
    out.push_str("types\n");
    for def in list {
        let name = text(&def["name"]);
        match def["kind"].as_str() {
            Some("struct") => {
                let fields: Vec<String> = items(&def["fields"])
                    .iter()
                    .map(|field| format!("{}: {}", text(&field["name"]), text(&field["type"])))
                    .collect();
                let _ = writeln!(out, "  struct {name} {{ {} }}", fields.join(", "));
            }
            Some("enum") => {
                let variants: Vec<String> = items(&def["variants"])
                    .iter()
                    .map(|variant| match variant["type"].as_str() {
                        Some(payload) => format!("{}({payload})", text(&variant["name"])),
                        None => text(&variant["name"]).to_owned(),
                    })
                    .collect();
                let _ = writeln!(out, "  enum {name} {{ {} }}", variants.join(", "));
            }
            _ => {
                let _ = writeln!(out, "  type {name} = {}", text(&def["type"]));
            }
        }
    }
}

/// `name(param: Type, ..)`.
fn signature(entry: &Value) -> String {
    let params: Vec<String> = items(&entry["params"])
        .iter()
        .map(|param| format!("{}: {}", text(&param["name"]), text(&param["type"])))
        .collect();
    format!("{}({})", text(&entry["name"]), params.join(", "))
}

/// A titled list of items, each `#id` then what `line` writes; `(none)` when empty.
fn section(out: &mut String, title: &str, list: &Value, line: impl Fn(&mut String, &Value)) {
    let _ = writeln!(out, "{title}");
    let list = items(list);
    if list.is_empty() {
        out.push_str("  (none)\n");
    }
    for item in list {
        let id = item["id"].to_string();
        let _ = write!(out, "  #{id:<3} ");
        line(out, item);
        out.push('\n');
    }
}

fn items(value: &Value) -> &[Value] {
    value.as_array().map_or(&[], Vec::as_slice)
}

fn text(value: &Value) -> &str {
    value.as_str().unwrap_or("?")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn descriptions_read_as_text() {
        let json = json!({
            "tables": [{
                "id": 0, "name": "task", "public": true, "row_type": "Task",
                "columns": [{"name": "id", "type": "u64"}, {"name": "title", "type": "String"}],
                "primary_key": "id", "auto_inc": ["id"],
                "indexes": [{"id": 0, "name": "task_id", "columns": ["id"], "unique": true}],
            }],
            "reducers": [
                {"id": 0, "name": "init", "params": [], "lifecycle": "init"},
                {"id": 1, "name": "add", "params": [{"name": "title", "type": "String"}], "lifecycle": null},
            ],
            "procedures": [],
            "views": [{"id": 0, "name": "mine", "params": [], "returns": "Vec<Task>"}],
            "anonymous_views": [],
            "http_handlers": [{"id": 0, "name": "stats", "method": "GET", "path": "/stats"}],
            "types": [
                {"name": "Task", "kind": "struct", "fields": [{"name": "id", "type": "u64"}]},
                {"name": "E", "kind": "enum", "variants": [{"name": "A", "type": "u8"}, {"name": "B", "type": null}]},
            ],
        });
        let expected = "\
tables
  #0   task  public
       id: u64  primary key  auto_inc
       title: String
     index #0 task_id (id)  unique
reducers
  #0   init()  [lifecycle: init]
  #1   add(title: String)
procedures
  (none)
views (per caller)
  #0   mine() -> Vec<Task>
anonymous views
  (none)
http handlers
  #0   stats  GET /stats
types
  struct Task { id: u64 }
  enum E { A(u8), B }
";
        assert_eq!(description(&json), expected);
    }
}
