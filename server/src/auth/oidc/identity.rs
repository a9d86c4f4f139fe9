//! The identity of an OpenID Connect subject: a function of the issuer and the subject only.
//!
//! An issuer promises that `sub` never changes for one user and is never given to another
//! (OpenID Connect Core, 2), so (`iss`, `sub`) names one user for ever. The identity is a
//! SHA-256 over both, each preceded by its length so that no two pairs encode alike
//! (`("ab", "c")` and `("a", "bc")` differ), under a domain string that names this use:
//!
//! ```text
//! identity = SHA-256( "wasmod oidc identity v1" ‖ u32_be(len(iss)) ‖ iss ‖ u32_be(len(sub)) ‖ sub )
//! ```
//!
//! with `iss` and `sub` as the UTF-8 bytes of the token's claims, unchanged. It depends on no
//! secret and no state, so every server (an edge, a restored backup, a server whose signing
//! secret was replaced) gives a user the same identity, and a module may compute it ahead of
//! time (to make a user an administrator before they ever sign in, say). Identities of
//! server-signed tokens are random and have no such relation.

use sha2::{Digest, Sha256};
use wasmod_abi::Identity;

/// The domain of the hash: this use, version 1.
const DOMAIN: &[u8] = b"wasmod oidc identity v1";

/// The identity of subject `sub` of issuer `iss` (see the module's documentation).
pub fn oidc_identity(iss: &str, sub: &str) -> Identity {
    let mut hash = Sha256::new();
    hash.update(DOMAIN);
    for part in [iss, sub] {
        let len = u32::try_from(part.len()).unwrap_or(u32::MAX);
        hash.update(len.to_be_bytes());
        hash.update(part.as_bytes());
    }
    Identity::from_bytes(hash.finalize().into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_identity_is_the_documented_hash() {
        let identity = oidc_identity("https://accounts.example.com", "248289761001");
        assert_eq!(
            identity.to_hex(),
            "5a276062e255fcdc91eaa3bf8665025279339aee97edf2fd6d4c92fb83b42178",
            "the documented function (computed independently with Python's hashlib) must never change"
        );
    }

    #[test]
    fn issuer_and_subject_do_not_run_into_each_other() {
        assert_ne!(oidc_identity("ab", "c"), oidc_identity("a", "bc"));
        assert_ne!(
            oidc_identity("https://a", "1"),
            oidc_identity("https://b", "1")
        );
        assert_eq!(
            oidc_identity("https://a", "1"),
            oidc_identity("https://a", "1")
        );
    }
}
