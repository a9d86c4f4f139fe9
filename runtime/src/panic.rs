//! Panics in wasm: the message reaches the host's log before the trap.
//!
//! A module is built with `panic = "abort"`, so a panic traps and the host rolls the call back.
//! Without a hook the host would only learn "unreachable executed"; the hook sends the message,
//! file and line first, as a log line of level `Panic`, which the host attaches to the failure.

use crate::sys::{self, LogLevel};

/// Installs the hook. Called by `__describe_module__`, which the host calls once per instance.
pub(crate) fn install_hook() {
    std::panic::set_hook(Box::new(|info| {
        let message = match info.payload().downcast_ref::<&str>() {
            Some(text) => (*text).to_owned(),
            None => match info.payload().downcast_ref::<String>() {
                Some(text) => text.clone(),
                None => info.to_string(),
            },
        };
        let (file, line) = info
            .location()
            .map_or(("", 0), |location| (location.file(), location.line()));
        sys::console_log(LogLevel::Panic, "panic", file, line, &message);
    }));
}
