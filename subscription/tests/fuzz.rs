//! Property tests of the query parser against deep and wide texts: every kind of operator
//! (binary, comparison, logical, postfix, prefix, casts, calls, parentheses, lists), chained
//! from a few to tens of thousands of times, at every position a client can put an expression
//! (the projection, `WHERE`, either side of a comparison, `ON`, statements other than `SELECT`,
//! a second statement) and in a table's visibility filter.
//!
//! Each text is parsed on a thread with a 2 MiB stack, the size of a tokio worker's: a text
//! that made the parser, or anything walking its syntax tree, recurse once per operator
//! overflows that stack and aborts this test binary (as it aborted the server). Each must be
//! answered (accepted, or refused with a `QueryError`), and a text over the token bound must
//! be refused for it. `WASMOD_FUZZ_CASES` sets the number of cases (see `docs/testing.md`).

#[path = "support/owners.rs"]
mod owners;
#[path = "support/players.rs"]
mod players;

use proptest::prelude::*;
use sqlparser::dialect::GenericDialect;
use sqlparser::tokenizer::{Token, Tokenizer};
use std::sync::Arc;
use wasmod_fuzzing::config;
use wasmod_subscription::{Catalog, Query, QueryError, MAX_QUERY_LEN, MAX_QUERY_TOKENS};

/// The stack of the threads that parse queries in the server (tokio's workers).
const STACK: usize = 2 << 20;

/// How an expression grows: `first`, then `step` repeated, then `last`, then `close` as
/// many times as `step` (to close what the steps opened).
#[derive(Clone, Copy, Debug)]
struct Growth {
    first: &'static str,
    step: &'static str,
    last: &'static str,
    close: &'static str,
}

const fn chain(first: &'static str, step: &'static str) -> Growth {
    Growth {
        first,
        step,
        last: "",
        close: "",
    }
}

const fn nest(step: &'static str, last: &'static str, close: &'static str) -> Growth {
    Growth {
        first: "",
        step,
        last,
        close,
    }
}

/// Every kind of operator and nesting the parser reads: left-nested chains of binary and
/// postfix operators (read in a loop, built as deep as they are long), prefix chains, calls,
/// casts, parentheses (read recursively, bounded by the parser), and wide lists.
const GROWTHS: &[Growth] = &[
    chain("1", " + 1"),
    chain("1", " - 1"),
    chain("1", " * 2"),
    chain("1", " / 2"),
    chain("1", " % 2"),
    chain("'a'", " || 'a'"),
    chain("id", " = 1"),
    chain("id", " <> 1"),
    chain("id", " < 1"),
    chain("id = 1", " AND id = 1"),
    chain("id = 1", " OR id = 2"),
    chain("id = 1", " AND id = 1 OR id = 2"),
    chain("id", " IS NULL"),
    chain("id", " IS NOT TRUE"),
    chain("id", "::int"),
    chain("id", " COLLATE c"),
    chain("id", " LIKE 'a'"),
    chain("id", " BETWEEN 1 AND 2"),
    chain("id", " IN (1)"),
    chain("id", "[1]"),
    chain("id", " AT TIME ZONE 'UTC'"),
    chain("id IN (1", ", 1"),
    chain("(1", ", 1"),
    chain("f(1", ", 1"),
    nest("- ", "1", ""),
    nest("+ ", "1", ""),
    nest("NOT ", "id", ""),
    nest("~ ", "1", ""),
    nest("(", "1", ")"),
    nest("f(", "1", ")"),
    nest("CAST(", "1", " AS int)"),
    nest("(SELECT ", "1", ")"),
    nest("CASE WHEN id = 1 THEN ", "1", " END"),
];

/// An expression of `growth` with `n` steps. (The lists, `(1, 1, …`, are left open: an
/// unclosed text must be answered too.)
fn expression(growth: Growth, n: usize) -> String {
    let mut text = String::from(growth.first);
    text.push_str(&growth.step.repeat(n));
    text.push_str(growth.last);
    text.push_str(&growth.close.repeat(n));
    text
}

/// Every position of a query text where a client puts an expression `{}`.
const POSITIONS: &[&str] = &[
    "SELECT * FROM player WHERE {}",
    "SELECT * FROM player WHERE id = {}",
    "SELECT * FROM player WHERE {} = id",
    "SELECT * FROM player WHERE id = 1 AND ({})",
    "SELECT {} FROM player",
    "SELECT * FROM player JOIN item ON {}",
    "SELECT item.* FROM item JOIN player ON item.holder = player.id WHERE {}",
    "DELETE FROM player WHERE {}",
    "UPDATE player SET id = {}",
    "INSERT INTO player VALUES ({})",
    "SELECT * FROM player WHERE id = 1; SELECT * FROM player WHERE {}",
    "{}",
];

