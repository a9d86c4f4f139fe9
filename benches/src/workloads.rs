//! The standard set of workloads, as data: for each, what the module host calls (setup and the
//! measured call), what SQLite does for the same work where it can, and the reference figures
//! the results are compared with.
//!
//! `benches/workloads.rs` measures every entry on every backend; `benches/results.rs` turns the
//! measurements into the table of `RESULTS.md`. Both walk [`standard`], so the names in the
//! table are the names of the benchmarks.

use crate::data::{args, bucket_name, Shape, Table, Variant, BATCH, BUCKETS, PRELOAD};
use crate::sqlite::{SqliteWork, Value};

/// One workload.
#[derive(Clone, Debug)]
pub struct Workload {
    /// The criterion group: stable, one per workload.
    pub name: String,
    /// What it is, in words, for the results table.
    pub title: String,
    /// The work through a module host.
    pub module: ModuleWork,
    /// The same work on SQLite, where it applies.
    pub sqlite: Option<SqliteWork>,
    /// Figures to compare with.
    pub reference: Reference,
}

/// The work of a workload through a module host.
#[derive(Clone, Debug)]
pub struct ModuleWork {
    /// Calls that put a fresh module in the state the measured call starts from.
    pub setup: Vec<Call>,
    /// The measured call.
    pub call: Call,
    /// Whether the measured call changes the state, so that each measured call needs a fresh
    /// module.
    pub mutates: bool,
}

/// A reducer call.
#[derive(Clone, Debug)]
pub struct Call {
    /// The reducer.
    pub reducer: String,
    /// Its encoded arguments.
    pub args: Vec<u8>,
}

impl Call {
    fn new(reducer: impl Into<String>, args: Vec<u8>) -> Self {
        Self {
            reducer: reducer.into(),
            args,
        }
    }
}

/// Reference figures for one workload, medians in microseconds, measured elsewhere.
#[derive(Clone, Copy, Debug, Default)]
pub struct Reference {
    /// SpacetimeDB's C# module compiled with NativeAOT (the figures of issue 5, their machine).
    pub csharp_us: Option<f64>,
    /// SpacetimeDB v1.2.0's Rust module in its own host (DESIGN.md, this machine type).
    pub spacetimedb_us: Option<f64>,
    /// How the reference's parameters differ from ours, if they do.
    pub note: &'static str,
}

impl Reference {
    fn new(csharp_us: Option<f64>, spacetimedb_us: Option<f64>) -> Self {
        Self {
            csharp_us,
            spacetimedb_us,
            note: "",
        }
    }
}

/// Every workload, in the order of the results table.
pub fn standard() -> Vec<Workload> {
    let mut all = Vec::new();
    for shape in Shape::ALL {
        for variant in Variant::ALL {
            all.push(insert(Table::new(shape, variant)));
        }
        all.push(update(shape));
        all.push(iterate(shape));
        all.push(filter(shape));
    }
    all.push(large_argument());
    for lines in [1, 100, 1000] {
        all.push(print_many(lines));
    }
    all.push(circles());
    for load in [10, 100] {
        all.push(ia_loop(load));
    }
    all
}

/// `(u32,u64,String)` or `(u32,u64,u64)`, for titles.
fn shape_title(shape: Shape) -> &'static str {
    match shape {
        Shape::Str => "`(u32,u64,String)`",
        Shape::U64 => "`(u32,u64,u64)`",
    }
}

