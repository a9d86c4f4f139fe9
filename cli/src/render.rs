//! A module's description as text.
//!
//! The text is rendered from the same [`ModuleDescription`] that `--json` prints, so the two
//! cannot disagree.

use std::fmt::Write as _;
use wasmod_protocol::description::{TypeDescription, Typed};
use wasmod_protocol::ModuleDescription;

/// The whole description: tables, entry points, types.
pub fn description(module: &ModuleDescription) -> String {
    let mut out = String::new();
    tables(module, &mut out);
    entry_points(module, &mut out);
    types(module, &mut out);
    out
}

/// The entry points by category, with their ids.
pub fn entry_points(module: &ModuleDescription, out: &mut String) {
    let reducers = module.reducers.iter().map(|reducer| {
        let mut line = signature(&reducer.name, &reducer.params);
        if let Some(lifecycle) = reducer.lifecycle {
            let role = lifecycle.as_str();
            let _ = write!(line, "  [lifecycle: {role}]");
        }
        (reducer.id, line)
    });
    section(out, "reducers", reducers);
    for (title, list) in [
        ("procedures", &module.procedures),
        ("views (per caller)", &module.views),
        ("anonymous views", &module.anonymous_views),
    ] {
        let lines = list.iter().map(|entry| {
            let line = format!(
                "{} -> {}",
                signature(&entry.name, &entry.params),
                entry.returns
            );
            (entry.id, line)
        });
        section(out, title, lines);
    }
    let handlers = module.http_handlers.iter().map(|handler| {
        let line = format!("{}  {} {}", handler.name, handler.method, handler.path);
        (handler.id, line)
    });
    section(out, "http handlers", handlers);
}

fn tables(module: &ModuleDescription, out: &mut String) {
    let lines = module.tables.iter().map(|table| {
        let visibility = if table.public { "public" } else { "private" };
        let mut line = format!("{}  {visibility}", table.name);
        for column in &table.columns {
            let _ = write!(line, "\n       {}: {}", column.name, column.ty);
            if table.primary_key.as_ref() == Some(&column.name) {
                line.push_str("  primary key");
            }
            if table.auto_inc.contains(&column.name) {
                line.push_str("  auto_inc");
            }
        }
        for index in &table.indexes {
            let unique = if index.unique { "  unique" } else { "" };
            let _ = write!(
                line,
                "\n     index #{} {} ({}){unique}",
                index.id,
                index.name,
                index.columns.join(", ")
            );
        }
        (table.id, line)
    });
    section(out, "tables", lines);
}

fn types(module: &ModuleDescription, out: &mut String) {
    if module.types.is_empty() {
        return;
    }
    out.push_str("types\n");
    for def in &module.types {
        let _ = match def {
            TypeDescription::Struct { name, fields } => {
                let fields: Vec<String> = fields.iter().map(typed).collect();
                writeln!(out, "  struct {name} {{ {} }}", fields.join(", "))
            }
            TypeDescription::Enum { name, variants } => {
                let variants: Vec<String> = variants
                    .iter()
                    .map(|variant| match &variant.payload {
                        Some(payload) => format!("{}({payload})", variant.name),
                        None => variant.name.clone(),
                    })
                    .collect();
                writeln!(out, "  enum {name} {{ {} }}", variants.join(", "))
            }
            TypeDescription::Alias { name, ty } => writeln!(out, "  type {name} = {ty}"),
        };
    }
}

/// `name(param: Type, ..)`.
fn signature(name: &str, params: &[Typed]) -> String {
    let params: Vec<String> = params.iter().map(typed).collect();
    format!("{name}({})", params.join(", "))
}

/// `name: Type`.
fn typed(item: &Typed) -> String {
    format!("{}: {}", item.name, item.ty)
}

/// A titled list of items, each `#id` then its line; `(none)` when empty.
fn section(out: &mut String, title: &str, lines: impl Iterator<Item = (u32, String)>) {
    let _ = writeln!(out, "{title}");
    let mut empty = true;
    for (id, line) in lines {
        empty = false;
        let _ = writeln!(out, "  #{id:<3} {line}");
    }
    if empty {
        out.push_str("  (none)\n");
    }
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
        let module: ModuleDescription = serde_json::from_value(json).expect("a description");
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
        assert_eq!(description(&module), expected);
    }
}
