//! The API over the quickstart module compiled to wasm, through the router (one test binary,
//! so the module is built and compiled once).

mod admin;
mod amplification;
mod calls;
mod connection_caps;
mod degraded;
mod durable_calls;
mod exhaustion;
mod exhaustion_measured;
mod follow;
mod forwarded;
mod frames;
mod identity_calls;
mod limits;
mod live;
mod oidc;
mod oidc_issuer;
mod parts;
mod per_client;
mod publish;
mod redis_server;
mod results;
mod resume;
mod scheduled;
mod snapshot;
mod static_files;
mod subscribe;
mod subscribing;
mod support;
mod swap;
mod tables;
mod unread;
mod visibility;
mod wait_for;
mod wrong_tokens;
