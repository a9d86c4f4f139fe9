#![allow(unused)]

use wasmod::prelude::*;

#[wasmod::module]
mod app {
    use super::*;

    /// Not `wasmod::ScheduleAt`, although it is named so.
    #[derive(SchemaType)]
    pub struct ScheduleAt {
        micros: i64,
    }

    #[table(scheduled(tick))]
    pub struct Job {
        #[primary_key]
        id: u64,
        at: ScheduleAt,
    }

    #[table(scheduled(tick, at = when))]
    pub struct Named {
        #[primary_key]
        id: u64,
        when: u64,
    }

    #[reducer]
    pub fn tick(_ctx: &ReducerContext, _row: Job) {}
}

fn main() {}
