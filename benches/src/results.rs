//! The tables of `RESULTS.md`, from criterion's saved estimates of the last run.
//!
//! `cargo bench -p wasmod-benches --bench results` after `cargo bench -p wasmod-benches` prints
//! them. Each time is criterion's median of the benchmark (`<group>/<function>/new/
//! estimates.json` under criterion's directory); the ratios are computed from those medians, so
//! they compare measurements of one run.

use crate::data::Shape;
use crate::dispatch::{self, Dispatch};
use crate::encoding::{self, criterion_home, load_allocations, Op};
use crate::module::Host;
use crate::workloads::{standard, Reference};
use std::fmt::Write;

/// The median of benchmark `group/function` of the last run, in nanoseconds.
pub fn median_ns(group: &str, function: &str) -> Option<f64> {
    let path = criterion_home()
        .join(group)
        .join(function)
        .join("new")
        .join("estimates.json");
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).ok()?).ok()?;
    json["median"]["point_estimate"].as_f64()
}

/// A duration in nanoseconds, in a readable unit.
fn time(ns: f64) -> String {
    if ns < 1e3 {
        format!("{ns:.1} ns")
    } else if ns < 1e6 {
        format!("{:.2} µs", ns / 1e3)
    } else {
        format!("{:.2} ms", ns / 1e6)
    }
}

fn or_dash(value: Option<String>) -> String {
    value.unwrap_or_else(|| "—".into())
}

/// `a / b`, as `2.50×`.
fn ratio(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    Some(a? / b?)
}

fn times(value: Option<f64>) -> String {
    or_dash(value.map(|value| format!("{value:.2}×")))
}

/// Every table, in markdown.
pub fn render() -> String {
    let mut out = String::new();
    workloads(&mut out);
    dispatch(&mut out);
    encoding(&mut out);
    out
}

/// One row of the workloads table.
struct Row<'a> {
    title: &'a str,
    group: &'a str,
    reference: Reference,
}

fn workloads(out: &mut String) {
    let standard = standard();
    let empty = Row {
        title: "empty reducer",
        group: "empty_reducer",
        reference: Reference {
            csharp_us: None,
            spacetimedb_us: Some(11.4),
            note: "",
        },
    };
    let rows = std::iter::once(empty).chain(standard.iter().map(|workload| Row {
        title: &workload.title,
        group: &workload.name,
        reference: workload.reference,
    }));
    out.push_str(
        "| workload (criterion group) | host_wasm | host_native | SQLite | wasm/native | wasm/SQLite \
         | C# NativeAOT | C#/wasm | SpacetimeDB Rust | SpacetimeDB/wasm | goals missed |\n\
         |---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n",
    );
    let mut notes = Vec::new();
    for row in rows {
        let [wasm, native] = Host::ALL.map(|host| median_ns(row.group, host.name()));
        let sqlite = median_ns(row.group, "sqlite");
        let us = |value: Option<f64>| value.map(|us| us * 1e3);
        let (csharp, spacetimedb) = (
            us(row.reference.csharp_us),
            us(row.reference.spacetimedb_us),
        );
        let wasm_native = ratio(wasm, native);
        let wasm_sqlite = ratio(wasm, sqlite);
        let csharp_wasm = ratio(csharp, wasm);
        let mut missed = Vec::new();
        if csharp_wasm.is_some_and(|r| r < 5.0) {
            missed.push("5× under C#");
        }
        if wasm_native.is_some_and(|r| r > 2.0) {
            missed.push("2× of native");
        }
        if wasm_sqlite.is_some_and(|r| r > 1.0) {
            missed.push("SQLite");
        }
        let mut title = format!("{} (`{}`)", row.title, row.group);
        if !row.reference.note.is_empty() {
            notes.push(row.reference.note);
            let _ = write!(title, " [{}]", notes.len());
        }
        let _ = writeln!(
            out,
            "| {title} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            or_dash(wasm.map(time)),
            or_dash(native.map(time)),
            or_dash(sqlite.map(time)),
            times(wasm_native),
            times(wasm_sqlite),
            or_dash(csharp.map(time)),
            times(csharp_wasm),
            or_dash(spacetimedb.map(time)),
            times(ratio(spacetimedb, wasm)),
            if missed.is_empty() {
                "—".into()
            } else {
                missed.join(", ")
            },
        );
    }
    let floor = median_ns("empty_reducer", "bare_wasmtime_export");
    let _ = writeln!(
        out,
        "\nFloor: a bare wasmtime call of an empty export (`empty_reducer/bare_wasmtime_export`): {}.",
        or_dash(floor.map(time))
    );
    for (n, note) in notes.iter().enumerate() {
        let _ = writeln!(out, "\n[{}] {note}.", n + 1);
    }
}

fn dispatch(out: &mut String) {
    let per_call = |way: Dispatch| {
        median_ns(dispatch::GROUP, way.name()).map(|ns| ns / f64::from(dispatch::REDUCERS))
    };
    let matched = per_call(Dispatch::Match);
    let floor = per_call(Dispatch::Floor);
    let _ = writeln!(
        out,
        "\n| way in (`{}/…`) | ns per call | ratio to `match` | above the floor |\n|---|---:|---:|---:|",
        dispatch::GROUP
    );
    for way in Dispatch::ALL {
        let ns = per_call(way);
        let _ = writeln!(
            out,
            "| {} (`{}`) | {} | {} | {} |",
            way.title(),
            way.name(),
            or_dash(ns.map(|ns| format!("{ns:.1}"))),
            times(ratio(ns, matched)),
            or_dash(
                ns.zip(floor)
                    .map(|(ns, floor)| format!("{:.1} ns", ns - floor))
            ),
        );
    }
}

fn encoding(out: &mut String) {
    let allocations = load_allocations().unwrap_or_default();
    out.push_str(
        "\n| operation (criterion group) | rows | median | per row | allocs | reallocs | bytes allocated |\n\
         |---|---:|---:|---:|---:|---:|---:|\n",
    );
    for op in Op::ALL {
        for shape in Shape::ALL {
            let group = encoding::group(op, shape);
            for rows in encoding::SIZES {
                let function = encoding::function(rows);
                let median = median_ns(&group, &function);
                let counted = allocations
                    .iter()
                    .find(|counted| counted.group == group && counted.function == function);
                let count = |f: fn(&encoding::Allocations) -> u64| {
                    or_dash(counted.map(|counted| f(counted).to_string()))
                };
                let _ = writeln!(
                    out,
                    "| `{group}` | {rows} | {} | {} | {} | {} | {} |",
                    or_dash(median.map(time)),
                    or_dash(median.map(|ns| time(ns / f64::from(rows)))),
                    count(|c| c.allocs),
                    count(|c| c.reallocs),
                    count(|c| c.bytes),
                );
            }
        }
    }
}
