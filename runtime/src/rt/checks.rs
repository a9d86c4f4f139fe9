//! Compile-time checks the macros emit as `const` items.
//!
//! The inline module form checks names as it parses and reports them with spans; these `const`
//! checks also cover entry points registered from other files, whose names the module-level
//! macro cannot see. A failed check is a compile error ("evaluation of constant value failed")
//! pointing at the module declaration, with the message below. Each takes one `Option` per
//! item: `None` for an item disabled by `#[cfg]`.

use super::Registered;
use wasmod_abi::{EntryKind, Lifecycle};

/// Compiles only if `T` was registered by a module (see [`Registered`]).
pub const fn assert_registered<T: Registered + ?Sized>() {}

/// Whether two of the names (ignoring disabled items) are equal.
const fn has_duplicate(names: &[Option<&str>]) -> bool {
    let mut i = 0;
    while i < names.len() {
        let mut j = i + 1;
        while j < names.len() {
            if let (Some(a), Some(b)) = (names[i], names[j]) {
                if str_eq(a, b) {
                    return true;
                }
            }
            j += 1;
        }
        i += 1;
    }
    false
}

/// Fails to compile if two entry points have the same name.
pub const fn assert_names_unique(names: &[Option<&str>]) {
    if has_duplicate(names) {
        panic!("two entry points of this module have the same name; rename one with `name = \"..\"` in its attribute");
    }
}

/// Fails to compile if two tables have the same name.
pub const fn assert_table_names_unique(names: &[Option<&str>]) {
    if has_duplicate(names) {
        panic!(
            "two tables of this module have the same name; rename one with `#[table(name = ..)]`"
        );
    }
}

/// Fails to compile if two reducers have the same lifecycle role.
pub const fn assert_lifecycles_unique(roles: &[Option<Option<Lifecycle>>]) {
    let mut i = 0;
    while i < roles.len() {
        let mut j = i + 1;
        while j < roles.len() {
            if let (Some(Some(a)), Some(Some(b))) = (roles[i], roles[j]) {
                if a as u8 == b as u8 {
                    panic!("two reducers of this module have the same lifecycle role (`init`, `client_connected` or `client_disconnected`)");
                }
            }
            j += 1;
        }
        i += 1;
    }
}

/// One row of the macros' table of entry-point kinds: the kind, its export, its list, its word,
/// and whether its export takes the caller.
pub type KindRow = (EntryKind, &'static str, &'static str, &'static str, bool);

/// Fails to compile unless the macros' table of entry-point kinds (see `macros/src/ir/kind.rs`)
/// is [`EntryKind`]'s: the same kinds in the same order, with the same exports, lists, words
/// and callers. The macros cannot depend on `wasmod-abi`, so they repeat what their expansion
/// needs; every module checks the copy here.
pub const fn assert_kind_table(rows: &[KindRow]) {
    const MISMATCH: &str = "wasmod-macros and wasmod-abi disagree on the kinds of entry point: use the same version of both";
    if rows.len() != EntryKind::ALL.len() {
        panic!("{}", MISMATCH);
    }
    let mut index = 0;
    while index < rows.len() {
        let (kind, export, list, word, takes_caller) = rows[index];
        if !str_eq(kind.export(), EntryKind::ALL[index].export())
            || !str_eq(kind.export(), export)
            || !str_eq(kind.list(), list)
            || !str_eq(kind.as_str(), word)
            || kind.takes_caller() != takes_caller
        {
            panic!("{}", MISMATCH);
        }
        index += 1;
    }
}

const fn str_eq(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

#[cfg(test)]
mod tests {
    use super::{
        assert_kind_table, assert_lifecycles_unique, assert_names_unique,
        assert_table_names_unique, KindRow,
    };
    use wasmod_abi::{EntryKind, Lifecycle};

    // The checks run at compile time in a module; here at run time, where a failed check is a
    // panic with the message the compile error shows.

    #[test]
    fn distinct_names_pass_and_disabled_items_are_not_compared() {
        assert_names_unique(&[]);
        assert_names_unique(&[Some("send"), Some("set_name"), None, Some("sen")]);
        // Two items of the same name, one disabled by `#[cfg]`: only one is in the module.
        assert_names_unique(&[Some("send"), None, Some("other")]);
        assert_names_unique(&[None, None]);
        assert_table_names_unique(&[Some("user"), Some("message"), None]);
    }

    #[test]
    #[should_panic(expected = "two entry points of this module have the same name")]
    fn two_entry_points_of_one_name_are_refused_wherever_they_are() {
        assert_names_unique(&[Some("a"), None, Some("b"), Some("c"), Some("b")]);
    }

    #[test]
    #[should_panic(expected = "two tables of this module have the same name")]
    fn two_tables_of_one_name_are_refused() {
        assert_table_names_unique(&[Some("user"), Some("user")]);
    }

    #[test]
    fn distinct_lifecycle_roles_pass() {
        assert_lifecycles_unique(&[
            Some(Some(Lifecycle::Init)),
            Some(None),
            None,
            Some(Some(Lifecycle::ClientConnected)),
            Some(Some(Lifecycle::ClientDisconnected)),
            Some(None),
        ]);
        // A second `init` disabled by `#[cfg]` is not in the module.
        assert_lifecycles_unique(&[Some(Some(Lifecycle::Init)), None]);
    }

    #[test]
    #[should_panic(expected = "two reducers of this module have the same lifecycle role")]
    fn two_reducers_of_one_lifecycle_role_are_refused() {
        assert_lifecycles_unique(&[
            Some(Some(Lifecycle::ClientConnected)),
            Some(None),
            Some(Some(Lifecycle::ClientConnected)),
        ]);
    }

    fn abi_table() -> Vec<KindRow> {
        EntryKind::ALL
            .into_iter()
            .map(|kind| {
                let (export, list, word) = (kind.export(), kind.list(), kind.as_str());
                (kind, export, list, word, kind.takes_caller())
            })
            .collect()
    }

    #[test]
    fn the_abi_table_agrees_with_itself() {
        assert_kind_table(&abi_table());
    }

    #[test]
    #[should_panic(expected = "disagree on the kinds of entry point")]
    fn a_word_spelled_differently_is_refused() {
        let mut table = abi_table();
        table[3].3 = "anonymous_view";
        assert_kind_table(&table);
    }

    #[test]
    #[should_panic(expected = "disagree on the kinds of entry point")]
    fn a_missing_kind_is_refused() {
        let mut table = abi_table();
        table.pop();
        assert_kind_table(&table);
    }

    #[test]
    #[should_panic(expected = "disagree on the kinds of entry point")]
    fn kinds_out_of_order_are_refused() {
        let mut table = abi_table();
        table.swap(0, 1);
        assert_kind_table(&table);
    }
}
