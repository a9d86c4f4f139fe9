//! Parsing and checking queries: what the subset accepts, every refusal with its message, and
//! that no input makes the parser panic.

#[path = "support/rng.rs"]
mod rng;
use rng::Rng;

use std::sync::{Arc, LazyLock};
use wasmod_abi::{AlgebraicType as T, Identity, IndexDef, ModuleDef, TableDef};
use wasmod_subscription::{Catalog, Query, MAX_QUERY_LEN};

/// The catalog every query of these tests is checked against (one, so that equal queries are
/// equal).
static CATALOG: LazyLock<Arc<Catalog>> = LazyLock::new(module_catalog);

fn catalog() -> Arc<Catalog> {
    CATALOG.clone()
}

/// `player`, `item` (public, indexed) and `secret` (private).
fn module_catalog() -> Arc<Catalog> {
    let mut def = ModuleDef::default();
    let player = TableDef::of_columns(
        &mut def.typespace,
        "Player",
        "player",
        &[
            ("id", T::U64),
            ("name", T::String),
            ("level", T::U8),
            ("owner", T::Identity),
            ("online", T::Bool),
            ("score", T::F64),
            ("conn", T::ConnectionId),
            ("tags", T::Array(Box::new(T::U32))),
            ("hp", T::I16),
        ],
    );
    def.tables.push(TableDef {
        primary_key: Some(0),
        indexes: vec![
            index("id", &[0], true),
            index("level", &[2], false),
            index("owner", &[3], false),
        ],
        ..player
    });
    let item = TableDef::of_columns(
        &mut def.typespace,
        "Item",
        "item",
        &[
            ("id", T::U64),
            ("holder", T::U64),
            ("kind", T::String),
            ("level", T::U8),
        ],
    );
    def.tables.push(TableDef {
        indexes: vec![index("id", &[0], true), index("holder", &[1, 2], false)],
        ..item
    });
    let secret = TableDef::of_columns(&mut def.typespace, "Secret", "secret", &[("id", T::U64)]);
    def.tables.push(TableDef {
        public: false,
        ..secret
    });
    Arc::new(Catalog::new(&def).expect("no visibility filters"))
}

fn index(name: &str, columns: &[u16], unique: bool) -> IndexDef {
    IndexDef {
        name: name.to_owned(),
        columns: columns.to_vec(),
        unique,
    }
}

fn refusal(text: &str) -> String {
    match Query::parse(&catalog(), text) {
        Ok(query) => panic!("`{text}` was accepted: {query:?}"),
        Err(error) => error.to_string(),
    }
}

fn accepted(text: &str) -> Query {
    Query::parse(&catalog(), text).unwrap_or_else(|error| panic!("`{text}`: {error}"))
}

#[test]
fn the_subset_is_accepted() {
    for text in [
        "SELECT * FROM player",
        "select * from player where level = 3",
        "SELECT player.* FROM player WHERE level >= 3 AND (name = 'x' OR name != 'y')",
        "SELECT * FROM player AS p WHERE p.hp < -5 AND p.online = true",
        "SELECT * FROM player WHERE 3 < level",
        "SELECT * FROM player WHERE score > 1.5 AND score <= 1e3",
        "SELECT * FROM player WHERE owner = :sender",
        "SELECT * FROM player WHERE name <> 'o''brien'",
        "SELECT * FROM player WHERE conn = 0x000102030405060708090a0b0c0d0e0f",
        "SELECT * FROM player WHERE conn = X'000102030405060708090A0B0C0D0E0F'",
        "SELECT item.* FROM item JOIN player ON item.holder = player.id WHERE player.level > 2",
        "SELECT i.* FROM player p INNER JOIN item i ON p.id = i.holder WHERE kind = 'sword'",
        "SELECT p.* FROM player p JOIN item i ON i.holder = p.id WHERE i.level = 1 AND p.owner = :sender",
    ] {
        accepted(text);
    }
}

