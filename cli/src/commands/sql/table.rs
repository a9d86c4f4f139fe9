//! A table's rows as a text table, for people: one column per column of the table, in its
//! declared order, and the count of rows.
//!
//! ```text
//! id | sender                                                           | sent             | text
//! ---+------------------------------------------------------------------+------------------+------
//! 1  | c0ffee…                                                          | 1764590000000000 | hello
//! (1 row)
//! ```
//!
//! A cell is its value in the JSON mapping (`docs/json.md`), written as JSON, except that a
//! string that needs no escaping is written bare. The columns come from the module's
//! description; a table it does not list (which a server would not answer for) falls back to
//! the rows' own keys.

use crate::failure::{Failure, Result};
use serde_json::value::RawValue;
use serde_json::{Map, Value};
use std::fmt::Write;
use wasmod_protocol::ws::TableRows;
use wasmod_protocol::ModuleDescription;

/// `rows` (of one table of the module `description` describes) as a text table.
pub fn render(
    description: &ModuleDescription,
    rows: &TableRows<Vec<Box<RawValue>>>,
) -> Result<String> {
    let objects = rows
        .rows
        .iter()
        .map(|row| {
            serde_json::from_str::<Map<String, Value>>(row.get()).map_err(|error| {
                Failure::module(format!(
                    "a row of `{}` is not a JSON object ({error}): {}",
                    rows.table,
                    row.get()
                ))
            })
        })
        .collect::<Result<Vec<_>>>()?;
    let columns: Vec<String> = match description
        .tables
        .iter()
        .find(|table| table.name == rows.table)
    {
        Some(table) => table
            .columns
            .iter()
            .map(|column| column.name.clone())
            .collect(),
        None => objects
            .first()
            .map(|object| object.keys().cloned().collect())
            .unwrap_or_default(),
    };
    let cells: Vec<Vec<String>> = objects
        .iter()
        .map(|object| {
            columns
                .iter()
                .map(|column| object.get(column).map(cell).unwrap_or_default())
                .collect()
        })
        .collect();
    Ok(layout(&columns, &cells))
}

/// A value as a cell: a string without characters to escape as it is, anything else as JSON.
fn cell(value: &Value) -> String {
    match value {
        Value::String(text) if !text.chars().any(|c| c.is_control()) => text.clone(),
        other => other.to_string(),
    }
}

/// The header, a rule, one line per row (each cell padded to its column's width), the count.
fn layout(columns: &[String], rows: &[Vec<String>]) -> String {
    let width = |index: usize, header: &str| {
        rows.iter()
            .map(|row| row[index].chars().count())
            .chain([header.chars().count()])
            .max()
            .unwrap_or(0)
    };
    let widths: Vec<usize> = columns
        .iter()
        .enumerate()
        .map(|(index, header)| width(index, header))
        .collect();
    let mut out = String::new();
    if !columns.is_empty() {
        write_cells(&mut out, columns, &widths);
        let rule: Vec<String> = widths.iter().map(|&width| "-".repeat(width)).collect();
        let _ = writeln!(out, "{}", rule.join("-+-"));
        for row in rows {
            write_cells(&mut out, row, &widths);
        }
    }
    let count = rows.len();
    let _ = writeln!(out, "({count} {})", if count == 1 { "row" } else { "rows" });
    out
}

/// One line of `cells`, each padded to its width, separated by ` | `.
fn write_cells(out: &mut String, cells: &[String], widths: &[usize]) {
    let padded: Vec<String> = cells
        .iter()
        .zip(widths)
        .map(|(text, &width)| format!("{text:<width$}"))
        .collect();
    let _ = writeln!(out, "{}", padded.join(" | ").trim_end());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_are_padded_under_their_headers_and_counted() {
        let columns = ["id".to_owned(), "text".to_owned()];
        let rows = vec![
            vec!["1".to_owned(), "hello".to_owned()],
            vec!["10".to_owned(), "a".to_owned()],
        ];
        assert_eq!(
            layout(&columns, &rows),
            "id | text\n---+------\n1  | hello\n10 | a\n(2 rows)\n"
        );
        assert_eq!(layout(&columns, &[]), "id | text\n---+-----\n(0 rows)\n");
    }

    #[test]
    fn strings_are_bare_unless_they_need_escaping() {
        assert_eq!(cell(&Value::from("hi")), "hi");
        assert_eq!(cell(&Value::from("a\nb")), "\"a\\nb\"");
        assert_eq!(cell(&Value::from(3)), "3");
        assert_eq!(cell(&serde_json::json!({"some": null})), r#"{"some":null}"#);
    }
}
