#![allow(unused)]

use wasmod::prelude::*;

#[wasmod::module]
mod app {
    use super::*;

    #[table(scheduled(tick))]
    pub struct NoScheduleColumn {
        #[primary_key]
        id: u64,
        when: Timestamp,
    }

    #[table(scheduled(tick))]
    pub struct TwoScheduleColumns {
        #[primary_key]
        id: u64,
        first: ScheduleAt,
        second: ScheduleAt,
    }

    #[table(scheduled(tick, at = later))]
    pub struct UnknownColumn {
        #[primary_key]
        id: u64,
        at: ScheduleAt,
    }

    #[table(scheduled(tick))]
    pub struct NoPrimaryKey {
        id: u64,
        at: ScheduleAt,
    }

    #[table(scheduled)]
    pub struct NoReducer {
        #[primary_key]
        id: u64,
        at: ScheduleAt,
    }

    #[table(scheduled(tick, tock))]
    pub struct TwoReducers {
        #[primary_key]
        id: u64,
        at: ScheduleAt,
    }

    #[table(scheduled(tick), scheduled(tock))]
    pub struct TwoSchedules {
        #[primary_key]
        id: u64,
        at: ScheduleAt,
    }

    #[table(scheduled(at = at))]
    pub struct OnlyAColumn {
        #[primary_key]
        id: u64,
        at: ScheduleAt,
    }

    #[reducer]
    pub fn tick(_ctx: &ReducerContext, _id: u64) {}

    #[reducer]
    pub fn tock(_ctx: &ReducerContext) {}
}

fn main() {}
