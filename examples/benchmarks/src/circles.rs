//! The circles load: entities with positions and masses, circles (players' cells) and food.
//!
//! `run_game_circles` joins every circle with every piece of food through primary-key lookups
//! of their entities and tests them for overlap, then counts a three-way nested scan of all
//! three tables: the shape of an agar.io-like game tick.

use std::hint::black_box;
use wasmod::prelude::*;

/// A position on the plane.
#[derive(SchemaType, Clone, Copy, Debug, PartialEq)]
#[repr(C)]
pub struct Vector2 {
    /// Horizontal coordinate.
    pub x: f32,
    /// Vertical coordinate.
    pub y: f32,
}

/// Anything on the board.
#[table(name = entity)]
#[derive(Clone, Debug, PartialEq)]
pub struct Entity {
    /// Assigned by the table's sequence.
    #[primary_key]
    #[auto_inc]
    pub id: u32,
    /// Where it is.
    pub position: Vector2,
    /// How big it is.
    pub mass: u32,
}

/// A player's cell.
#[table(name = circle)]
#[derive(Clone, Debug, PartialEq)]
pub struct Circle {
    /// The cell's entity.
    #[primary_key]
    pub entity_id: u32,
    /// Whose cell it is.
    #[index(btree)]
    pub player_id: u32,
    /// Where it is heading.
    pub direction: Vector2,
    /// How fast.
    pub magnitude: f32,
    /// When it last split.
    pub last_split_time: Timestamp,
}

/// A piece of food.
#[table(name = food)]
#[derive(Clone, Debug, PartialEq)]
pub struct Food {
    /// The food's entity.
    #[primary_key]
    pub entity_id: u32,
}

/// How many circles a load of `n` seeds: one tenth of the entities, at least one.
pub fn circles_for(n: u32) -> u32 {
    (n / 10).max(1)
}

/// Seeds `n` entities, `n` pieces of food (on the first `n` entities) and
/// [`circles_for`]`(n)` circles.
#[reducer]
pub fn init_game_circles(ctx: &ReducerContext, n: u32) {
    for i in 0..n {
        let position = Vector2 {
            x: i as f32,
            y: (i + 5) as f32,
        };
        let entity = ctx.db.entity().insert(Entity {
            id: 0,
            position,
            mass: i * 5 + 1,
        });
        ctx.db.food().insert(Food {
            entity_id: entity.id,
        });
    }
    for i in 0..circles_for(n) {
        let direction = Vector2 {
            x: i as f32,
            y: (i + 5) as f32,
        };
        let last_split_time = ctx.timestamp();
        ctx.db.circle().insert(Circle {
            entity_id: i + 1,
            player_id: i,
            direction,
            magnitude: 1.0,
            last_split_time,
        });
    }
    wasmod::info!(
        "circles: seeded {n} entities and food, {} circles",
        circles_for(n)
    );
}

fn radius(mass: u32) -> f32 {
    (mass as f32).sqrt()
}

fn overlapping(a: &Entity, b: &Entity) -> bool {
    let dx = a.position.x - b.position.x;
    let dy = a.position.y - b.position.y;
    (dx * dx + dy * dy).sqrt() < radius(a.mass).max(radius(b.mass))
}

/// One tick: every circle against every piece of food through their entities, then a count
/// of the three-way cross join. Fails if the counts are not the ones a load of `n` gives.
#[reducer]
pub fn run_game_circles(ctx: &ReducerContext, n: u32) -> Result<(), String> {
    let entities = ctx.db.entity();
    let mut pairs = 0u64;
    for circle in ctx.db.circle().iter() {
        let Some(cell) = entities.id().find(circle.entity_id) else {
            continue;
        };
        for food in ctx.db.food().iter() {
            let morsel = entities
                .id()
                .find(food.entity_id)
                .ok_or("food without an entity")?;
            black_box(overlapping(&cell, &morsel));
            pairs += 1;
        }
    }
    let mut triples = 0u64;
    for circle in ctx.db.circle().iter() {
        for entity in entities.iter() {
            for food in ctx.db.food().iter() {
                black_box((&circle, &entity, &food));
                triples += 1;
            }
        }
    }
    let (circles, n) = (u64::from(circles_for(n)), u64::from(n));
    if (pairs, triples) != (circles * n, circles * n * n) {
        return Err(format!(
            "circles: joined {pairs} pairs and {triples} triples for a load of {n}"
        ));
    }
    Ok(())
}