#[test]
fn equal_queries_are_one_however_written() {
    let sender = Identity::from_bytes([7; 32]);
    let same = [
        "SELECT * FROM player WHERE level = 1 AND name = 'a'",
        "SELECT player.* FROM player WHERE (name = 'a') AND 1 = level",
        "SELECT p.* FROM player p WHERE p.name = 'a' AND level = 1 AND name = 'a'",
    ];
    let bound: Vec<_> = same
        .iter()
        .map(|text| accepted(text).bind(sender))
        .collect();
    assert!(bound.windows(2).all(|pair| pair[0] == pair[1]));
    assert!(bound
        .windows(2)
        .all(|pair| pair[0].fingerprint() == pair[1].fingerprint()));
    let joins = [
        "SELECT item.* FROM item JOIN player ON item.holder = player.id",
        "SELECT i.* FROM player p JOIN item i ON p.id = i.holder",
    ];
    let joins: Vec<_> = joins
        .iter()
        .map(|text| accepted(text).bind(sender))
        .collect();
    assert_eq!(joins[0], joins[1]);

    let mine = accepted("SELECT * FROM player WHERE owner = :sender");
    assert!(mine.uses_sender());
    assert!(!accepted("SELECT * FROM player").uses_sender());
    let other = Identity::from_bytes([8; 32]);
    assert_ne!(mine.bind(sender), mine.bind(other));
    let written = format!("SELECT * FROM player WHERE owner = 0x{}", sender.to_hex());
    assert_eq!(accepted(&written).bind(other), mine.bind(sender));
}

