//! The client against a real quickstart served on a loopback port: calls, subscriptions and
//! the cache's callbacks, two clients, a server restarted under a client, a server that
//! sends what is not a message, new builds published under clients, a replicated
//! deployment's servers followed through a failover, tokens and token providers, and the
//! socket layer below the client.

mod bindings;
mod busy;
mod calls;
mod compression;
mod failover;
mod frame_tick;
mod lookups;
mod malformed;
mod new_build;
mod reconnect;
mod socket;
mod subscriptions;
mod support;
mod sync;
mod tokens;