/// Insert [`BATCH`] rows into `table` holding [`PRELOAD`].
fn insert(table: Table) -> Workload {
    let preload = table.shape.rows(0..PRELOAD);
    let batch = table.shape.rows(PRELOAD..PRELOAD + BATCH);
    let reducer = format!("insert_bulk_{}", table.name());
    let reference = match (table.shape, table.variant) {
        (Shape::Str, Variant::Unique) => Reference::new(Some(263.5), Some(399.0)),
        (Shape::Str, Variant::Btree) => Reference::new(Some(362.4), Some(784.0)),
        (Shape::U64, Variant::Unique) => Reference::new(Some(166.0), Some(312.0)),
        (Shape::U64, Variant::Btree) => Reference::new(Some(247.6), Some(503.0)),
        (_, Variant::NoIndex) => Reference::default(),
    };
    let index = match table.variant {
        Variant::Unique => "unique pk",
        Variant::Btree => "btree on each column",
        Variant::NoIndex => "no index",
    };
    Workload {
        name: format!("insert_{BATCH}_into_{PRELOAD}_{}", table.name()),
        title: format!(
            "insert {BATCH} {} into {PRELOAD}, {index}",
            shape_title(table.shape)
        ),
        module: ModuleWork {
            setup: vec![Call::new(&reducer, preload.encoded_args())],
            call: Call::new(&reducer, batch.encoded_args()),
            mutates: true,
        },
        sqlite: Some(SqliteWork::Insert {
            table,
            preload,
            batch,
        }),
        reference,
    }
}

/// Update [`BATCH`] rows of the unique table holding [`PRELOAD`], through the primary key.
fn update(shape: Shape) -> Workload {
    let table = Table::new(shape, Variant::Unique);
    let preload = shape.rows(0..PRELOAD);
    let reference = match shape {
        Shape::Str => Reference::new(None, Some(462.0)),
        Shape::U64 => Reference::new(None, Some(421.0)),
    };
    Workload {
        name: format!("update_{BATCH}_of_{PRELOAD}_{}", table.name()),
        title: format!(
            "update {BATCH} {} of {PRELOAD} through the pk",
            shape_title(shape)
        ),
        module: ModuleWork {
            setup: vec![Call::new(
                format!("insert_bulk_{}", table.name()),
                preload.encoded_args(),
            )],
            call: Call::new(format!("update_bulk_{}", table.name()), args(&(BATCH,))),
            mutates: true,
        },
        sqlite: Some(SqliteWork::Update {
            table,
            preload,
            count: BATCH,
        }),
        reference,
    }
}

/// Visit every row of the unique table holding [`BATCH`].
fn iterate(shape: Shape) -> Workload {
    let table = Table::new(shape, Variant::Unique);
    let preload = shape.rows(0..BATCH);
    let reference = match shape {
        Shape::Str => Reference::new(Some(44.41), Some(113.0)),
        Shape::U64 => Reference::new(Some(15.36), Some(77.7)),
    };
    Workload {
        name: format!("iterate_{BATCH}_{}", table.name()),
        title: format!("iterate {BATCH} {}", shape_title(shape)),
        module: ModuleWork {
            setup: vec![Call::new(
                format!("insert_bulk_{}", table.name()),
                preload.encoded_args(),
            )],
            call: Call::new(format!("iterate_{}", table.name()), args(&())),
            mutates: false,
        },
        sqlite: Some(SqliteWork::Iterate { table, preload }),
        reference,
    }
}

/// Visit the rows of one bucket of the btree table holding [`PRELOAD`]: by `name` (a string
/// index) for the string shape, by `y` (a u64 index) for the other.
fn filter(shape: Shape) -> Workload {
    let table = Table::new(shape, Variant::Btree);
    let preload = shape.rows(0..PRELOAD);
    let bucket = 3;
    let (kind, column, value, argument, reference) = match shape {
        Shape::Str => (
            "string",
            "name",
            Value::Str(bucket_name(bucket)),
            args(&(bucket_name(bucket),)),
            Reference::new(Some(47.39), Some(114.0)),
        ),
        Shape::U64 => (
            "u64",
            "y",
            Value::U64(bucket),
            args(&(bucket,)),
            Reference::new(Some(21.67), Some(93.3)),
        ),
    };
    let matches = u64::from(PRELOAD) / BUCKETS;
    Workload {
        name: format!("filter_{kind}_btree_{matches}_of_{PRELOAD}"),
        title: format!(
            "filter a {kind} btree ({matches} of {PRELOAD} {})",
            shape_title(shape)
        ),
        module: ModuleWork {
            setup: vec![Call::new(
                format!("insert_bulk_{}", table.name()),
                preload.encoded_args(),
            )],
            call: Call::new(format!("filter_{}_by_{column}", table.name()), argument),
            mutates: false,
        },
        sqlite: Some(SqliteWork::Filter {
            table,
            preload,
            column,
            value,
        }),
        reference,
    }
}

