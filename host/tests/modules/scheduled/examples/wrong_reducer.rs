//! A schedule whose reducer takes an id instead of the table's row: it compiles (the macro
//! cannot see the reducer's parameters), and the host must refuse it at load, naming both.

use wasmod::prelude::*;

/// The module.
#[wasmod::module]
pub mod wrong_reducer {
    use super::*;

    /// A job, scheduled for `run`.
    #[table(scheduled(run))]
    pub struct Job {
        /// Its id.
        #[primary_key]
        pub id: u64,
        /// When.
        pub at: ScheduleAt,
    }

    /// Takes an id, not a `Job`.
    #[reducer]
    fn run(_ctx: &ReducerContext, _id: u64) {}
}
