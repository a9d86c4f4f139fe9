//! The selective-evaluation workload, shared by its test and its benchmark: a table of items
//! with owners, and one subscription `SELECT * FROM item WHERE owner = :sender` per owner.

// Each includer (the test, the benchmark) uses a part of it.
#![allow(dead_code)]

use std::sync::Arc;
use wasmod_abi::{AlgebraicType as T, Identity, IndexDef, ModuleDef, TableDef, Value};
use wasmod_datastore::{Datastore, TxData};
use wasmod_subscription::{Catalog, Query, QueryId, Subscriptions};

/// The table `item (id u64 primary key, owner Identity indexed, label String)`, and a table
/// `other (id u64)` that no query reads.
pub fn module() -> ModuleDef {
    let mut def = ModuleDef::default();
    let item = TableDef::of_columns(
        &mut def.typespace,
        "Item",
        "item",
        &[("id", T::U64), ("owner", T::Identity), ("label", T::String)],
    );
    def.tables.push(TableDef {
        primary_key: Some(0),
        indexes: vec![
            IndexDef {
                name: "id".into(),
                columns: vec![0],
                unique: true,
            },
            IndexDef {
                name: "owner".into(),
                columns: vec![1],
                unique: false,
            },
        ],
        ..item
    });
    let other = TableDef::of_columns(&mut def.typespace, "Other", "other", &[("id", T::U64)]);
    def.tables.push(other);
    def
}

/// The id of table `item`.
pub const ITEM: u32 = 0;
/// The id of table `other`.
pub const OTHER: u32 = 1;

/// Owner number `n`.
pub fn owner(n: u32) -> Identity {
    let mut bytes = [0; 32];
    bytes[..4].copy_from_slice(&n.to_le_bytes());
    Identity::from_bytes(bytes)
}

/// An encoded row of `item`.
pub fn item(id: u64, owner: Identity, label: &str) -> Vec<u8> {
    Value::Product(vec![
        Value::U64(id),
        Value::Identity(owner),
        Value::String(label.to_owned()),
    ])
    .to_bytes()
}

/// The datastore, and a registry with `owners` subscriptions, one per owner; returns the
/// query ids by owner number.
pub fn subscribed(owners: u32) -> (Datastore, Arc<Catalog>, Subscriptions, Vec<QueryId>) {
    subscribed_to(module(), owners, "SELECT * FROM item WHERE owner = :sender")
}

/// [`subscribed`] with `item` showing each reader its own items (a visibility filter
/// `owner = :sender`), and every owner subscribed to `SELECT * FROM item`: the same queries,
/// reached through the filter.
pub fn subscribed_through_visibility(
    owners: u32,
) -> (Datastore, Arc<Catalog>, Subscriptions, Vec<QueryId>) {
    let mut def = module();
    def.tables[ITEM as usize].visibility = Some("owner = :sender".to_owned());
    subscribed_to(def, owners, "SELECT * FROM item")
}

/// The datastore of `def`, and a registry with `owners` subscriptions to `query`, one per
/// owner as its `:sender`.
fn subscribed_to(
    def: ModuleDef,
    owners: u32,
    query: &str,
) -> (Datastore, Arc<Catalog>, Subscriptions, Vec<QueryId>) {
    let datastore = Datastore::new(&def).expect("a valid module");
    let catalog = Arc::new(Catalog::new(&def).expect("the filters apply"));
    let mine = Query::parse(&catalog, query).expect("a query of the subset");
    let mut subscriptions = Subscriptions::new(catalog.clone());
    let ids = (0..owners)
        .map(|n| subscriptions.add(mine.bind(owner(n))).expect("one catalog"))
        .collect();
    (datastore, catalog, subscriptions, ids)
}

/// Commits the insertion of one item of `owner`, and returns the commit's changes.
pub fn insert_one(datastore: &Datastore, id: u64, owner: Identity) -> TxData {
    let mut tx = datastore.begin_mut();
    let mut row = item(id, owner, "sword");
    tx.insert(ITEM, &mut row).expect("a new item");
    tx.commit()
}
