//! The chaos of the failover run: at random moments, one failure at a time, each waited out
//! before the next, from a seeded generator so that a run's choices (which action, which
//! node, how long each wait) can be made again with its seed. The timing of the processes
//! themselves is not replayed: a seed replays what was done, not when the engine answered.

use super::nodes::{Nodes, NODES};
use super::{Alarm, Plan, PATIENCE};
use crate::transfer::zipf::Random;
use anyhow::{Context, Result};
use std::collections::BTreeMap;
use std::fmt;
use std::ops::Range;
use std::time::{Duration, Instant};

/// One failure, and its repair.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Action {
    /// SIGKILL the primary; once another node is the primary, a while later, start it again
    /// (it comes back as a standby).
    KillPrimary,
    /// SIGSTOP the primary until another node is the primary and a while longer, then
    /// SIGCONT: it must find itself deposed and come back as a standby.
    PausePrimary,
    /// SIGKILL a standby, and start it again a while later.
    KillStandby,
    /// SIGKILL one of the engine's three servers, and start it again a while later.
    KillEngineNode,
}

impl Action {
    /// Each action, and how often the randomized run draws it (out of the weights' sum).
    const WEIGHTS: [(Action, u64); 4] = [
        (Action::KillPrimary, 35),
        (Action::PausePrimary, 25),
        (Action::KillStandby, 20),
        (Action::KillEngineNode, 20),
    ];

    /// An action drawn with `random`, by [`Action::WEIGHTS`].
    fn draw(random: &mut Random) -> Self {
        let total: u64 = Self::WEIGHTS.iter().map(|(_, weight)| weight).sum();
        let mut point = random.next_u64() % total;
        for (action, weight) in Self::WEIGHTS {
            if point < weight {
                return action;
            }
            point -= weight;
        }
        Action::KillPrimary
    }
}

impl fmt::Display for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::KillPrimary => "primary killed",
            Self::PausePrimary => "primary paused past its lease",
            Self::KillStandby => "standby killed",
            Self::KillEngineNode => "engine node killed",
        })
    }
}

/// What the chaos did.
#[derive(Debug, Default)]
pub struct Record {
    /// How many times each action was taken.
    pub actions: BTreeMap<Action, usize>,
    /// When each primary was killed.
    pub kills: Vec<Instant>,
}

/// How long the load runs undisturbed between two actions.
const QUIET: Range<Duration> = Duration::from_millis(1000)..Duration::from_millis(3000);

/// How long a killed node stays down (once the deployment has a primary again).
const DOWN: Range<Duration> = Duration::from_millis(500)..Duration::from_millis(3000);

/// How long a paused primary stays paused once another node is the primary.
const PAUSED: Range<Duration> = Duration::ZERO..Duration::from_millis(2000);

/// How long a killed engine server stays down.
const ENGINE_DOWN: Range<Duration> = Duration::from_millis(1000)..Duration::from_millis(4000);

/// Runs the chaos against `nodes` until the plan's time is up (or its kills are done): with
/// [`Plan::kills`], only [`Action::KillPrimary`]. Stops early, with the alarm's error, when
/// a writer or a subscriber raised it.
pub async fn run(nodes: &mut Nodes, plan: &Plan, seed: u64, alarm: &Alarm) -> Result<Record> {
    let mut random = Random::new(seed);
    let mut record = Record::default();
    let started = Instant::now();
    loop {
        let done = match plan.kills {
            Some(kills) => record.kills.len() >= kills,
            None => started.elapsed() >= plan.run,
        };
        if done {
            return Ok(record);
        }
        alarm.check()?;
        tokio::time::sleep(between(&mut random, QUIET)).await;
        alarm.check()?;
        let action = match plan.kills {
            Some(_) => Action::KillPrimary,
            None => Action::draw(&mut random),
        };
        let at = started.elapsed();
        take(nodes, action, &mut random, &mut record)
            .await
            .with_context(|| format!("{action}, {at:.1?} into the chaos"))?;
        eprintln!(
            "failover: {at:>7.1?} {action} (back after {:.1?})",
            started.elapsed() - at
        );
        *record.actions.entry(action).or_default() += 1;
    }
}

/// Takes `action`, and waits until it is repaired: every process running again and a
/// primary elected.
async fn take(
    nodes: &mut Nodes,
    action: Action,
    random: &mut Random,
    record: &mut Record,
) -> Result<()> {
    let primary = nodes.wait_for_primary(None, PATIENCE).await?;
    match action {
        Action::KillPrimary => {
            record.kills.push(Instant::now());
            nodes.kill(primary);
            nodes.wait_for_primary(Some(primary), PATIENCE).await?;
            tokio::time::sleep(between(random, DOWN)).await;
            nodes.start_node(primary).await?;
            nodes.wait_for_role(primary, "standby", PATIENCE).await?;
        }
        Action::PausePrimary => {
            nodes.signal(primary, libc::SIGSTOP)?;
            let next = nodes.wait_for_primary(Some(primary), PATIENCE).await;
            if next.is_ok() {
                tokio::time::sleep(between(random, PAUSED)).await;
            }
            nodes.signal(primary, libc::SIGCONT)?;
            next?;
            nodes.wait_for_role(primary, "standby", PATIENCE).await?;
        }
        Action::KillStandby => {
            let standby = (primary + 1 + (random.next_u64() % (NODES as u64 - 1)) as usize) % NODES;
            nodes.kill(standby);
            tokio::time::sleep(between(random, DOWN)).await;
            nodes.start_node(standby).await?;
            nodes.wait_for_role(standby, "standby", PATIENCE).await?;
        }
        Action::KillEngineNode => {
            let server = (random.next_u64() % 3) as usize;
            nodes.engine.kill(server);
            tokio::time::sleep(between(random, ENGINE_DOWN)).await;
            // Blocks this thread (the main one: see `crate::deployment`) until the server is
            // back in the cluster; the writers and subscribers run on the runtime's workers.
            nodes.engine.restart(server);
        }
    }
    nodes.wait_for_primary(None, PATIENCE).await?;
    Ok(())
}

/// A duration in `range`, drawn with `random`.
fn between(random: &mut Random, range: Range<Duration>) -> Duration {
    range.start + (range.end - range.start).mul_f64(random.unit())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn actions_are_drawn_by_their_weights() {
        let mut random = Random::new(11);
        let mut counts: BTreeMap<Action, u64> = BTreeMap::new();
        for _ in 0..10_000 {
            *counts.entry(Action::draw(&mut random)).or_default() += 1;
        }
        for (action, weight) in Action::WEIGHTS {
            let count = counts[&action];
            assert!(
                count.abs_diff(weight * 100) < 300,
                "{action}: {count} of 10,000"
            );
        }
    }

    #[test]
    fn durations_fall_in_their_range() {
        let mut random = Random::new(5);
        for _ in 0..1000 {
            assert!(DOWN.contains(&between(&mut random, DOWN)));
        }
    }
}
