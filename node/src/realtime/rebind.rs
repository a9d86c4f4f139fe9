//! A connection's query set across a new build of the module (`wasmod publish`): whether it
//! carries on, and the messages of the sets that do not.
//!
//! The new build's tables may differ from the old one's: a table may have gained a column
//! (its rows are longer, and clients decode them with the row type they learned), another
//! visibility filter (other rows are visible), or be gone. A query set subscribed before the
//! swap holds rows of the old build in the client's cache; it may carry on silently only if
//! the rows it would be sent are the same bytes, meaning the same rows, as before. So every
//! table a query of the set reads must exist in the new build under the same name, with a
//! row type that encodes alike ([`same_encoding`]) and the same visibility filter. The set is
//! then bound again against the new build's tables, from its SQL texts and its connection's
//! identity (table ids and indexes may have changed; the rows have not). Any other set ends,
//! with a message that names the table and says to subscribe again.

use crate::build::Build;
use wasmod_abi::{Identity, ModuleDef, TableDef};
use wasmod_host::datastore::migrate::same_encoding;
use wasmod_subscription::{BoundQuery, Query};

/// The queries `texts` of a connection of `identity`, subscribed against the tables of `old`,
/// bound against those of `new`; or, if the set cannot carry on, why, naming the table.
pub fn rebind(
    old: &Build,
    new: &Build,
    identity: Identity,
    texts: &[impl AsRef<str>],
) -> Result<Vec<BoundQuery>, String> {
    texts
        .iter()
        .map(|text| {
            let text = text.as_ref();
            let query = Query::parse(&new.catalog, text)
                .map_err(|error| format!("`{text}` is no longer a valid query: {error}"))?;
            for table in query.tables() {
                unchanged(&old.module, &new.module, table)?;
            }
            Ok(query.bind(identity))
        })
        .collect()
}

/// Whether table `id` of `new` has the rows it had in `old`: the same name, a row type that
/// encodes alike and the same visibility filter; if not, what changed.
fn unchanged(old: &ModuleDef, new: &ModuleDef, id: u32) -> Result<(), String> {
    let Some(table) = new.tables.get(id as usize) else {
        return Err(format!("table #{id} is not in the new build"));
    };
    let name = &table.name;
    let Some(was) = old.tables.iter().find(|was| was.name == *name) else {
        return Err(format!("table `{name}` is new"));
    };
    if !same_rows(old, was, new, table) {
        return Err(format!("table `{name}` has other columns"));
    }
    if was.visibility != table.visibility {
        return Err(format!("table `{name}` has another visibility filter"));
    }
    Ok(())
}

/// Whether rows of `was` (of `old`) and of `table` (of `new`) are encoded alike.
fn same_rows(old: &ModuleDef, was: &TableDef, new: &ModuleDef, table: &TableDef) -> bool {
    same_encoding(
        &old.typespace,
        &was.row_type,
        &new.typespace,
        &table.row_type,
    )
}

/// The message that ends query set `query_set_id` at a swap, for `reason`.
pub fn ended(query_set_id: u32, reason: &str) -> String {
    format!(
        "query set {query_set_id} has ended: the module was replaced by a new build \
         (`wasmod publish`), in which {reason}; subscribe again, with the bindings of the new \
         build"
    )
}

/// The refusal of query set `query_set_id`, bound against the tables of a build that a newer
/// one replaced before the subscription was taken.
pub fn raced(query_set_id: u32) -> String {
    format!(
        "query set {query_set_id} was not subscribed: the module was replaced by a new build \
         (`wasmod publish`) while the subscription was on its way; subscribe again, with the \
         bindings of the new build"
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use wasmod_abi::{AlgebraicType as T, IndexDef};
    use wasmod_host::datastore::Database;
    use wasmod_subscription::Catalog;

    /// A module of `tables`, each a name and its columns, every one public and unfiltered.
    fn module(tables: &[(&str, &[(&str, T)])]) -> ModuleDef {
        let mut def = ModuleDef::default();
        for (name, columns) in tables {
            let table = TableDef::of_columns(&mut def.typespace, name, name, columns);
            def.tables.push(table);
        }
        def
    }

    fn build(number: u64, module: ModuleDef) -> Build {
        let datastore = Database::in_memory(&module).expect("valid").datastore();
        let catalog = Arc::new(Catalog::new(&module).expect("valid filters"));
        Build::new(number, Arc::new(module), catalog, datastore)
    }

    fn old() -> Build {
        build(
            0,
            module(&[("player", &[("id", T::U32), ("name", T::String)])]),
        )
    }

    fn rebound(new: ModuleDef, texts: &[&str]) -> Result<usize, String> {
        let texts: Vec<String> = texts.iter().map(|text| (*text).to_owned()).collect();
        rebind(&old(), &build(1, new), Identity::ZERO, &texts).map(|queries| queries.len())
    }

    #[test]
    fn a_table_that_moved_or_gained_an_index_keeps_its_queries() {
        let mut new = module(&[
            ("note", &[("id", T::U64)]),
            ("player", &[("id", T::U32), ("name", T::String)]),
        ]);
        new.tables[1].indexes.push(IndexDef {
            name: "player_id".into(),
            columns: vec![0],
            unique: true,
        });
        let texts = ["SELECT * FROM player", "SELECT * FROM player WHERE id = 3"];
        assert_eq!(rebound(new, &texts), Ok(2));
    }

    #[test]
    fn a_table_with_other_columns_ends_its_queries() {
        let new = module(&[(
            "player",
            &[("id", T::U32), ("name", T::String), ("level", T::U16)],
        )]);
        let reason = rebound(new, &["SELECT * FROM player"]).expect_err("ended");
        assert_eq!(reason, "table `player` has other columns");
    }

    #[test]
    fn a_table_with_another_visibility_filter_ends_its_queries() {
        let mut new = module(&[("player", &[("id", T::U32), ("name", T::String)])]);
        new.tables[0].visibility = Some("id > 10".into());
        let reason = rebound(new, &["SELECT * FROM player"]).expect_err("ended");
        assert_eq!(reason, "table `player` has another visibility filter");
    }

    #[test]
    fn a_query_that_no_longer_binds_ends_naming_its_table() {
        let mut new = module(&[("player", &[("id", T::U32), ("name", T::String)])]);
        new.tables[0].public = false;
        let reason = rebound(new, &["SELECT * FROM player"]).expect_err("ended");
        assert!(
            reason.starts_with("`SELECT * FROM player` is no longer a valid query")
                && reason.contains("player"),
            "{reason}"
        );
        let message = ended(3, &reason);
        for part in ["query set 3", "`wasmod publish`", "subscribe again"] {
            assert!(message.contains(part), "{part} in {message}");
        }
    }
}
