//! The ia_loop load: enemy agents with positions, velocities and targetable state, updated
//! through primary-key lookups, with btree range queries around the first agents.

use std::hint::black_box;
use wasmod::prelude::*;

/// What an agent is doing.
#[derive(SchemaType, Clone, Copy, Debug, PartialEq)]
pub enum AgentAction {
    /// Doing nothing.
    Idle,
    /// Moving.
    Moving,
    /// Fighting.
    Fighting,
}

/// An enemy agent.
#[table(name = agent)]
#[derive(Clone, Debug, PartialEq)]
pub struct Agent {
    /// The agent's entity.
    #[primary_key]
    pub entity_id: u64,
    /// When it last moved, most recent last (at most [`MAX_MOVES`]).
    pub last_moves: Vec<u64>,
    /// When it acts next.
    pub next_action: u64,
    /// What it does.
    pub action: AgentAction,
}

/// Where an entity is.
#[table(name = position)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Position {
    /// The entity.
    #[primary_key]
    pub entity_id: u64,
    /// Coordinates.
    pub x: f32,
    /// Coordinates.
    pub y: f32,
    /// Coordinates.
    pub z: f32,
}

/// How an entity moves.
#[table(name = velocity)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Velocity {
    /// The entity.
    #[primary_key]
    pub entity_id: u64,
    /// Per-tick displacement.
    pub x: f32,
    /// Per-tick displacement.
    pub y: f32,
    /// Per-tick displacement.
    pub z: f32,
}

/// Which map quad an entity can be targeted in.
#[table(name = targetable)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Targetable {
    /// The entity.
    #[unique]
    pub entity_id: u64,
    /// The quad.
    #[index(btree)]
    pub quad: i64,
}

/// How many past moves an agent remembers.
pub const MAX_MOVES: usize = 20;

/// How wide a quad neighbourhood a range query covers.
pub const NEIGHBOURHOOD: i64 = 4;

/// Seeds `n` agents, each with a position, a velocity and a targetable state.
#[reducer]
pub fn init_game_ia_loop(ctx: &ReducerContext, n: u32) {
    for id in 0..u64::from(n) {
        let f = id as f32;
        ctx.db.agent().insert(Agent {
            entity_id: id,
            last_moves: vec![id, 0, id * 2],
            next_action: 0,
            action: AgentAction::Idle,
        });
        ctx.db.position().insert(Position {
            entity_id: id,
            x: f,
            y: f + 5.0,
            z: f * 5.0,
        });
        ctx.db.velocity().insert(Velocity {
            entity_id: id,
            x: 1.0,
            y: 0.5,
            z: -1.0,
        });
        ctx.db.targetable().insert(Targetable {
            entity_id: id,
            quad: id as i64,
        });
    }
}

/// One tick: every agent moves by its velocity (primary-key find and update), records the
/// move, and gets a new quad (its targetable state deleted and re-inserted); the first `k`
/// agents also look for targets in the quads around them (btree range queries).
#[reducer]
pub fn run_game_ia_loop(ctx: &ReducerContext, k: u32) -> Result<(), String> {
    let now = ctx.timestamp().to_micros_since_unix_epoch() as u64;
    let agents: Vec<Agent> = ctx.db.agent().iter().collect();
    let mut near = 0usize;
    for (n, mut agent) in agents.into_iter().enumerate() {
        let id = agent.entity_id;
        let velocity = ctx
            .db
            .velocity()
            .entity_id()
            .find(id)
            .ok_or("an agent without a velocity")?;
        let mut position = ctx
            .db
            .position()
            .entity_id()
            .find(id)
            .ok_or("an agent without a position")?;
        position.x += velocity.x;
        position.y += velocity.y;
        position.z += velocity.z;
        ctx.db.position().entity_id().update(position);

        agent.last_moves.push(now);
        if agent.last_moves.len() > MAX_MOVES {
            agent.last_moves.remove(0);
        }
        agent.next_action = now + 2_000_000;
        agent.action = AgentAction::Moving;

        let quad = (position.x as i64) / 8;
        ctx.db.targetable().entity_id().delete(id);
        ctx.db.targetable().insert(Targetable {
            entity_id: id,
            quad,
        });

        if n < k as usize {
            agent.action = AgentAction::Fighting;
            for target in ctx
                .db
                .targetable()
                .quad()
                .filter(quad - NEIGHBOURHOOD..=quad + NEIGHBOURHOOD)
            {
                black_box(target);
                near += 1;
            }
        }
        ctx.db.agent().entity_id().update(agent);
    }
    black_box(near);
    Ok(())
}
