//! `TestModule` at its edges: a module without lifecycle reducers or scheduled tables, and
//! what a failed call says when shown.

use wasmod::Identity;
use wasmod_testing::{CallFailure, Outcome, TestModule};

#[wasmod::module]
mod plain {
    use wasmod::prelude::*;

    #[table]
    pub struct Entry {
        #[primary_key]
        pub id: u32,
    }

    #[reducer]
    fn add(ctx: &ReducerContext, id: u32) {
        ctx.db.entry().insert(Entry { id });
    }

    #[procedure]
    fn count(ctx: &mut ProcedureContext) -> u64 {
        ctx.with_read_tx(|tx| tx.db.entry().count())
    }
}

const ANN: Identity = Identity::from_bytes([1; 32]);

#[test]
fn without_lifecycle_reducers_connecting_commits_nothing() {
    let module = TestModule::<plain::Module>::default();
    for outcome in [module.connect(ANN), module.disconnect(ANN)] {
        match outcome {
            Outcome::Committed { commit, .. } => assert!(commit.is_none(), "nothing written"),
            other => panic!("{other}"),
        }
    }
}

#[test]
fn a_table_that_is_not_scheduled_runs_nothing() {
    let module = TestModule::<plain::Module>::new();
    assert!(module.call_reducer(ANN, "add", (1u32,)).is_success());
    assert!(module.run_scheduled("entry").is_empty());
    assert!(module.run_scheduled("no_such_table").is_empty());
}

#[test]
fn failures_say_what_went_wrong() {
    let module = TestModule::<plain::Module>::new();
    let failed = module
        .call_procedure::<u64>(ANN, "count", (7u8,))
        .unwrap_err();
    assert!(matches!(failed, CallFailure::Outcome(_)), "{failed:?}");
    let shown = failed.to_string();
    assert!(shown.starts_with("the call did not return: "), "{shown}");
    assert!(shown.contains("`count` takes no arguments"), "{shown}");

    let undecoded = module
        .call_procedure::<String>(ANN, "count", ())
        .unwrap_err();
    assert!(matches!(undecoded, CallFailure::Decode(_)), "{undecoded:?}");
    let shown = undecoded.to_string();
    assert!(
        shown.starts_with("the call's result did not decode: "),
        "{shown}"
    );
}
