#[path = "../support/ordering.rs"]
mod support;

#[path = "several_files/players.rs"]
mod players;
#[path = "several_files/scores.rs"]
mod scores;

#[wasmod::module(
    tables(scores::Score, players::Player),
    reducers(scores::score, players::join),
    procedures(scores::leaderboard),
    anonymous_views(players::roster),
)]
pub struct Game;

fn main() {
    let module = wasmod_testing::TestModule::<Game>::new();
    let def = module.description();
    assert_eq!(support::names(&def.tables, |d| &d.name), ["score", "player"]);
    assert_eq!(support::names(&def.reducers, |d| &d.name), ["score", "join"]);
    assert_eq!(support::check_every_entry_point(&module), 4);
}
