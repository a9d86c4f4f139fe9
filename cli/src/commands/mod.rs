//! The subcommands, one file each.

pub mod build;
pub mod call;
pub mod describe;
pub mod generate;
pub mod inspect;
pub mod logs;
pub mod new;
pub mod serve;
pub mod sql;
pub mod subscribe;
