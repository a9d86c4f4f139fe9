//! The subcommands, one file each.

pub mod build;
pub mod call;
pub mod credential;
pub mod describe;
pub mod edge;
pub mod generate;
pub mod inspect;
pub mod limits;
pub mod logs;
pub mod new;
pub mod publish;
pub mod serve;
pub mod serving;
pub mod sql;
pub mod status;
pub mod subscribe;
