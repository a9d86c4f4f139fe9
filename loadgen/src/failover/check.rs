//! The checks at the end of the failover run, and the failover times.

use super::nodes::{Nodes, NODES};
use super::subscribers::{Rows, Subscriber};
use super::writers::Ledger;
use crate::deployment::health;
use crate::http::Http;
use anyhow::{bail, Context, Result};
use futures_util::future::join_all;
use hyper::StatusCode;
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

/// How often the nodes and the subscribers are looked at while waiting for them to agree.
const POLL: Duration = Duration::from_millis(200);

/// Rows per page of `GET /v1/tables/message`.
const PAGE: usize = 10_000;

/// How many examples a failed check names.
const EXAMPLES: usize = 5;

/// Waits until every node has applied the same offset and holds the same rows, at most
/// `patience`; those rows and that offset.
pub async fn converge(nodes: &Nodes, patience: Duration) -> Result<(Rows, u64)> {
    let started = Instant::now();
    loop {
        let applied: Vec<Option<u64>> = join_all(
            nodes
                .addresses()
                .iter()
                .map(|address| async { health(address).await?["cluster"]["applied"].as_u64() }),
        )
        .await;
        let agreed = applied
            .iter()
            .all(|offset| offset.is_some() && *offset == applied[0]);
        let mut tables = Vec::new();
        if agreed {
            for address in nodes.addresses() {
                tables.push(table(address).await?);
            }
            // The offsets again: a commit between the readings (a client's connection) would
            // make equal tables of different moments.
            let again: Vec<Option<u64>> =
                join_all(nodes.addresses().iter().map(|address| async {
                    health(address).await?["cluster"]["applied"].as_u64()
                }))
                .await;
            if again == applied && tables.iter().all(|rows| *rows == tables[0]) {
                let offset = applied[0].unwrap_or_default();
                return Ok((tables.swap_remove(0), offset));
            }
        }
        if started.elapsed() > patience {
            let rows: Vec<usize> = tables.iter().map(BTreeMap::len).collect();
            bail!(
                "the {NODES} nodes do not agree after {patience:?}: applied offsets {applied:?}, \
                 rows {rows:?}"
            );
        }
        tokio::time::sleep(POLL).await;
    }
}

/// The `message` table of the node at `address`, read page by page (`GET /v1/tables`).
async fn table(address: &str) -> Result<Rows> {
    let mut http = Http::connect(address).await?;
    let mut rows = Rows::new();
    let mut cursor: Option<String> = None;
    loop {
        let path = match &cursor {
            None => format!("/v1/tables/message?limit={PAGE}"),
            Some(cursor) => format!("/v1/tables/message?limit={PAGE}&cursor={cursor}"),
        };
        let (status, body) = http.get(&path).await?;
        if status != StatusCode::OK {
            bail!(
                "GET {path} on {address}: {status} {}",
                String::from_utf8_lossy(&body)
            );
        }
        let page: serde_json::Value = serde_json::from_slice(&body).context("a page's JSON")?;
        for row in page["rows"].as_array().context("a page without rows")? {
            // A u64 may come as a number or, beyond 2^53, a string (docs/json.md).
            let id = row["id"]
                .as_u64()
                .or_else(|| row["id"].as_str()?.parse().ok())
                .with_context(|| format!("a row without an id: {row}"))?;
            let text = row["text"].as_str().context("a row without a text")?;
            rows.insert(id, text.to_owned());
        }
        match page["next_cursor"].as_str() {
            Some(next) => cursor = Some(next.to_owned()),
            None => return Ok(rows),
        }
    }
}

/// Checks the table against the writes: every acknowledged write in it exactly once, nothing
/// in it that was never sent.
pub fn writes(table: &Rows, ledger: &Ledger) -> Result<()> {
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for text in table.values() {
        *counts.entry(text).or_default() += 1;
    }
    let lost: Vec<&String> = ledger
        .acknowledged
        .iter()
        .filter(|text| !counts.contains_key(text.as_str()))
        .collect();
    let twice: Vec<(&&str, &usize)> = counts.iter().filter(|(_, &count)| count > 1).collect();
    let never_sent: Vec<&&str> = counts
        .keys()
        .filter(|text| !ledger.sent.contains(**text))
        .collect();
    if !lost.is_empty() || !twice.is_empty() || !never_sent.is_empty() {
        bail!(
            "of {} acknowledged writes, {} are not in the table (such as {:?}); {} texts are in \
             it more than once (such as {:?}); {} are in it and were never sent (such as {:?})",
            ledger.acknowledged.len(),
            lost.len(),
            &lost[..lost.len().min(EXAMPLES)],
            twice.len(),
            &twice[..twice.len().min(EXAMPLES)],
            never_sent.len(),
            &never_sent[..never_sent.len().min(EXAMPLES)],
        );
    }
    Ok(())
}

