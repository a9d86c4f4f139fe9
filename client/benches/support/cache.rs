//! The client cache's scenarios (issue 12's "apply an update to the client cache"): one
//! transaction of quickstart-like `message` rows (about 80 bytes) applied as the connection
//! applies it, inserts into an empty cache and updates of every row. Shared by the native
//! bench (`cache.rs`) and the browser's (`client/web/src/bench.rs`, which includes this file).

use wasmod_abi::encoding::to_vec;
use wasmod_abi::{AlgebraicType, Field, SchemaType, Typespace};
use wasmod_client::cache::{Cache, PrimaryKey, TableEvents};

/// The row counts measured.
pub const SIZES: [usize; 3] = [1, 100, 10_000];

/// `count` encoded `message` rows `(id, sender, sent, text)`, their texts `text` and the id.
pub fn rows(count: usize, text: &str) -> Vec<Vec<u8>> {
    (0..count as u64)
        .map(|id| {
            to_vec(&(
                id,
                [0xab_u8; 32],
                1_700_000_000_000_000_i64,
                format!("{text} {id}"),
            ))
        })
        .collect()
}

/// Reads column `column` of `message` rows.
pub fn message_column(column: &str) -> PrimaryKey {
    let mut typespace = Typespace::default();
    let row_type = AlgebraicType::Product(vec![
        Field::named("id", u64::schema(&mut typespace)),
        Field::named("sender", <[u8; 32]>::schema(&mut typespace)),
        Field::named("sent", i64::schema(&mut typespace)),
        Field::named("text", String::schema(&mut typespace)),
    ]);
    PrimaryKey::named(&row_type, typespace, column).expect("a column of `message`")
}

/// An empty cache whose `message` table is keyed by its `id`.
pub fn keyed_cache() -> Cache {
    let mut cache = Cache::new();
    cache.set_primary_key("message", message_column("id"));
    cache
}

/// Applies one transaction: `deletes`, then `inserts`, of query set 1.
pub fn apply_one(cache: &mut Cache, deletes: &[Vec<u8>], inserts: &[Vec<u8>]) -> Vec<TableEvents> {
    let mut batch = cache.batch();
    batch.delete_all(1, "message", deletes.iter().map(Vec::as_slice));
    batch.insert_all(1, "message", inserts.iter().map(Vec::as_slice));
    batch.finish()
}

/// A keyed cache holding `rows`.
pub fn filled(rows: &[Vec<u8>]) -> Cache {
    let mut cache = keyed_cache();
    apply_one(&mut cache, &[], rows);
    cache
}
