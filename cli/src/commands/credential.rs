//! The operator token that the commands talking to a server's admin API (`wasmod logs`,
//! `wasmod publish`) send: from a private file, the environment, or the command line.
//!
//! A command line is visible to every user of the machine (`/proc/*/cmdline`, `ps`), so the
//! file (`--operator-token-file`, checked like `wasmod serve`'s: a file others may read is
//! refused) or `WASMOD_OPERATOR_TOKEN` is the way to give it; `--operator-token` stays for a
//! quick session on one's own machine.

use super::serving::token_file;
use crate::failure::{Failure, Result};
use std::path::PathBuf;

/// The operator token's flags, shared by the commands that send it.
#[derive(clap::Args)]
pub struct OperatorCredential {
    /// A file holding the operator token (`wasmod serve` prints it at start, or reads it from
    /// its own `--operator-token-file`), readable by its owner only (`chmod 600`): a file
    /// other users may read or write is refused.
    #[arg(long, value_name = "FILE")]
    operator_token_file: Option<PathBuf>,
    /// The operator token itself. Other users of the machine can read a command line: prefer
    /// `--operator-token-file` or the environment variable.
    #[arg(
        long,
        env = "WASMOD_OPERATOR_TOKEN",
        hide_env_values = true,
        value_name = "TOKEN"
    )]
    operator_token: Option<String>,
}

impl OperatorCredential {
    /// The `Authorization` header that carries the token: the file's if one is given (it is
    /// read now, before anything is sent), else the flag's or the environment's. Fails on a
    /// file others may read, one that cannot be read, or no token at all.
    pub fn authorization(&self) -> Result<String> {
        let token = match (&self.operator_token_file, &self.operator_token) {
            (Some(path), _) => token_file(path, "--operator-token-file")?,
            (None, Some(token)) => token.clone(),
            (None, None) => {
                return Err(Failure::usage(
                    "no operator token: give --operator-token-file (or WASMOD_OPERATOR_TOKEN, \
                     or --operator-token); `wasmod serve` prints the token at start",
                ))
            }
        };
        Ok(format!("Bearer {token}"))
    }
}