/// Waits until every subscriber holds exactly `table`'s rows, at most `patience` (a
/// subscriber that lost its node reconnects after its backoff, at most 5 s).
pub async fn subscribers(
    subscribers: &[Subscriber],
    table: &Rows,
    patience: Duration,
) -> Result<()> {
    let started = Instant::now();
    loop {
        let behind: Vec<(usize, Rows)> = subscribers
            .iter()
            .enumerate()
            .map(|(index, subscriber)| (index, subscriber.rows()))
            .filter(|(_, rows)| rows != table)
            .collect();
        let Some((index, rows)) = behind.first() else {
            return Ok(());
        };
        if started.elapsed() > patience {
            let missing = table.keys().filter(|id| !rows.contains_key(id)).count();
            let extra = rows.keys().filter(|id| !table.contains_key(id)).count();
            let different = rows
                .iter()
                .filter(|(id, text)| table.get(id).is_some_and(|row| row != *text))
                .count();
            bail!(
                "{} of {} subscribers do not hold the table's {} rows after {patience:?}: \
                 subscriber {index} lacks {missing}, has {extra} the table has not, and {different} \
                 that differ",
                behind.len(),
                subscribers.len(),
                table.len()
            );
        }
        tokio::time::sleep(POLL).await;
    }
}

/// Each kill's failover time: from the kill to the first acknowledgement of a write sent
/// after it (a write sent before could have been answered by the killed primary just before
/// it died), ascending; and how many kills no such acknowledgement followed before the next.
pub fn failovers(kills: &[Instant], acks: &[(Instant, Instant)]) -> (Vec<Duration>, usize) {
    let mut times = Vec::new();
    let mut missed = 0;
    for (index, &kill) in kills.iter().enumerate() {
        let next = kills.get(index + 1).copied();
        let first = acks
            .iter()
            .filter(|(sent, acked)| *sent >= kill && next.is_none_or(|next| *acked < next))
            .map(|(_, acked)| *acked)
            .min();
        match first {
            Some(acked) => times.push(acked - kill),
            None => missed += 1,
        }
    }
    times.sort_unstable();
    (times, missed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failover_ends_at_the_first_write_sent_after_the_kill_and_acknowledged() {
        let t = Instant::now();
        let at = |ms: u64| t + Duration::from_millis(ms);
        let kills = [at(1000), at(5000), at(9000)];
        let acks = [
            // Sent before the first kill, answered after: not the new primary's.
            (at(990), at(1001)),
            (at(1100), at(2500)),
            (at(1200), at(2400)),
            (at(5100), at(5900)),
            // Nothing acknowledged after the last kill.
        ];
        let (times, missed) = failovers(&kills, &acks);
        assert_eq!(
            times,
            vec![Duration::from_millis(900), Duration::from_millis(1400)]
        );
        assert_eq!(missed, 1);
    }

    #[test]
    fn writes_lost_duplicated_or_never_sent_fail_the_check() {
        let mut ledger = Ledger::default();
        for text in ["a", "b", "c"] {
            ledger.sent.insert(text.into());
        }
        ledger.acknowledged.insert("a".into());
        let table = |rows: &[(u64, &str)]| -> Rows {
            rows.iter()
                .map(|&(id, text)| (id, text.to_owned()))
                .collect()
        };
        // "b" is not acknowledged (its outcome unknown): it may be there or not.
        assert!(writes(&table(&[(1, "a"), (2, "b")]), &ledger).is_ok());
        assert!(writes(&table(&[(1, "a")]), &ledger).is_ok());
        assert!(writes(&table(&[(2, "b")]), &ledger).is_err(), "a lost");
        assert!(
            writes(&table(&[(1, "a"), (2, "a")]), &ledger).is_err(),
            "a twice"
        );
        assert!(
            writes(&table(&[(1, "a"), (3, "z")]), &ledger).is_err(),
            "z never sent"
        );
    }
}