#[test]
fn every_refusal_names_what_is_wrong() {
    let cases: &[(&str, &str)] = &[
        ("SELEC * FROM player", "the query is not valid SQL: "),
        ("SELECT * FROM player; SELECT * FROM item", "2 statements in one query is not supported"),
        ("", "0 statements in one query is not supported"),
        ("INSERT INTO player VALUES (1)", "INSERT INTO is not supported"),
        ("DELETE FROM player", "DELETE FROM is not supported"),
        ("SELECT * FROM player GROUP BY level", "GROUP BY is not supported"),
        ("SELECT * FROM player ORDER BY level", "ORDER BY is not supported"),
        ("SELECT * FROM player LIMIT 3", "LIMIT is not supported"),
        ("SELECT DISTINCT * FROM player", "DISTINCT is not supported"),
        ("SELECT * FROM player HAVING level > 1", "HAVING is not supported"),
        ("WITH x AS (SELECT * FROM player) SELECT * FROM x", "WITH is not supported"),
        ("SELECT * FROM player UNION SELECT * FROM player", "UNION is not supported"),
        ("SELECT id FROM player", "selecting anything but `*` or `table.*` is not supported"),
        ("SELECT *, id FROM player", "selecting anything but `*` or `table.*` is not supported"),
        ("SELECT COUNT(*) FROM player", "selecting anything but `*` or `table.*` is not supported"),
        ("SELECT 1", "SELECT without FROM is not supported"),
        ("SELECT * FROM player, item", "several tables in FROM (join them with JOIN … ON) is not supported"),
        ("SELECT * FROM (SELECT * FROM player)", "anything but a table's name in FROM or JOIN is not supported"),
        ("SELECT * FROM game.player", "the qualified name `game.player` is not supported"),
        ("SELECT player.* FROM player LEFT JOIN item ON player.id = item.holder", "LEFT JOIN is not supported"),
        ("SELECT player.* FROM player CROSS JOIN item", "CROSS JOIN is not supported"),
        ("SELECT player.* FROM player JOIN item USING (id)", "a join without ON (USING, NATURAL) is not supported"),
        ("SELECT player.* FROM player JOIN item ON player.id = item.holder AND item.level = 1", "an ON condition other than one equality of two columns is not supported"),
        ("SELECT player.* FROM player JOIN item ON player.id = item.holder JOIN item i2 ON i2.id = player.id", "a join of more than two tables is not supported"),
        ("SELECT * FROM player WHERE NOT online = true", "NOT is not supported"),
        ("SELECT * FROM player WHERE name IS NULL", "IS NULL is not supported"),
        ("SELECT * FROM player WHERE level IN (1, 2)", "IN is not supported"),
        ("SELECT * FROM player WHERE level BETWEEN 1 AND 2", "BETWEEN is not supported"),
        ("SELECT * FROM player WHERE name LIKE 'a%'", "LIKE is not supported"),
        ("SELECT * FROM player WHERE lower(name) = 'a'", "a function call is not supported"),
        ("SELECT * FROM player WHERE online", "a column alone as a condition is not supported"),
        ("SELECT * FROM player WHERE level + 1 = 2", "the operator `+` is not supported"),
        ("SELECT * FROM player WHERE level = hp", "comparing two columns in WHERE (`level`, `hp`) is not supported"),
        ("SELECT * FROM player WHERE 1 = 2", "a comparison without a column (`1`, `2`) is not supported"),
        ("SELECT * FROM player WHERE name = NULL", "NULL is not supported"),
        ("SELECT * FROM player WHERE owner = :me", "the parameter `:me` (the only one is `:sender`) is not supported"),
        ("SELECT * FROM player WHERE name = \"x\"", "comparing two columns in WHERE (`name`, `\"x\"`) is not supported"),
        ("SELECT * FROM nobody", "no table is named `nobody`"),
        ("SELECT * FROM secret", "table `secret` is private: it cannot be queried"),
        ("SELECT player.* FROM player JOIN secret ON player.id = secret.id", "table `secret` is private: it cannot be queried"),
        ("SELECT * FROM player WHERE mana = 1", "table `player` has no column `mana`"),
        ("SELECT * FROM player p WHERE q.level = 1", "`q` names no table of the query"),
        ("SELECT x.* FROM player", "`x` names no table of the query"),
        ("SELECT * FROM player p WHERE player.level = 1", "`player` names no table of the query"),
        ("SELECT player.* FROM player JOIN item ON player.id = item.holder WHERE level = 1", "column `level` is in both tables of the join: write it with its table's name"),
        ("SELECT player.* FROM player JOIN item ON player.id = item.holder WHERE mana = 1", "neither table `player` nor table `item` has a column `mana`"),
        ("SELECT * FROM player JOIN item ON player.id = item.holder", "SELECT * over a join (select `table.*` of the table whose rows it returns) is not supported"),
        ("SELECT player.* FROM player JOIN player ON player.id = player.id", "joining two tables both called `player` (give one an alias) is not supported"),
        ("SELECT player.* FROM player JOIN item ON player.name = item.kind", "the join cannot be evaluated: `player.name` is not indexed (it must be the first column of an index)"),
        ("SELECT player.* FROM player JOIN item ON player.id = item.kind", "the join cannot be evaluated: `player.id` (u64) and `item.kind` (String) are not of one comparable type"),
        ("SELECT player.* FROM player JOIN item ON player.id = player.level", "the join cannot be evaluated: ON compares `player.id` with `player.level`: it must compare a column of each table"),
        ("SELECT * FROM player WHERE level = 256", "column `level` (u8): 256 is out of range (0 to 255)"),
        ("SELECT * FROM player WHERE level = -1", "column `level` (u8): -1 is out of range (0 to 255)"),
        ("SELECT * FROM player WHERE hp > 40000", "column `hp` (i16): 40000 is out of range (-32768 to 32767)"),
        ("SELECT * FROM player WHERE id = 'seven'", "column `id` (u64): expected an integer, found the string 'seven'"),
        ("SELECT * FROM player WHERE id = 1.5", "column `id` (u64): expected an integer, found the number 1.5"),
        ("SELECT * FROM player WHERE name = 3", "column `name` (String): expected a string in single quotes, found the number 3"),
        ("SELECT * FROM player WHERE online = 1", "column `online` (bool): expected `true` or `false`, found the number 1"),
        ("SELECT * FROM player WHERE owner = 'me'", "column `owner` (Identity): expected 64 hex digits (`0x…` or `X'…'`) or `:sender`, found the string 'me'"),
        ("SELECT * FROM player WHERE owner = 0xabcd", "column `owner` (Identity): expected 64 hex digits (32 bytes), found `abcd`"),
        ("SELECT * FROM player WHERE conn = :sender", "column `conn` (ConnectionId): `:sender` is an Identity, which this column cannot hold"),
        ("SELECT * FROM player WHERE name = :sender", "column `name` (String): `:sender` is an Identity, which this column cannot hold"),
        ("SELECT * FROM player WHERE tags = 1", "column `tags` has type Vec<u32>, which queries cannot compare"),
    ];
    let mut failures = Vec::new();
    for (text, expected) in cases {
        let message = refusal(text);
        let matches = if expected.ends_with(": ") {
            message.starts_with(expected)
        } else {
            message == *expected
        };
        if !matches {
            failures.push(format!(
                "`{text}`\n  expected: {expected}\n  got:      {message}"
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn a_query_past_the_length_limit_is_refused() {
    let long = format!(
        "SELECT * FROM player WHERE {}",
        "level = 1 AND ".repeat(10_000)
    );
    assert_eq!(
        refusal(&long),
        format!("a query longer than {MAX_QUERY_LEN} bytes is not supported")
    );
}

#[test]
fn deep_nesting_is_refused() {
    let deep = format!(
        "SELECT * FROM player WHERE {}level = 1{}",
        "(".repeat(200),
        ")".repeat(200)
    );
    assert!(refusal(&deep).starts_with("the query is not valid SQL: "));
}

#[test]
fn a_long_chain_of_conditions_costs_no_stack() {
    let chain = format!(
        "SELECT * FROM player WHERE level = 1{}",
        " OR level = 2".repeat(500)
    );
    accepted(&chain);
}

#[test]
fn no_input_makes_the_parser_panic() {
    let words = [
        "SELECT",
        "*",
        "FROM",
        "player",
        "item",
        "secret",
        "WHERE",
        "JOIN",
        "ON",
        "AND",
        "OR",
        "(",
        ")",
        "=",
        "!=",
        "<",
        ">=",
        "level",
        "p.level",
        "item.holder",
        "player.id",
        "1",
        "-1",
        "'x'",
        "0xff",
        ":sender",
        "true",
        "NULL",
        ",",
        ".",
        "AS",
        "p",
        "GROUP",
        "BY",
        "NOT",
        "IN",
        "'",
        "\"",
        ";",
        "x'00'",
        "1e999",
        "99999999999999999999999999999999999999999",
        "player.*",
        "p.*",
        "LIMIT",
        "é",
    ];
    let mut rng = Rng(0x5eed);
    let catalog = catalog();
    for _ in 0..5_000 {
        let len = 1 + rng.next() % 14;
        let text: Vec<&str> = (0..len).map(|_| *rng.pick(&words)).collect();
        let text = text.join(" ");
        let _ = Query::parse(&catalog, &text);
        let mut bytes = text.into_bytes();
        if !bytes.is_empty() {
            let at = (rng.next() % bytes.len() as u64) as usize;
            bytes.truncate(at);
        }
        let _ = Query::parse(&catalog, &String::from_utf8_lossy(&bytes));
    }
    // Random characters after a valid start, where the parser meets them in conditions.
    let alphabet: Vec<char> = " ()=<>!'\".,;:*-+0x1aXy_é\n".chars().collect();
    for _ in 0..5_000 {
        let tail: String = (0..1 + rng.next() % 30)
            .map(|_| alphabet[(rng.next() % alphabet.len() as u64) as usize])
            .collect();
        let _ = Query::parse(&catalog, &format!("SELECT * FROM player WHERE {tail}"));
    }
}

#[test]
fn a_query_reads_its_own_table_and_its_join_partner() {
    // player is table 0, item table 1.
    let tables = |text: &str| accepted(text).tables().collect::<Vec<_>>();
    assert_eq!(tables("SELECT * FROM item WHERE level = 2"), [1]);
    assert_eq!(
        tables("SELECT item.* FROM item JOIN player ON item.holder = player.id"),
        [1, 0]
    );
    assert_eq!(
        tables("SELECT p.* FROM player p JOIN item i ON i.holder = p.id"),
        [0, 1]
    );
}
