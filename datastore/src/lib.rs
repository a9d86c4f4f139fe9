//! In-memory tables, indexes and transactions for wasmod modules.
//!
//! A [`Datastore`] is created from a module's description ([`ModuleDef`]): the description is
//! validated (it comes from module code, which the host does not trust) and one empty table is
//! made per [`TableDef`]. Table ids and index ids are positions in the description, as the ABI
//! says.
//!
//! Rows are stored as their encoded bytes, checked against the row type when they come in.
//! Indexes are B-trees over keys built from the key columns' bytes, encoded so that comparing
//! the bytes compares the values (see the `key` module); unique indexes refuse a second row
//! with the same key. Auto-increment columns are filled from per-column sequences.
//! A table is a set: inserting a row equal to one it already has changes nothing.
//!
//! All access goes through transactions: [`Datastore::begin_mut`] for the single writer,
//! [`Datastore::begin_read`] for readers of the committed state. See [`tx`] for how they work
//! and why. Errors are [`Error`]s, each carrying the ABI [`Errno`](wasmod_abi::Errno) a module
//! receives and a message for the host's logs. Nothing here panics on bad input.
//!
//! A datastore lives in memory; [`durability`] adds a commit log that makes commits survive a
//! crash, and replays it into a new datastore on start. A [`Database`] puts the two together
//! with the commit pipeline: every commit logged, then published in order, with who made it.

mod database;
pub mod durability;
mod error;
mod index;
mod key;
pub mod migrate;
mod row;
mod rows;
mod scan;
mod schema;
mod sequence;
mod table;
pub mod tx;

pub use database::{
    Commit, CommitFeed, CommitMeta, CommitObserver, CommitReceiver, Committed, Database,
    EntryPoint, FeedError, RecentCommits, ReplaceError, Replaced, ReplicaError, CONNECTION_TABLE,
    FEED_CAPACITY, SYSTEM_PREFIX,
};
pub use error::{Error, SchemaError};
pub use row::Row;
pub use tx::{MutTx, ReadTx, TableChanges, Tables, TxData};

use parking_lot::RwLock;
use schema::Schema;
use std::sync::Arc;
use wasmod_abi::{ModuleDef, TableDef, Typespace};

/// The tables of one module, shared by every transaction on them.
pub struct Datastore {
    schema: Arc<Schema>,
    tables: Arc<RwLock<Tables>>,
}

impl Datastore {
    /// Validates the tables of `def` and creates them, empty.
    ///
    /// Fails, naming the table, column or index at fault, if two tables share a name, a type
    /// reference does not resolve, a row type is not a product matching the columns, an index,
    /// the primary key or an auto-increment names a missing column, two indexes of a table
    /// share a name, the primary key is not the table's first (unique) index, or an
    /// auto-increment column is not an integer.
    pub fn new(def: &ModuleDef) -> Result<Self, SchemaError> {
        let schema = Arc::new(Schema::new(def)?);
        let tables = Arc::new(RwLock::new(Tables::new(schema.clone())));
        Ok(Self { schema, tables })
    }

    /// Begins a transaction that reads the committed state; waits while a [`MutTx`] is open.
    pub fn begin_read(&self) -> ReadTx {
        ReadTx::new(self.tables.read_arc())
    }

    /// Begins the transaction that may write; waits while another transaction is open.
    pub fn begin_mut(&self) -> MutTx {
        MutTx::new(self.tables.write_arc())
    }

    /// The id of the table named `name`.
    pub fn table_id(&self, name: &str) -> Option<u32> {
        let position = self
            .schema
            .tables
            .iter()
            .position(|table| table.def.name == name)?;
        u32::try_from(position).ok()
    }

    /// The description of table `table`.
    pub fn table_def(&self, table: u32) -> Option<&TableDef> {
        self.schema
            .tables
            .get(table as usize)
            .map(|table| &table.def)
    }

    /// How many tables there are.
    pub fn table_count(&self) -> usize {
        self.schema.tables.len()
    }

    /// The typespace the tables' column types refer into.
    pub fn typespace(&self) -> &Typespace {
        &self.schema.typespace
    }
}

impl std::fmt::Debug for Datastore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<&str> = self
            .schema
            .tables
            .iter()
            .map(|t| t.def.name.as_str())
            .collect();
        f.debug_struct("Datastore")
            .field("tables", &names)
            .finish_non_exhaustive()
    }
}
