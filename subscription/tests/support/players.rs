//! The selective-evaluation workload for joins, shared by its test and its benchmark: players
//! with identities, their items, and one subscription per player to the items of its
//! identity's players.

// Each includer (the test, the benchmark) uses a part of it.
#![allow(dead_code)]

use super::owners::owner;
use std::sync::Arc;
use wasmod_abi::{AlgebraicType as T, IndexDef, ModuleDef, TableDef, Value};
use wasmod_datastore::{Datastore, TxData};
use wasmod_subscription::{Catalog, Query, QueryId, Subscriptions};

/// The id of table `player`.
pub const PLAYER: u32 = 0;
/// The id of table `item`.
pub const ITEM: u32 = 1;

/// `player (id u64 primary key, who Identity indexed)` and
/// `item (id u64 primary key, holder u64 indexed)`.
pub fn module() -> ModuleDef {
    let index = |name: &str, column: u16, unique: bool| IndexDef {
        name: name.into(),
        columns: vec![column],
        unique,
    };
    let mut def = ModuleDef::default();
    let player = TableDef::of_columns(
        &mut def.typespace,
        "Player",
        "player",
        &[("id", T::U64), ("who", T::Identity)],
    );
    def.tables.push(TableDef {
        primary_key: Some(0),
        indexes: vec![index("id", 0, true), index("who", 1, false)],
        ..player
    });
    let item = TableDef::of_columns(
        &mut def.typespace,
        "Item",
        "item",
        &[("id", T::U64), ("holder", T::U64)],
    );
    def.tables.push(TableDef {
        primary_key: Some(0),
        indexes: vec![index("id", 0, true), index("holder", 1, false)],
        ..item
    });
    def
}

/// `players` players (player `n` has identity `owner(n)`) with one item each, and one
/// subscription per identity to
/// `SELECT item.* FROM item JOIN player ON item.holder = player.id WHERE player.who = :sender`;
/// returns the query ids by player.
pub fn subscribed(players: u32) -> (Datastore, Subscriptions, Vec<QueryId>) {
    let def = module();
    let datastore = Datastore::new(&def).expect("a valid module");
    let catalog = Arc::new(Catalog::new(&def).expect("no visibility filters"));
    let mut tx = datastore.begin_mut();
    for n in 0..players {
        let player = Value::Product(vec![Value::U64(n.into()), Value::Identity(owner(n))]);
        tx.insert(PLAYER, &mut player.to_bytes())
            .expect("a new player");
        let item = Value::Product(vec![
            Value::U64(u64::from(n) + 1_000_000),
            Value::U64(n.into()),
        ]);
        tx.insert(ITEM, &mut item.to_bytes()).expect("a new item");
    }
    tx.commit();
    let mine = Query::parse(
        &catalog,
        "SELECT item.* FROM item JOIN player ON item.holder = player.id WHERE player.who = :sender",
    )
    .expect("a query of the subset");
    let mut subscriptions = Subscriptions::new(catalog);
    let ids = (0..players)
        .map(|n| subscriptions.add(mine.bind(owner(n))).expect("one catalog"))
        .collect();
    (datastore, subscriptions, ids)
}

/// Commits a new item `id` of player `holder`, and returns the commit's changes.
pub fn new_item(datastore: &Datastore, id: u64, holder: u64) -> TxData {
    let mut tx = datastore.begin_mut();
    let mut row = Value::Product(vec![Value::U64(id), Value::U64(holder)]).to_bytes();
    tx.insert(ITEM, &mut row).expect("a new item");
    tx.commit()
}
