//! Logging from modules: every line carries its level, target, file and line to the host,
//! which emits it through `tracing`.
//!
//! ```
//! # #[cfg(any())] {
//! wasmod::info!("user {} joined", name);
//! wasmod::warn!(target: "chat::moderation", "rejected a message of {} bytes", len);
//! # }
//! ```
//!
//! The target defaults to the module path of the call site.

pub use crate::sys::LogLevel as Level;

/// Sends one formatted line to the host. Called by the logging macros.
#[doc(hidden)]
pub fn __record(level: Level, target: &str, file: &str, line: u32, args: core::fmt::Arguments<'_>) {
    match args.as_str() {
        Some(text) => crate::sys::console_log(level, target, file, line, text),
        None => crate::sys::console_log(level, target, file, line, &args.to_string()),
    }
}

/// Logs at a chosen level: `log!(Level::Info, "..", args)`.
#[macro_export]
macro_rules! log {
    (target: $target:expr, $level:expr, $($arg:tt)+) => {
        $crate::log::__record($level, $target, ::core::file!(), ::core::line!(), ::core::format_args!($($arg)+))
    };
    ($level:expr, $($arg:tt)+) => {
        $crate::log!(target: ::core::module_path!(), $level, $($arg)+)
    };
}

/// Logs an error.
#[macro_export]
macro_rules! error {
    (target: $target:expr, $($arg:tt)+) => { $crate::log!(target: $target, $crate::log::Level::Error, $($arg)+) };
    ($($arg:tt)+) => { $crate::log!($crate::log::Level::Error, $($arg)+) };
}

/// Logs a warning.
#[macro_export]
macro_rules! warn {
    (target: $target:expr, $($arg:tt)+) => { $crate::log!(target: $target, $crate::log::Level::Warn, $($arg)+) };
    ($($arg:tt)+) => { $crate::log!($crate::log::Level::Warn, $($arg)+) };
}

/// Logs information.
#[macro_export]
macro_rules! info {
    (target: $target:expr, $($arg:tt)+) => { $crate::log!(target: $target, $crate::log::Level::Info, $($arg)+) };
    ($($arg:tt)+) => { $crate::log!($crate::log::Level::Info, $($arg)+) };
}

/// Logs debugging detail.
#[macro_export]
macro_rules! debug {
    (target: $target:expr, $($arg:tt)+) => { $crate::log!(target: $target, $crate::log::Level::Debug, $($arg)+) };
    ($($arg:tt)+) => { $crate::log!($crate::log::Level::Debug, $($arg)+) };
}

/// Logs tracing detail.
#[macro_export]
macro_rules! trace {
    (target: $target:expr, $($arg:tt)+) => { $crate::log!(target: $target, $crate::log::Level::Trace, $($arg)+) };
    ($($arg:tt)+) => { $crate::log!($crate::log::Level::Trace, $($arg)+) };
}
