//! Runs each measurement as many times as asked and prints its medians as a Markdown section
//! (for `benches/RESULTS.md`), as soon as it is done, so that a later failure loses nothing.
//! Progress goes to stderr, results to stdout.

use crate::delivery::{self, millis};
use crate::latency::quantile;
use crate::target::{self, Target};
use crate::{calls, crash, failover, idle, initial, replication, transfer, Paths, Settings};
use anyhow::{bail, Result};
use std::time::Duration;

/// The median of `values` (the mean of the middle two for an even count), 0 for none.
pub fn median(mut values: Vec<f64>) -> f64 {
    if values.is_empty() {
        return 0.0;
    }
    values.sort_by(f64::total_cmp);
    let middle = values.len() / 2;
    if values.len().is_multiple_of(2) {
        (values[middle - 1] + values[middle]) / 2.0
    } else {
        values[middle]
    }
}

fn mib(bytes: u64) -> String {
    format!("{:.1} MiB", bytes as f64 / (1 << 20) as f64)
}

/// What the run measures, and on what.
pub fn header(paths: &Paths, settings: &Settings) {
    let cores = std::thread::available_parallelism().map_or(0, usize::from);
    println!("# wasmod-loadgen");
    println!();
    println!("- wasmod: `{}`", paths.wasmod.display());
    println!("- module: `{}`", paths.module.display());
    println!(
        "- {cores} cores, shared by the server, the clients and the floors; medians of {} runs",
        settings.repeat
    );
    println!();
}

/// Deliveries per second at saturation and latency at half of it, for every target.
pub async fn delivery(paths: &Paths, settings: &Settings) -> Result<()> {
    let plan = &settings.delivery;
    let mut outcomes: Vec<Vec<delivery::Outcome>> = vec![Vec::new(); target::ALL.len()];
    for run in 1..=settings.repeat {
        for (index, &target) in target::ALL.iter().enumerate() {
            eprintln!("delivery, run {run}: {}", target.name());
            outcomes[index].push(delivery::measure(paths, target, plan).await?);
        }
    }
    let saturation = |index: usize| median(outcomes[index].iter().map(|o| o.saturation).collect());
    let latency = |index: usize, quantile: fn(&delivery::Step) -> Option<Duration>| {
        let values = outcomes[index]
            .iter()
            .filter_map(|o| quantile(&o.half))
            .map(|d| d.as_secs_f64())
            .collect();
        Some(Duration::from_secs_f64(median(values)))
    };
    let floor = saturation(1);
    println!(
        "## Delivery over loopback ({} clients, binary protocol)",
        plan.clients
    );
    println!();
    println!("| server | deliveries/s at saturation | ratio to the tungstenite floor | p50 at half | p99 at half | clients lost in the search |");
    println!("|---|---:|---:|---:|---:|---|");
    for (index, target) in target::ALL.iter().enumerate() {
        let lost = outcomes[index]
            .iter()
            .find_map(|o| o.first_loss.clone())
            .unwrap_or_else(|| "none".into());
        println!(
            "| {} | {:.0} | {:.2} | {} | {} | {} |",
            target.name(),
            saturation(index),
            saturation(index) / floor,
            millis(latency(index, |s| s.p50)),
            millis(latency(index, |s| s.p99)),
            lost
        );
    }
    println!();
    println!(
        "Goal: wasmod ≥ 250,000 deliveries/s and p99 ≤ 10 ms. tokio-websockets / tungstenite floor: {:.2}.",
        saturation(2) / floor
    );
    println!();
    Ok(())
}

