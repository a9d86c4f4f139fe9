//! A query's rows of one commit (or its initial rows), built once and shared by every
//! subscriber of that query: the "serialize once" of the fanout.
//!
//! The binary rows are a [`RowList`] (one buffer, reference-counted: cloning it into each
//! client's message copies two pointers). The JSON rows are rendered from those bytes the first
//! time a JSON client needs them, once per query per commit, and shared the same way.

use serde::{Serialize, Serializer};
use serde_json::value::RawValue;
use std::sync::{Arc, OnceLock};
use wasmod_abi::{Encode, ModuleDef};
use wasmod_host::datastore::Row;
use wasmod_protocol::ws::{RowList, RowTypes};

/// One query's rows: what entered its result and what left it (initial rows have only
/// `inserts`).
#[derive(Debug)]
pub struct QueryRows {
    /// The table the rows are of.
    pub table: String,
    /// The rows that entered the result.
    pub inserts: RowList,
    /// The rows that left it.
    pub deletes: RowList,
    json: OnceLock<Result<JsonRows, String>>,
}

/// [`QueryRows`] rendered as JSON, once.
#[derive(Clone, Debug)]
pub struct JsonRows {
    /// The rows that entered the result, as a JSON array.
    pub inserts: SharedJson,
    /// The rows that left it, as a JSON array.
    pub deletes: SharedJson,
}

/// JSON text shared by every message that carries it.
#[derive(Clone, Debug)]
pub struct SharedJson(pub Arc<RawValue>);

impl Serialize for SharedJson {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(serializer)
    }
}

impl QueryRows {
    /// The rows `inserts` and `deletes` of table `table`; `None` if they pass the 4 GiB one
    /// row list can carry.
    pub fn new(table: &str, inserts: &[Row], deletes: &[Row]) -> Option<Self> {
        let list = |rows: &[Row]| RowList::from_rows(rows.iter().map(|row| &row[..]));
        Some(Self {
            table: table.to_owned(),
            inserts: list(inserts)?,
            deletes: list(deletes)?,
            json: OnceLock::new(),
        })
    }

    /// The size of the rows in the binary encoding: what a queued message holding them is
    /// counted as.
    pub fn bytes(&self) -> usize {
        self.inserts.encoded_len() + self.deletes.encoded_len()
    }

    /// The bytes the rows take now: their binary encoding, and their JSON once rendered.
    pub fn held_bytes(&self) -> usize {
        let json = match self.json.get() {
            Some(Ok(json)) => json.inserts.0.get().len() + json.deletes.0.get().len(),
            _ => 0,
        };
        self.bytes() + json
    }

    /// The rows as JSON in `module`'s mapping, rendered by the first caller and shared after.
    pub fn json(&self, module: &ModuleDef) -> Result<&JsonRows, String> {
        self.json
            .get_or_init(|| {
                let types = RowTypes::new(module);
                let render = |rows: &RowList| {
                    types
                        .to_json(&self.table, rows)
                        .map(|json| SharedJson(Arc::from(json)))
                        .map_err(|error| error.to_string())
                };
                Ok(JsonRows {
                    inserts: render(&self.inserts)?,
                    deletes: render(&self.deletes)?,
                })
            })
            .as_ref()
            .map_err(Clone::clone)
    }
}
