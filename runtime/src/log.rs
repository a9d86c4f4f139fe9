//! Logging from modules: every line carries its level, target, file and line to the host,
//! which emits it through `tracing`.
//!
//! ```
//! use wasmod_testing::TestModule;
//! use wasmod::Identity;
//!
//! #[wasmod::module]
//! mod chat {
//!     use wasmod::prelude::*;
//!
//!     #[reducer]
//!     fn join(_ctx: &ReducerContext, name: String) {
//!         wasmod::info!("user {name} joined");
//!         wasmod::warn!(target: "chat::moderation", "a name of {} bytes", name.len());
//!     }
//! }
//!
//! let module = TestModule::<chat::Module>::new();
//! module.call_reducer(Identity::ZERO, "join", ("ann".to_string(),));
//! let logs = module.logs();
//! assert_eq!(logs[0].message, "user ann joined");
//! assert!(logs[0].target.ends_with("chat"));
//! assert_eq!(&*logs[1].target, "chat::moderation");
//! ```
//!
//! The target defaults to the module path of the call site. Served, the lines go to the
//! server's log (target `wasmod::module`) and the admin feed (`wasmod logs`); in a
//! `wasmod_testing::TestModule`, to its `logs()`.

pub use crate::sys::LogLevel as Level;

/// Sends one formatted line to the host. Called by the logging macros.
#[doc(hidden)]
pub fn __record(level: Level, target: &str, file: &str, line: u32, args: core::fmt::Arguments<'_>) {
    match args.as_str() {
        Some(text) => crate::sys::console_log(level, target, file, line, text),
        None => crate::sys::console_log(level, target, file, line, &args.to_string()),
    }
}

/// Logs at a chosen level: `log!(Level::Info, "..", args)`, optionally with a target first
/// (`log!(target: "audit", Level::Info, "..")`). The other macros are this one at a fixed level.
///
/// ```
/// #[wasmod::module]
/// mod audit {
///     use wasmod::log::Level;
///     use wasmod::prelude::*;
///
///     #[reducer]
///     fn note(_ctx: &ReducerContext, loud: bool) {
///         let level = if loud { Level::Warn } else { Level::Info };
///         wasmod::log!(level, "noted");
///         wasmod::log!(target: "audit", level, "noted, loud: {loud}");
///     }
/// }
/// # fn main() {}
/// ```
#[macro_export]
macro_rules! log {
    (target: $target:expr, $level:expr, $($arg:tt)+) => {
        $crate::log::__record($level, $target, ::core::file!(), ::core::line!(), ::core::format_args!($($arg)+))
    };
    ($level:expr, $($arg:tt)+) => {
        $crate::log!(target: ::core::module_path!(), $level, $($arg)+)
    };
}

/// Logs an error: `error!("..", args)` or `error!(target: "..", "..", args)`, as [`log!`].
///
/// ```
/// # #[wasmod::module]
/// # mod m {
/// # use wasmod::prelude::*;
/// # #[reducer]
/// # fn r(_ctx: &ReducerContext, code: u16) {
/// wasmod::error!("the payment provider answered {code}");
/// # }
/// # }
/// # fn main() {}
/// ```
#[macro_export]
macro_rules! error {
    (target: $target:expr, $($arg:tt)+) => { $crate::log!(target: $target, $crate::log::Level::Error, $($arg)+) };
    ($($arg:tt)+) => { $crate::log!($crate::log::Level::Error, $($arg)+) };
}

/// Logs a warning, as [`log!`] (the [module-level example](mod@crate::log) uses it with a target).
#[macro_export]
macro_rules! warn {
    (target: $target:expr, $($arg:tt)+) => { $crate::log!(target: $target, $crate::log::Level::Warn, $($arg)+) };
    ($($arg:tt)+) => { $crate::log!($crate::log::Level::Warn, $($arg)+) };
}

/// Logs information, as [`log!`] (see the [module-level example](mod@crate::log)).
#[macro_export]
macro_rules! info {
    (target: $target:expr, $($arg:tt)+) => { $crate::log!(target: $target, $crate::log::Level::Info, $($arg)+) };
    ($($arg:tt)+) => { $crate::log!($crate::log::Level::Info, $($arg)+) };
}

/// Logs debugging detail, as [`log!`].
///
/// ```
/// # #[wasmod::module]
/// # mod m {
/// # use wasmod::prelude::*;
/// # #[reducer]
/// # fn r(_ctx: &ReducerContext, rows: u64) {
/// wasmod::debug!("scanned {rows} rows");
/// # }
/// # }
/// # fn main() {}
/// ```
#[macro_export]
macro_rules! debug {
    (target: $target:expr, $($arg:tt)+) => { $crate::log!(target: $target, $crate::log::Level::Debug, $($arg)+) };
    ($($arg:tt)+) => { $crate::log!($crate::log::Level::Debug, $($arg)+) };
}

/// Logs tracing detail, as [`log!`].
///
/// ```
/// # #[wasmod::module]
/// # mod m {
/// # use wasmod::prelude::*;
/// # #[reducer]
/// # fn r(_ctx: &ReducerContext) {
/// wasmod::trace!(target: "cache", "miss");
/// # }
/// # }
/// # fn main() {}
/// ```
#[macro_export]
macro_rules! trace {
    (target: $target:expr, $($arg:tt)+) => { $crate::log!(target: $target, $crate::log::Level::Trace, $($arg)+) };
    ($($arg:tt)+) => { $crate::log!($crate::log::Level::Trace, $($arg)+) };
}