/// A reducer with one 64 KiB string argument.
fn large_argument() -> Workload {
    module_only(
        "large_argument_64kib",
        "one 64 KiB string argument",
        vec![],
        Call::new("fn_with_1_arg", args(&("x".repeat(64 << 10),))),
        false,
        Reference::new(Some(45.97), Some(131.0)),
    )
}

/// A reducer that logs `lines` lines.
fn print_many(lines: u32) -> Workload {
    let (csharp, spacetimedb) = match lines {
        1 => (7.74, 58.0),
        100 => (67.65, 284.0),
        _ => (584.1, 1970.0),
    };
    module_only(
        &format!("print_many_{lines}"),
        &format!("log {lines} line{}", if lines == 1 { "" } else { "s" }),
        vec![],
        Call::new("print_many", args(&(lines,))),
        false,
        Reference::new(Some(csharp), Some(spacetimedb)),
    )
}

/// The circles tick over 100 entities, 100 pieces of food and 10 circles.
fn circles() -> Workload {
    let load = 100u32;
    module_only(
        &format!("circles_{load}"),
        &format!("circles, {load} entities"),
        vec![Call::new("init_game_circles", args(&(load,)))],
        Call::new("run_game_circles", args(&(load,))),
        false,
        Reference {
            csharp_us: Some(34_100.0),
            spacetimedb_us: Some(22_100.0),
            note: "C#: one figure, load not given; SpacetimeDB: its load 100",
        },
    )
}

/// The ia_loop tick over 500 agents, `load` of them looking for targets.
fn ia_loop(load: u32) -> Workload {
    let agents = 500u32;
    let (csharp, spacetimedb) = match load {
        10 => (10_660.0, 5_080.0),
        _ => (27_500.0, 6_270.0),
    };
    module_only(
        &format!("ia_loop_{agents}_agents_load_{load}"),
        &format!("ia_loop, {agents} agents, load {load}"),
        vec![Call::new("init_game_ia_loop", args(&(agents,)))],
        Call::new("run_game_ia_loop", args(&(load,))),
        true,
        Reference {
            csharp_us: Some(csharp),
            spacetimedb_us: Some(spacetimedb),
            note: "their `load` parameter seeds and ticks differently from ours",
        },
    )
}

fn module_only(
    name: &str,
    title: &str,
    setup: Vec<Call>,
    call: Call,
    mutates: bool,
    reference: Reference,
) -> Workload {
    Workload {
        name: name.into(),
        title: title.into(),
        module: ModuleWork {
            setup,
            call,
            mutates,
        },
        sqlite: None,
        reference,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::module::{call_encoded_ok, native};

    /// Every workload does its work on SQLite: the rows it claims to touch.
    #[test]
    fn sqlite_work_touches_the_rows() {
        for workload in standard() {
            let Some(work) = &workload.sqlite else {
                continue;
            };
            let mut db = work.prepare();
            let expected = match work {
                SqliteWork::Empty => 0,
                SqliteWork::Insert { .. } | SqliteWork::Update { .. } => BATCH as usize,
                SqliteWork::Iterate { .. } => BATCH as usize,
                SqliteWork::Filter { .. } => (u64::from(PRELOAD) / BUCKETS) as usize,
            };
            assert_eq!(work.run(&mut db), expected, "{}", workload.name);
        }
    }

    /// Every workload's calls succeed on the native host, twice in a row when it does not
    /// mutate (the benchmarks repeat it on the same state).
    #[test]
    fn module_work_succeeds() {
        for workload in standard() {
            let mut host = native();
            let work = &workload.module;
            for call in &work.setup {
                call_encoded_ok(&mut host, &call.reducer, &call.args);
            }
            let repeats = if work.mutates { 1 } else { 2 };
            for _ in 0..repeats {
                call_encoded_ok(&mut host, &work.call.reducer, &work.call.args);
            }
        }
    }
}
