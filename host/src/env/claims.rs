//! `caller_claims`: the claims of the call's caller, handed to the module when it asks.
//!
//! The claims travel with the call as text ([`Claims`]) and cost nothing until the module
//! reads them: only then are they copied, into a byte source of the call, which counts against
//! the call's handles and held bytes like any other.

use super::InstanceEnv;
use wasmod_abi::names::EMPTY_SOURCE;
use wasmod_abi::Errno;

impl InstanceEnv {
    /// `caller_claims`: a byte source holding the claims of the call's caller (its verified
    /// token's payload, a JSON object), or [`EMPTY_SOURCE`] when the caller has none (a
    /// server-signed token, the host's own calls, an anonymous view, a request without a
    /// token). Errors: `TOO_LARGE` (the call's handles or held bytes are spent).
    pub fn caller_claims(&mut self) -> Result<u32, Errno> {
        match &self.claims {
            Some(claims) => self.open_source(claims.as_json().as_bytes().to_vec()),
            None => Ok(EMPTY_SOURCE),
        }
    }
}
