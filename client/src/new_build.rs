//! Query sets across a new build of the module (`wasmod publish`).
//!
//! At a swap, the server carries on every query set whose tables are the same in the new
//! build, and ends the others with a `SubscriptionError` (`docs/protocol.md`, "A new build"):
//! a table gained a column, got another visibility filter, or is gone. For a query set whose
//! rows the cache holds, that message can only mean such an end (a refusal comes before the
//! rows), so the connection task subscribes the set again, by itself, when the new build can
//! serve it in the row types the client reads, and tells the application what became of it
//! ([`NewBuild`], through [`SubscriptionBuilder::on_new_build`](crate::SubscriptionBuilder::on_new_build)):
//!
//! - The tables the set's queries read ([`tables_read`]) whose row types the client knows
//!   (declared with [`ClientBuilder::table`](crate::ClientBuilder::table) or
//!   [`keyed_table`](crate::ClientBuilder::keyed_table), as generated bindings do, or read
//!   from the module's description by the browser client) are checked against the new build's
//!   description (`GET /v1/module`, fetched once for all the sets a swap ended): if one of
//!   them encodes its rows otherwise now, the client cannot read them, and the set stays ended
//!   (the application needs the new build's bindings). A set that reads no table of known
//!   row type is subscribed again without the description.
//! - Otherwise the set is subscribed again from scratch. Its old rows stay in the cache until
//!   the new build's replace them, so that only the rows that differ run their callbacks (a
//!   visibility filter that now shows one more row: one insert). The server may still refuse
//!   it (a query no longer valid): the set then ends.
//!
//! A set ended this way that stays ended leaves the cache like an unsubscribed one (its rows'
//! delete callbacks run) and its state is [`SubscriptionState::Failed`](crate::SubscriptionState::Failed)
//! with the reason. A subscription the server had not answered at the swap is refused
//! outright (its rows of the old build can no longer be read); that refusal reaches
//! `on_error` as any other, and is not retried.

use crate::HashMap;
use wasmod_abi::schema::same_encoding;
use wasmod_abi::{AlgebraicType, Typespace};
use wasmod_protocol::description::ModuleDescription;

/// What became of a query set that a new build of the module ended.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum NewBuild {
    /// Subscribed again: the new build's rows are in the cache (only those that differ from
    /// what the set held ran their row callbacks), and its updates come again.
    Resubscribed {
        /// Why the server ended the set: its message.
        ended: String,
    },
    /// It stays ended: its rows left the cache, and nothing more comes for it.
    Ended {
        /// Why the server ended the set: its message.
        ended: String,
        /// Why it was not subscribed again: a table whose rows the client cannot read in the
        /// new build, the new build's refusal of the queries, or the description that could
        /// not be read.
        reason: String,
    },
}

/// A table's row type as the client reads it.
#[derive(Clone, Debug)]
pub(crate) struct RowType {
    pub(crate) row_type: AlgebraicType,
    pub(crate) typespace: Typespace,
}

/// The row types the client reads, by table name.
pub(crate) type RowTypes = HashMap<String, RowType>;

/// The tables `queries` read: each name that follows `FROM` or `JOIN` (keywords in any
/// case), outside string literals, as the subscription subset writes them
/// (`docs/subscriptions.md`); a name in double quotes is read without them.
pub(crate) fn tables_read(queries: &[String]) -> Vec<String> {
    let mut tables: Vec<String> = Vec::new();
    for query in queries {
        let mut after_keyword = false;
        for token in tokens(query) {
            match token {
                Token::Word(word) => {
                    if after_keyword && !tables.iter().any(|table| *table == word) {
                        tables.push(word.to_owned());
                    }
                    after_keyword =
                        word.eq_ignore_ascii_case("from") || word.eq_ignore_ascii_case("join");
                }
                Token::Quoted(name) => {
                    if after_keyword && !tables.contains(&name) {
                        tables.push(name);
                    }
                    after_keyword = false;
                }
                Token::Other => after_keyword = false,
            }
        }
    }
    tables
}

/// A token of a query, as far as [`tables_read`] needs to tell them apart.
enum Token<'a> {
    /// A keyword or a name.
    Word(&'a str),
    /// A name in double quotes (`""` for a quote).
    Quoted(String),
    /// Anything else: a string or number literal, an operator, punctuation.
    Other,
}

/// The tokens of `query`; whitespace separates them and is not one.
fn tokens(query: &str) -> impl Iterator<Item = Token<'_>> {
    let mut rest = query;
    std::iter::from_fn(move || {
        rest = rest.trim_start();
        let first = rest.chars().next()?;
        let (token, length) = if first.is_alphabetic() || first == '_' {
            let length = rest
                .find(|c: char| !(c.is_alphanumeric() || c == '_'))
                .unwrap_or(rest.len());
            (Token::Word(&rest[..length]), length)
        } else if first == '\'' || first == '"' {
            let (text, length) = quoted(rest, first);
            let token = if first == '"' {
                Token::Quoted(text)
            } else {
                Token::Other
            };
            (token, length)
        } else {
            (Token::Other, first.len_utf8())
        };
        rest = &rest[length..];
        Some(token)
    })
}

