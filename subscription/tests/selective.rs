//! Selective evaluation: a commit evaluates only the queries that its rows' values can
//! affect, however many queries there are.

#[path = "support/owners.rs"]
mod owners;
#[path = "support/players.rs"]
mod players;

use owners::{insert_one, item, owner, subscribed, subscribed_through_visibility, ITEM, OTHER};
use wasmod_abi::Value;
use wasmod_subscription::Query;

/// Subscriptions, one per owner, with distinct owners.
const OWNERS: u32 = 100_000;

#[test]
fn one_row_evaluates_only_the_queries_of_its_value() {
    let (datastore, _, mut subscriptions, ids) = subscribed(OWNERS);
    assert_eq!(subscriptions.len(), OWNERS as usize);

    let changes = insert_one(&datastore, 1, owner(42));
    let deltas = subscriptions.evaluate(&changes, &datastore.begin_read());
    assert_eq!(subscriptions.evaluations(), 1, "one query has owner 42");
    assert_eq!(deltas.len(), 1);
    let (id, delta) = &deltas[0];
    assert_eq!(*id, ids[42]);
    let delta = delta.as_ref().expect("evaluates");
    assert_eq!(delta.inserted, changes.tables[0].inserted);
    assert!(delta.deleted.is_empty());

    // An update that changes the owner leaves one query and enters another.
    let mut tx = datastore.begin_mut();
    tx.update_by_unique(ITEM, 0, &item(1, owner(43), "sword"))
        .expect("item 1 exists");
    let changes = tx.commit();
    let deltas = subscriptions.evaluate(&changes, &datastore.begin_read());
    assert_eq!(subscriptions.evaluations(), 3);
    let touched: Vec<_> = deltas.iter().map(|(id, _)| *id).collect();
    assert_eq!(touched, [ids[42], ids[43]]);

    // A commit of a table that no query reads evaluates nothing.
    let mut tx = datastore.begin_mut();
    let mut row = Value::Product(vec![Value::U64(5)]).to_bytes();
    tx.insert(OTHER, &mut row).expect("a new row");
    let changes = tx.commit();
    assert!(subscriptions
        .evaluate(&changes, &datastore.begin_read())
        .is_empty());
    assert_eq!(subscriptions.evaluations(), 3);
}

#[test]
fn a_visibility_filters_equality_routes_its_queries_as_a_written_one_does() {
    let (datastore, _, mut subscriptions, ids) = subscribed_through_visibility(OWNERS);
    assert_eq!(subscriptions.len(), OWNERS as usize, "one query per owner");
    let changes = insert_one(&datastore, 1, owner(42));
    let deltas = subscriptions.evaluate(&changes, &datastore.begin_read());
    assert_eq!(subscriptions.evaluations(), 1, "one query has owner 42");
    let touched: Vec<_> = deltas.iter().map(|(id, _)| *id).collect();
    assert_eq!(touched, [ids[42]]);
}

#[test]
fn more_conditions_beside_the_equality_are_checked_on_the_routed_rows() {
    let (datastore, catalog, mut subscriptions, _) = subscribed(1_000);
    let swords = Query::parse(
        &catalog,
        "SELECT * FROM item WHERE label = 'sword' AND owner = :sender",
    )
    .expect("a query of the subset");
    let mine = subscriptions
        .add(swords.bind(owner(7)))
        .expect("one catalog");
    let before = subscriptions.evaluations();

    let mut tx = datastore.begin_mut();
    tx.insert(ITEM, &mut item(1, owner(7), "shield"))
        .expect("a new item");
    let changes = tx.commit();
    let deltas = subscriptions.evaluate(&changes, &datastore.begin_read());
    assert_eq!(
        subscriptions.evaluations() - before,
        2,
        "both queries of owner 7"
    );
    assert!(deltas.iter().all(|(id, _)| *id != mine), "not a sword");

    let changes = insert_one(&datastore, 2, owner(7));
    let deltas = subscriptions.evaluate(&changes, &datastore.begin_read());
    assert!(deltas.iter().any(|(id, _)| *id == mine));
}

#[test]
fn subscribers_of_one_query_share_it_until_the_last_leaves() {
    let (_, catalog, mut subscriptions, ids) = subscribed(10);
    let again = Query::parse(&catalog, "SELECT item.* FROM item WHERE :sender = owner")
        .expect("a query of the subset");
    assert_eq!(subscriptions.add(again.bind(owner(3))), Ok(ids[3]));
    assert_eq!(subscriptions.subscribers(ids[3]), 2);
    assert_eq!(subscriptions.len(), 10);
    assert_eq!(subscriptions.remove(ids[3]), Some(1));
    assert_eq!(subscriptions.remove(ids[3]), Some(0));
    assert_eq!(subscriptions.remove(ids[3]), None);
    assert_eq!(subscriptions.len(), 9);
    assert!(subscriptions.query(ids[3]).is_none());
    // The id is free again, for the next new query.
    assert_eq!(subscriptions.add(again.bind(owner(99))), Ok(ids[3]));
}

