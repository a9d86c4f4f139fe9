//! The wasmod client for the browser, as one `.wasm`: built for `wasm32-unknown-unknown`, its
//! exports are `wasmod_client::web`'s (`WasmodClient`, `Subscription`), which
//! `wasm-bindgen --target web` wraps in an ES module with TypeScript types (`build.sh`).
//!
//! A crate of its own so that `wasmod-client` stays an ordinary library on native targets: a
//! `cdylib` is only what a browser loads. On native targets it is empty.

#[cfg(target_arch = "wasm32")]
pub use wasmod_client::web::*;

#[cfg(all(target_arch = "wasm32", feature = "bench"))]
mod bench;