/// The text of the literal that `rest` starts with, quoted by `quote` (doubled inside for
/// itself), and the literal's length; an unterminated one runs to the end.
fn quoted(rest: &str, quote: char) -> (String, usize) {
    let mut text = String::new();
    let mut chars = rest.char_indices().skip(1).peekable();
    while let Some((at, c)) = chars.next() {
        if c == quote {
            if chars.peek().is_some_and(|&(_, next)| next == quote) {
                chars.next();
            } else {
                return (text, at + c.len_utf8());
            }
        }
        text.push(c);
    }
    (text, rest.len())
}

/// Why the client cannot read the rows of `tables` as the new build `description` sends
/// them, if it cannot: a table whose row type the client knows (`known`) and which the new
/// build does not have or encodes otherwise. Tables of unknown row type are not checked.
pub(crate) fn unreadable(
    known: &RowTypes,
    description: &ModuleDescription,
    tables: &[String],
) -> Option<String> {
    let types = match description.typespace() {
        Ok(types) => types,
        Err(error) => {
            return Some(format!(
                "the new build's description does not read: {error}"
            ))
        }
    };
    tables.iter().find_map(|name| {
        let reads = known.get(name)?;
        let Some(table) = description.tables.iter().find(|table| table.name == *name) else {
            return Some(format!("the new build has no public table `{name}`"));
        };
        let same = types.parse(&table.row_type).is_ok_and(|row_type| {
            same_encoding(
                &reads.typespace,
                &reads.row_type,
                &types.typespace,
                &row_type,
            )
        });
        (!same).then(|| {
            format!(
                "table `{name}`'s rows are `{}` in the new build, which the client does not read \
                 as its row type: connect again with the new build's bindings",
                table.row_type
            )
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use wasmod_abi::{ModuleDef, TableDef};
    use wasmod_protocol::description::{describe, Tables};

    fn read(queries: &[&str]) -> Vec<String> {
        tables_read(
            &queries
                .iter()
                .map(|query| (*query).to_owned())
                .collect::<Vec<_>>(),
        )
    }

    #[test]
    fn the_tables_a_query_reads_follow_from_and_join() {
        assert_eq!(read(&["SELECT * FROM message"]), ["message"]);
        assert_eq!(
            read(&["select m.* from message m join user u on m.sender = u.identity"]),
            ["message", "user"]
        );
        assert_eq!(
            read(&[
                "SELECT a.* FROM a INNER JOIN b ON a.x = b.y WHERE a.z > 3",
                "SELECT * FROM a"
            ]),
            ["a", "b"],
            "each table once"
        );
        assert_eq!(read(&["SELECT * FROM \"odd\"\"name\""]), ["odd\"name"]);
    }

    #[test]
    fn words_in_literals_are_not_tables() {
        assert_eq!(
            read(&["SELECT * FROM note WHERE text = 'it''s FROM elsewhere' AND id > 0"]),
            ["note"]
        );
        assert_eq!(
            read(&["SELECT * FROM t WHERE name = 'unterminated FROM x"]),
            ["t"]
        );
        assert!(read(&["SELECT 1"]).is_empty());
    }

    const BEFORE: &[(&str, AlgebraicType)] =
        &[("id", AlgebraicType::U64), ("text", AlgebraicType::String)];
    const AFTER: &[(&str, AlgebraicType)] = &[
        ("id", AlgebraicType::U64),
        ("text", AlgebraicType::String),
        ("stars", AlgebraicType::U32),
    ];

    /// Table `note` of `columns`, in a typespace of its own.
    fn note(columns: &[(&str, AlgebraicType)]) -> (TableDef, Typespace) {
        let mut typespace = Typespace::default();
        let table = TableDef::of_columns(&mut typespace, "notes::Note", "note", columns);
        (table, typespace)
    }

    /// A module of one table `note` of `columns`, as a server describes it.
    fn described(columns: &[(&str, AlgebraicType)]) -> ModuleDescription {
        let (table, typespace) = note(columns);
        let def = ModuleDef {
            tables: vec![table],
            typespace,
            ..ModuleDef::default()
        };
        describe(&def, Tables::PublicOnly)
    }

    /// A client that reads `note` as rows of `columns`.
    fn known(columns: &[(&str, AlgebraicType)]) -> RowTypes {
        let (table, typespace) = note(columns);
        let row_type = RowType {
            row_type: table.row_type,
            typespace,
        };
        RowTypes::from_iter([("note".to_owned(), row_type)])
    }

    #[test]
    fn a_table_the_client_reads_must_encode_alike_in_the_new_build() {
        let note = ["note".to_owned()];
        assert_eq!(unreadable(&known(BEFORE), &described(BEFORE), &note), None);
        let changed = unreadable(&known(BEFORE), &described(AFTER), &note).expect("other columns");
        assert!(changed.contains("table `note`"), "{changed}");
        assert!(changed.contains("new build's bindings"), "{changed}");
        assert_eq!(
            unreadable(&RowTypes::default(), &described(AFTER), &note),
            None,
            "a table of unknown row type is not checked"
        );
        let gone = unreadable(&known(BEFORE), &described(BEFORE), &["user".to_owned()]);
        assert_eq!(gone, None, "the client knows no row type for `user`");
        let mut both = known(BEFORE);
        both.insert("user".to_owned(), both["note"].clone());
        let gone = unreadable(&both, &described(BEFORE), &["user".to_owned()]);
        assert_eq!(
            gone.as_deref(),
            Some("the new build has no public table `user`")
        );
    }
}