/// Pipelined calls per second, for every connection count.
pub async fn calls(paths: &Paths, settings: &Settings) -> Result<()> {
    println!(
        "## Pipelined reducer calls (`send`, durability `group`, {} in flight per connection)",
        crate::caller::IN_FLIGHT
    );
    println!();
    println!("| connections | committed calls/s (median) | runs | busy answers |");
    println!("|---:|---:|---|---:|");
    for &connections in &settings.call_connections {
        let mut rates = Vec::new();
        let mut busy = 0;
        for run in 1..=settings.repeat {
            eprintln!("calls, run {run}: {connections} connections");
            let result = calls::measure(paths, connections, settings.call_run).await?;
            eprintln!(
                "  {:.0} committed/s ({:?})",
                result.per_second, result.calls
            );
            rates.push(result.per_second);
            busy += result.calls.busy;
        }
        let runs: Vec<String> = rates.iter().map(|rate| format!("{rate:.0}")).collect();
        println!(
            "| {connections} | {:.0} | {} | {busy} |",
            median(rates.clone()),
            runs.join(", ")
        );
    }
    println!();
    println!("Goal: ≥ 100,000 committed calls/s.");
    println!();
    Ok(())
}

/// The server's memory with idle subscribed connections, wasmod's and the floors'.
pub async fn idle(paths: &Paths, settings: &Settings) -> Result<()> {
    let mut results: Vec<(Target, idle::IdleMemory)> = Vec::new();
    for run in 1..=settings.repeat {
        for target in target::ALL {
            eprintln!(
                "idle, run {run}: {} connections to {}",
                settings.idle,
                target.name()
            );
            results.push((target, idle::measure(paths, target, settings.idle).await?));
        }
    }
    println!(
        "## {} idle subscribed connections: the server's memory",
        settings.idle
    );
    println!();
    println!("| server | VmRSS before | VmRSS after | VmHWM after | per connection |");
    println!("|---|---:|---:|---:|---:|");
    for (target, result) in &results {
        println!(
            "| {} | {} | {} | {} | {:.1} KiB |",
            target.name(),
            mib(result.before.resident),
            mib(result.after.resident),
            mib(result.after.peak),
            result.per_connection() / 1024.0
        );
    }
    let wasmod_after = median(
        results
            .iter()
            .filter(|(target, _)| *target == Target::Wasmod)
            .map(|(_, result)| result.after.resident as f64)
            .collect(),
    );
    println!();
    println!(
        "wasmod's median VmRSS after: {} ({:.0} MB). Goal: ≤ 200 MB.",
        mib(wasmod_after as u64),
        wasmod_after / 1e6
    );
    println!();
    Ok(())
}

/// Edge nodes: the primary's CPU per commit without and with subscribers on two edges, and
/// lag and deliveries on the edges against one node.
pub async fn replication(paths: &Paths, settings: &Settings) -> Result<()> {
    let plan = &settings.replication;
    let mut outcomes = Vec::new();
    for run in 1..=settings.repeat {
        eprintln!(
            "replication, run {run}: {} clients, {} commits/s",
            plan.clients, plan.rate
        );
        outcomes.push(replication::measure(paths, plan).await?);
    }
    let micros = |of: fn(&replication::Outcome) -> Duration| {
        median(
            outcomes
                .iter()
                .map(|outcome| of(outcome).as_secs_f64() * 1e6)
                .collect(),
        )
    };
    let quantile = |of: fn(&replication::Outcome) -> Option<Duration>| {
        let values = outcomes
            .iter()
            .filter_map(of)
            .map(|d| d.as_secs_f64())
            .collect();
        Some(Duration::from_secs_f64(median(values)))
    };
    let achieved = |of: fn(&replication::Outcome) -> f64| median(outcomes.iter().map(of).collect());
    println!(
        "## Edge nodes: {} subscribers, {} commits/s for {:?}",
        plan.clients, plan.rate, plan.run
    );
    println!();
    let (alone, with_edges) = (micros(|o| o.cpu_alone), micros(|o| o.cpu_with_edges));
    println!("| the primary's CPU per commit | µs |");
    println!("|---|---:|");
    println!("| no subscriber | {alone:.0} |");
    println!(
        "| {} subscribers on two edges | {with_edges:.0} |",
        plan.clients
    );
    println!();
    println!(
        "Ratio with subscribers on edges / without: {:.2}.",
        with_edges / alone.max(f64::MIN_POSITIVE)
    );
    println!();
    println!("| clients on | commit-to-receipt p50 | p99 | deliveries/s achieved |");
    println!("|---|---:|---:|---:|");
    println!(
        "| two edges | {} | {} | {:.0} |",
        millis(quantile(|o| o.edges.p50)),
        millis(quantile(|o| o.edges.p99)),
        achieved(|o| o.edges.achieved)
    );
    println!(
        "| one node (a wasmod serve of its own) | {} | {} | {:.0} |",
        millis(quantile(|o| o.one_node.p50)),
        millis(quantile(|o| o.one_node.p99)),
        achieved(|o| o.one_node.achieved)
    );
    println!();
    Ok(())
}

