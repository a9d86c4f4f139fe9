//! The quickstart's row types, as the client's tests read them: one definition for the live
//! tests and the test vectors (each test binary includes this file).

use wasmod_abi::{Identity, Timestamp};

/// A row of the quickstart's `message` table.
#[derive(Clone, Debug, PartialEq, wasmod_abi::SchemaType)]
#[wasmod(crate = wasmod_abi)]
pub struct Message {
    pub id: u64,
    pub sender: Identity,
    pub sent: Timestamp,
    pub text: String,
}

/// A row of the quickstart's `user` table.
#[derive(Clone, Debug, PartialEq, wasmod_abi::SchemaType)]
#[wasmod(crate = wasmod_abi)]
pub struct User {
    pub identity: Identity,
    pub name: String,
    pub online: bool,
}
