#[path = "../support/ordering.rs"]
mod support;

use wasmod::prelude::*;
use wasmod_testing::Outcome;
use wasmod::Identity;

#[wasmod::module]
mod app {
    use super::*;

    /// What ran, in order.
    #[table]
    pub struct Event {
        #[primary_key]
        #[auto_inc]
        pub id: u64,
        pub what: String,
        pub who: Identity,
    }

    #[reducer]
    fn ping(_ctx: &ReducerContext) -> Result<(), String> {
        Err("ping".into())
    }

    #[reducer(client_disconnected)]
    fn bye(ctx: &ReducerContext) {
        ctx.db.event().insert(Event { id: 0, what: "bye".into(), who: ctx.sender() });
    }

    #[reducer(init)]
    fn setup(ctx: &ReducerContext) {
        ctx.db.event().insert(Event { id: 0, what: "setup".into(), who: ctx.sender() });
    }

    #[reducer]
    fn pong(_ctx: &ReducerContext) -> Result<(), String> {
        Err("pong".into())
    }

    #[reducer(client_connected)]
    fn hello(ctx: &ReducerContext) {
        ctx.db.event().insert(Event { id: 0, what: "hello".into(), who: ctx.sender() });
    }
}

use app::EventAccess;

fn main() {
    let module = wasmod_testing::TestModule::<app::Module>::new();
    let def = module.description();
    let roles: Vec<_> = def.reducers.iter().map(|d| (d.name.as_str(), d.lifecycle)).collect();
    use wasmod::abi::Lifecycle::*;
    assert_eq!(roles, [("ping", None), ("bye", Some(ClientDisconnected)), ("setup", Some(Init)), ("pong", None), ("hello", Some(ClientConnected))]);

    let alice = Identity::from_bytes([1; 32]);
    assert!(matches!(module.connect(alice), Outcome::Committed { .. }));
    assert!(matches!(module.disconnect(alice), Outcome::Committed { .. }));
    let events: Vec<(String, Identity)> = module.read(|db| {
        let mut events: Vec<app::Event> = db.event().iter().collect();
        events.sort_by_key(|event| event.id);
        events.into_iter().map(|event| (event.what, event.who)).collect()
    });
    assert_eq!(events, [("setup".to_string(), Identity::ZERO), ("hello".to_string(), alice), ("bye".to_string(), alice)]);

    match module.call_reducer(alice, "setup", ()) {
        Outcome::Failed { message, .. } => assert!(message.contains("lifecycle"), "{message}"),
        other => panic!("a client called `init`: {other:?}"),
    }
    assert_eq!(support::check_every_entry_point(&module), 2);
}