#[test]
fn joins_that_differ_by_an_equality_are_evaluated_for_the_values_a_commit_touches() {
    let (datastore, mut subscriptions, ids) = players::subscribed(10_000);

    // A new item of player 42: only the query of player 42's identity is evaluated.
    let changes = players::new_item(&datastore, 7, 42);
    let deltas = subscriptions.evaluate(&changes, &datastore.begin_read());
    assert_eq!(subscriptions.evaluations(), 1);
    assert_eq!(deltas.len(), 1);
    assert_eq!(deltas[0].0, ids[42]);

    // Player 43 changes hands to player 44's identity: the queries of both are evaluated; 44's
    // gains player 43's item, 43's loses it.
    let mut tx = datastore.begin_mut();
    let row = Value::Product(vec![Value::U64(43), Value::Identity(owner(44))]).to_bytes();
    tx.update_by_unique(players::PLAYER, 0, &row)
        .expect("player 43 exists");
    let changes = tx.commit();
    let deltas = subscriptions.evaluate(&changes, &datastore.begin_read());
    assert_eq!(subscriptions.evaluations(), 3);
    let touched: Vec<_> = deltas.iter().map(|(id, _)| *id).collect();
    assert_eq!(touched, [ids[43], ids[44]]);
}

/// An evaluation within a budget stops at the first row beyond it, whichever bound it is, so
/// that refusing a query costs at most the budget; within it, it returns what `evaluate` does
/// and draws what it read.
#[test]
fn an_evaluation_within_a_budget_stops_at_its_first_row_beyond() {
    use wasmod_subscription::{Budget, BudgetError};
    let (datastore, catalog, _, _) = subscribed(0);
    for id in 0..1_000 {
        insert_one(&datastore, id, owner((id % 10) as u32));
    }
    let tables = datastore.begin_read();
    let every = Query::parse(&catalog, "SELECT * FROM item")
        .expect("a query of the subset")
        .bind(owner(0));
    let mut budget = Budget::new(100, usize::MAX);
    assert_eq!(
        every.evaluate_within(&tables, &mut budget),
        Err(BudgetError::Reads)
    );
    assert_eq!(budget.reads(), 0, "it read its 100 rows, and no more");
    let mut budget = Budget::new(usize::MAX, 10);
    assert_eq!(
        every.evaluate_within(&tables, &mut budget),
        Err(BudgetError::Rows)
    );
    assert_eq!(
        usize::MAX - budget.reads(),
        11,
        "it stopped at the 11th row"
    );
    // Through the owner's index, a query of one owner reads only that owner's 100 rows: two
    // reads each, the row and its one comparison.
    let one = Query::parse(&catalog, "SELECT * FROM item WHERE owner = :sender")
        .expect("a query of the subset")
        .bind(owner(3));
    let mut budget = Budget::new(250, 100);
    let rows = one.evaluate_within(&tables, &mut budget).expect("within");
    assert_eq!(rows.len(), 100);
    assert_eq!((budget.reads(), budget.rows()), (50, 0));
    let mut all = one.evaluate(&tables).expect("evaluates");
    let mut rows = rows;
    all.sort();
    rows.sort();
    assert_eq!(rows, all);
}

/// What a read of the default `--max-subscription-reads` (1,000,000 reads) costs: the time
/// of a read (a row, or a comparison checked on it) over 100,000 rows, keeping none of them
/// (filters no row passes: one comparison, then 64 `OR`ed) and every one. A measurement, run by
/// hand in release:
/// `cargo test --release -p wasmod-subscription --test selective -- --ignored --nocapture a_read`.
#[test]
#[ignore = "a measurement, run by hand"]
fn a_read() {
    use std::time::Instant;
    use wasmod_subscription::Budget;
    const ROWS: u64 = 100_000;
    let (datastore, catalog, _, _) = subscribed(0);
    let mut tx = datastore.begin_mut();
    for id in 0..ROWS {
        let mut row = item(id, owner((id % 1000) as u32), "a sword of the reproduction");
        tx.insert(ITEM, &mut row).expect("a new item");
    }
    tx.commit();
    let tables = datastore.begin_read();
    let many: Vec<String> = (0..64).map(|n| format!("label = 'nothing {n}'")).collect();
    let many = format!("SELECT * FROM item WHERE {}", many.join(" OR "));
    for text in [
        "SELECT * FROM item",
        "SELECT * FROM item WHERE label = 'nothing'",
        many.as_str(),
    ] {
        let query = Query::parse(&catalog, text)
            .expect("a query")
            .bind(owner(0));
        let (mut best, mut reads) = (std::time::Duration::MAX, 0);
        for _ in 0..5 {
            let started = Instant::now();
            let mut budget = Budget::unlimited();
            let rows = query.evaluate_within(&tables, &mut budget).expect("within");
            best = best.min(started.elapsed());
            reads = usize::MAX - budget.reads();
            std::hint::black_box(rows);
        }
        let per_read = best.as_nanos() as f64 / reads as f64;
        println!(
            "{text:.60}: {reads} reads in {best:?}, {per_read:.1} ns a read \
             (1,000,000 reads in {per_read:.1} ms)"
        );
    }
}