/// Runs `parse` on a thread with the server's stack and gives its answer.
fn on_a_server_stack<T: Send + 'static>(parse: impl FnOnce() -> T + Send + 'static) -> T {
    std::thread::Builder::new()
        .stack_size(STACK)
        .spawn(parse)
        .expect("a thread")
        .join()
        .expect("the parser answers without a panic")
}

/// The tokens of `text` that count against the bound: all but whitespace and comments.
fn counted_tokens(text: &str) -> usize {
    Tokenizer::new(&GenericDialect {}, text)
        .tokenize()
        .map_or(0, |tokens| {
            tokens
                .iter()
                .filter(|token| !matches!(token, Token::Whitespace(_)))
                .count()
        })
}

/// The answer to `text` as a query, and, when a text is far over the bound, that the answer is
/// the refusal for it.
fn check_query(text: String) -> Result<(), TestCaseError> {
    let catalog = Arc::new(Catalog::new(&players::module()).expect("no visibility filters"));
    let length = text.len();
    let oversized = length > MAX_QUERY_LEN || counted_tokens(&text) > MAX_QUERY_TOKENS;
    let answer = on_a_server_stack(move || Query::parse(&catalog, &text).map(drop));
    if oversized {
        let refused = answer.expect_err("a text over the bounds is refused");
        prop_assert!(
            matches!(&refused, QueryError::Unsupported(what)
                if what.contains("tokens") || what.contains("bytes")),
            "refused for its size: {refused}"
        );
    }
    Ok(())
}

/// A step count from 0 to 40,000, most of them small enough to reach the parser and some far
/// past the token bound.
fn steps() -> impl Strategy<Value = usize> {
    prop_oneof![0usize..64, 64usize..2_000, 2_000usize..40_000]
}

proptest! {
    #![proptest_config(config(96))]

    #[test]
    fn deep_and_wide_queries_are_answered(
        growth in proptest::sample::select(GROWTHS),
        position in proptest::sample::select(POSITIONS),
        n in steps(),
    ) {
        check_query(position.replace("{}", &expression(growth, n)))?;
    }

    #[test]
    fn deep_and_wide_visibility_filters_are_answered(
        growth in proptest::sample::select(GROWTHS),
        n in steps(),
    ) {
        let filter = expression(growth, n);
        let oversized = filter.len() > MAX_QUERY_LEN || counted_tokens(&filter) > MAX_QUERY_TOKENS;
        let mut def = players::module();
        def.tables[0].visibility = Some(filter);
        let answer = on_a_server_stack(move || Catalog::new(&def).map(drop).map_err(|error| error.to_string()));
        if oversized {
            let refused = answer.expect_err("a filter over the bounds is refused");
            prop_assert!(refused.contains("tokens") || refused.contains("bytes"), "{refused}");
        }
    }
}

/// The reproduction of the report: 3,000 terms of `1+1+…` aborted the server, on either side
/// of a comparison, in a `DELETE` as in a `SELECT`; 2,000 survived. Every growth at a fixed,
/// large count, in every position, is answered.
#[test]
fn every_growth_in_every_position_at_the_reported_depth_is_answered() {
    for growth in GROWTHS {
        for position in POSITIONS {
            for n in [3_000, 32_000] {
                check_query(position.replace("{}", &expression(*growth, n)))
                    .unwrap_or_else(|error| panic!("{growth:?} × {n} in {position}: {error}"));
            }
        }
    }
}

/// Just under the token bound, a chain is still parsed (and its tree dropped) on the server's
/// stack: the bound is not so high that what it lets in overflows.
#[test]
fn a_chain_just_under_the_token_bound_is_answered_on_the_servers_stack() {
    for growth in GROWTHS {
        let per_step = counted_tokens(growth.step) + counted_tokens(growth.close);
        let n = (MAX_QUERY_TOKENS - 32) / per_step;
        let text = format!("SELECT * FROM player WHERE id = {}", expression(*growth, n));
        let tokens = counted_tokens(&text);
        assert!(
            (MAX_QUERY_TOKENS * 3 / 4..=MAX_QUERY_TOKENS).contains(&tokens),
            "{growth:?}: {tokens} tokens"
        );
        let catalog = Arc::new(Catalog::new(&players::module()).expect("no filters"));
        let answer = on_a_server_stack(move || Query::parse(&catalog, &text).map(drop));
        if let Err(QueryError::Unsupported(what)) = &answer {
            assert!(!what.contains("tokens"), "{growth:?} × {n}: {what}");
        }
    }
}