/// The initial rows of a large subscription.
pub async fn initial(paths: &Paths, settings: &Settings) -> Result<()> {
    let mut runs = Vec::new();
    for run in 1..=settings.repeat {
        eprintln!("initial, run {run}: {:?} rows", settings.initial_rows);
        runs.push(initial::measure(paths, &settings.initial_rows, settings.client_updates).await?);
    }
    println!("## Initial subscription (`SELECT * FROM message`)");
    println!();
    println!("| rows | time to the last byte (median) | server VmHWM while answering (median) | VmRSS before | filled in | answer | into the SDK client's cache (median) | client's peak growth (median) |");
    println!("|---:|---:|---:|---:|---:|---|---:|---:|");
    for (index, &rows) in settings.initial_rows.iter().enumerate() {
        let results: Vec<&initial::Initial> = runs.iter().map(|run| &run.sizes[index]).collect();
        let times: Vec<f64> = results
            .iter()
            .filter_map(|r| r.answer.as_ref().ok())
            .map(|(took, _)| took.as_secs_f64())
            .collect();
        let answer = match results.iter().find_map(|r| r.answer.as_ref().err()) {
            Some(refusal) if settings.refusal_fails => {
                bail!("a subscription to {rows} rows was refused: {refusal}")
            }
            Some(refusal) => format!("refused: {refusal}"),
            None => "all rows".into(),
        };
        if let Some((_, got)) = results
            .iter()
            .filter_map(|r| r.answer.as_ref().ok())
            .find(|(_, got)| *got != rows)
        {
            bail!("a subscription to {rows} rows received {got}");
        }
        let time = if times.is_empty() {
            "-".into()
        } else {
            millis(Some(Duration::from_secs_f64(median(times))))
        };
        let fill = median(results.iter().map(|r| r.fill.as_secs_f64()).collect());
        let cached: Vec<_> = results.iter().filter_map(|r| r.cached).collect();
        let (cached_time, cached_peak) = if cached.is_empty() {
            ("-".into(), "-".into())
        } else {
            (
                millis(Some(Duration::from_secs_f64(median(
                    cached.iter().map(|c| c.took.as_secs_f64()).collect(),
                )))),
                mib(median(cached.iter().map(|c| c.peak_growth as f64).collect()) as u64),
            )
        };
        println!(
            "| {rows} | {time} | {} | {} | {fill:.1} s | {answer} | {cached_time} | {cached_peak} |",
            mib(median(results.iter().map(|r| r.after.peak as f64).collect()) as u64),
            mib(median(results.iter().map(|r| r.before.resident as f64).collect()) as u64),
        );
    }
    println!();
    println!(
        "One SDK client applying {} commits of one row: {:.0} rows/s applied (median), the server committing {:.0}/s meanwhile.",
        settings.client_updates,
        median(runs.iter().map(|run| run.applied.client_rate).collect()),
        median(runs.iter().map(|run| run.applied.server_rate).collect()),
    );
    println!();
    Ok(())
}

