use wasmod::prelude::*;

/// A score.
#[table]
pub struct Score {
    #[primary_key]
    pub player: String,
    pub points: u64,
}

#[reducer]
pub fn score(_ctx: &ReducerContext) -> Result<(), String> {
    Err("score".into())
}

#[procedure]
pub fn leaderboard(_ctx: &mut ProcedureContext) -> String {
    "leaderboard".into()
}