/// Subscribers reconnecting after a SIGKILL, resumed against full rows.
pub async fn crash(paths: &Paths, settings: &Settings) -> Result<()> {
    let plan = settings.crash;
    let mut outcomes = Vec::new();
    for run in 1..=settings.repeat {
        eprintln!(
            "crash, run {run}: {} subscribers of {} rows, killed twice",
            plan.subscribers, plan.rows
        );
        outcomes.push(crash::measure(paths, plan).await?);
    }
    println!(
        "## Reconnecting after a SIGKILL ({} subscribers of `{}`, {} rows, binary protocol)",
        plan.subscribers,
        crate::sample::TABLE,
        plan.rows
    );
    println!();
    println!("| reconnection | answers `resumed` | bytes of the answers | per subscriber | first reconnection to last answer | restart (spawn to listening) |");
    println!("|---|---:|---:|---:|---:|---:|");
    let row = |name: &str, pick: fn(&crash::Outcome) -> crash::Reconnection| {
        let runs: Vec<crash::Reconnection> = outcomes.iter().map(pick).collect();
        let bytes = median(runs.iter().map(|run| run.bytes as f64).collect());
        let seconds = |of: fn(&crash::Reconnection) -> Duration| {
            median(runs.iter().map(|run| of(run).as_secs_f64()).collect())
        };
        let resumed = runs.iter().map(|run| run.resumed).min().unwrap_or_default();
        println!(
            "| {name} | {resumed} of {} | {:.1} KiB | {:.0} B | {:.0} ms | {:.0} ms |",
            plan.subscribers,
            bytes / 1024.0,
            bytes / plan.subscribers.max(1) as f64,
            seconds(|run| run.time) * 1e3,
            seconds(|run| run.restart) * 1e3,
        );
        (bytes, seconds(|run| run.time))
    };
    let (resumed_bytes, resumed_time) =
        row("resumed (`resume_from`: the last offset)", |o| o.resumed);
    let (full_bytes, full_time) = row("full rows (`resume_from: null`)", |o| o.full);
    println!();
    println!(
        "Resumed against full: {:.4} of the bytes, {:.2} of the time.",
        resumed_bytes / full_bytes.max(1.0),
        resumed_time / full_time.max(f64::MIN_POSITIVE)
    );
    println!();
    Ok(())
}

/// The failover run, once (a randomized run is repeated by its seed, not by `--repeat`).
pub async fn failover(paths: &Paths, settings: &Settings) -> Result<()> {
    let plan = &settings.failover;
    match plan.kills {
        Some(kills) => eprintln!("failover: {kills} kills of the primary"),
        None => eprintln!("failover: {:?} of random failures", plan.run),
    }
    let outcome = failover::measure(paths, plan).await?;
    let chaos = match plan.kills {
        Some(kills) => format!("{kills} kills of the primary"),
        None => format!("{:?} of random failures", plan.run),
    };
    println!(
        "## High availability: a replicated deployment under failures ({chaos}, seed {})",
        outcome.seed
    );
    println!();
    println!(
        "Three `wasmod serve --durability replicated` nodes of the quickstart (lease {}) over a 3-node NATS JetStream cluster; {} HTTP and {} WebSocket writers, {} subscribers; {:.0} s in all.",
        failover::LEASE,
        plan.http_writers,
        plan.socket_writers,
        plan.subscribers,
        outcome.took.as_secs_f64()
    );
    println!();
    println!("| failure | times |");
    println!("|---|---:|");
    for (action, count) in &outcome.actions {
        println!("| {action} | {count} |");
    }
    println!();
    let writes = &outcome.writes;
    let unknown: u64 = writes.unknown.values().sum();
    let reasons: Vec<String> = writes
        .unknown
        .iter()
        .map(|(reason, count)| format!("{reason}: {count}"))
        .collect();
    println!(
        "Writes: {} sent, {} acknowledged, {} refused `not_primary`, {unknown} of unknown outcome ({}).",
        writes.sent,
        writes.acknowledged,
        writes.refused,
        if reasons.is_empty() { "none".to_owned() } else { reasons.join("; ") }
    );
    println!(
        "At the end: {} rows, offset {} applied on every node; every acknowledged write in the table once, nothing never sent; {} subscribers holding the table's rows. Acknowledged writes lost: 0.",
        outcome.rows, outcome.applied, outcome.subscribers
    );
    println!();
    let failovers = &outcome.failovers;
    let at = |q: f64| millis(quantile(failovers, q));
    println!("| failover: SIGKILL of the primary to the first write the next one acknowledged | p50 | p99 | max | kills |");
    println!("|---|---:|---:|---:|---:|");
    println!(
        "| lease {} | {} | {} | {} | {} |",
        failover::LEASE,
        at(0.5),
        at(0.99),
        at(1.0),
        failovers.len()
    );
    println!();
    if outcome.failovers_missed > 0 {
        println!(
            "{} kills were followed by no acknowledged write before the next failure.",
            outcome.failovers_missed
        );
        println!();
    }
    println!("Goal (issue 40): p99 ≤ 5 s over ≥ 50 kills, no acknowledged write lost.");
    println!();
    Ok(())
}

/// The server's CPU per committed call, in microseconds, in the columns of the transfer
/// table: all, the module's thread, the durability thread, the log flusher, the async
/// runtime's threads (sockets, evaluation rounds on its blocking pool), the main thread (which
/// accepts connections) and the rest.
fn cpu_columns(outcome: &transfer::Outcome) -> [f64; 7] {
    let per_call = |time: Duration| time.as_secs_f64() * 1e6 / outcome.tally.committed as f64;
    let mut columns = [0.0; 7];
    columns[0] = per_call(outcome.cpu.total);
    for (name, &time) in &outcome.cpu.threads {
        let column = match name.as_str() {
            "wasmod-module" => 1,
            "wasmod-durable" => 2,
            // Thread names are cut to 15 bytes.
            "wasmod-log-flus" => 3,
            "tokio-rt-worker" | "tokio-runtime-w" => 4,
            "wasmod" => 5,
            _ => 6,
        };
        columns[column] += per_call(time);
    }
    columns
}

/// The transfer workload, for every transport, exponent, connection count and durability,
/// each beside the answering floor at the same connections.
pub async fn transfer(paths: &Paths, settings: &Settings) -> Result<()> {
    let sizes = &settings.transfer;
    println!(
        "## Transfers (keynote-2: {} accounts, {} in flight per WebSocket connection, {:?} per run)",
        sizes.accounts, sizes.in_flight, sizes.run
    );
    println!();
    println!("Server CPU in µs per committed call: all, then by thread (module, durability, log flusher, runtime workers, main, other); then the engine's (its three `nats-server`s together, durability `replicated` only).");
    println!();
    println!("| transport | α | connections | durability | committed/s (median) | runs | p50 | p99 | refused / busy | CPU µs | module | durable | flusher | runtime | main | other | engine µs | floor calls/s | / floor |");
    println!(
        "|---|---:|---:|---|---:|---|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
    );
    // (transport, α, connections, durability) → (committed/s, server CPU µs per call).
    let mut medians = Vec::new();
    for &connections in &sizes.connections {
        let mut floor = Vec::new();
        for run in 1..=settings.repeat {
            eprintln!("transfer, run {run}: the answering floor, {connections} connections");
            let plan = sizes.plan(connections, 0.0, transfer::Transport::Binary, "group");
            floor.push(transfer::measure_floor(paths, &plan).await?.per_second);
        }
        let floor = median(floor);
        for &transport in &sizes.transports {
            for &alpha in &sizes.alphas {
                for durability in &sizes.durabilities {
                    let plan = sizes.plan(connections, alpha, transport, durability);
                    let mut outcomes = Vec::new();
                    for run in 1..=settings.repeat {
                        eprintln!(
                            "transfer, run {run}: {}, α {alpha}, {connections} connections, durability {durability}",
                            transport.name()
                        );
                        let outcome = transfer::measure(paths, &plan).await?;
                        eprintln!(
                            "  {:.0} committed/s, p99 {:?}, {:.1} µs CPU per commit",
                            outcome.per_second,
                            outcome.p99,
                            cpu_columns(&outcome)[0]
                        );
                        outcomes.push(outcome);
                    }
                    let of = |value: fn(&transfer::Outcome) -> f64| {
                        median(outcomes.iter().map(value).collect())
                    };
                    let rate = of(|o| o.per_second);
                    let runs: Vec<String> = outcomes
                        .iter()
                        .map(|o| format!("{:.0}", o.per_second))
                        .collect();
                    let cpu: Vec<String> = (0..7)
                        .map(|column| {
                            let values = outcomes.iter().map(|o| cpu_columns(o)[column]);
                            format!("{:.1}", median(values.collect()))
                        })
                        .collect();
                    let refused: u64 = outcomes.iter().map(|o| o.tally.refused).sum();
                    let busy: u64 = outcomes.iter().map(|o| o.tally.busy).sum();
                    let engine: Vec<f64> = outcomes
                        .iter()
                        .filter_map(|o| {
                            let time = o.engine_cpu?;
                            Some(time.as_secs_f64() * 1e6 / o.tally.committed as f64)
                        })
                        .collect();
                    let engine = if engine.is_empty() {
                        "-".to_owned()
                    } else {
                        format!("{:.1}", median(engine))
                    };
                    println!(
                        "| {} | {alpha} | {connections} | {durability} | {rate:.0} | {} | {} | {} | {refused} / {busy} | {} | {engine} | {:.0} | {:.2} |",
                        transport.name(),
                        runs.join(", "),
                        millis(Some(Duration::from_secs_f64(of(|o| o.p50.as_secs_f64())))),
                        millis(Some(Duration::from_secs_f64(of(|o| o.p99.as_secs_f64())))),
                        cpu.join(" | "),
                        floor,
                        rate / floor,
                    );
                    let server_cpu = median(outcomes.iter().map(|o| cpu_columns(o)[0]).collect());
                    medians.push((
                        transport,
                        alpha,
                        connections,
                        durability.clone(),
                        rate,
                        server_cpu,
                    ));
                }
            }
        }
    }
    println!();
    println!("Every run ended with the balances adding up to what was seeded. Goals (binary WebSocket, `group`): ≥ 100,000 committed/s (floor of acceptable 62,000), p99 ≤ 20 ms, server CPU ≤ 10 µs per call (module ≤ 3 µs), ≤ 25 µs over HTTP, ≥ 0.5 × the floor.");
    println!();
    let group = |transport, alpha, connections| {
        medians.iter().find(|(t, a, c, d, _, _)| {
            (*t, *a, *c) == (transport, alpha, connections) && d == "group"
        })
    };
    let replicated = medians
        .iter()
        .filter(|(_, _, _, durability, _, _)| durability == transfer::REPLICATED);
    for (transport, alpha, connections, _, rate, cpu) in replicated {
        if let Some((_, _, _, _, group_rate, group_cpu)) = group(*transport, *alpha, *connections) {
            println!(
                "- `replicated` against `group`, {}, α {alpha}, {connections} connections: {:.2} of the committed calls/s, {:.2} × the server CPU per call.",
                transport.name(),
                rate / group_rate,
                cpu / group_cpu
            );
        }
    }
    if medians.iter().any(|m| m.3 == transfer::REPLICATED) {
        println!();
        println!("Goal (issue 40): `replicated` ≥ 0.5 × `group`'s committed calls/s on this machine, the engine's three servers on the same cores.");
        println!();
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::median;

    #[test]
    fn medians_of_odd_even_and_empty_lists() {
        assert_eq!(median(vec![3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(vec![4.0, 1.0, 3.0, 2.0]), 2.5);
        assert_eq!(median(Vec::new()), 0.0);
    }
}
