//! OpenID Connect tokens: a JWT from an issuer the server accepts, verified with the issuer's
//! own keys.
//!
//! An application whose users sign in with an identity provider (Google, Auth0, Keycloak, a
//! company's SSO) connects with the ID token (or a JWT access token) the provider gave it. The
//! server accepts the issuers its operator names ([`OidcSettings`], `wasmod serve
//! --oidc-issuer`), each with the audiences (client ids) it accepts, and for a token of one:
//!
//! 1. reads the header and the payload (no trust yet): the issuer (`iss`) must be one of the
//!    accepted ones, and the algorithm (`alg`) an asymmetric one ([`ALGORITHMS`]): never
//!    `none`, never HMAC (whose "key" would be the issuer's public key, which anybody has);
//! 2. finds the key among the issuer's (`keys.rs`: its discovery document's `jwks_uri`,
//!    fetched at start and cached; a key id it does not know refetches them, at most once per
//!    [`OidcSettings::refresh_interval`], so that no token can make the server fetch per
//!    request);
//! 3. verifies the signature with that key only, and the claims: `iss`, `aud` (one of the
//!    issuer's accepted audiences), `exp` and `nbf` and `iat` within
//!    [`OidcSettings::leeway`], `sub` present (`jwt.rs`);
//! 4. derives the identity from `iss` and `sub` ([`oidc_identity`]) and hands the payload on
//!    as the caller's claims.
//!
//! A slow or unreachable issuer costs at most [`OidcSettings::fetch_timeout`] to the request
//! that asked for a refetch; the keys already cached keep working meanwhile.

mod cache;
mod fetch;
mod identity;
mod jwt;
mod keys;

pub use identity::oidc_identity;

use super::{unix_now, Verified};
use crate::error::{ApiError, ErrorCode};
use cache::VerifiedCache;
use jsonwebtoken::Algorithm;
use keys::IssuerKeys;
use std::collections::HashMap;
use std::fmt;
use std::str::FromStr;
use std::time::Duration;
use wasmod_node::Claims;

/// The signature algorithms accepted: RSA (PKCS#1 v1.5 and PSS), ECDSA on P-256 and P-384,
/// and Ed25519. No HMAC: a server that accepted `HS256` from an issuer would verify it with a
/// key anybody can read.
pub const ALGORITHMS: [Algorithm; 9] = [
    Algorithm::RS256,
    Algorithm::RS384,
    Algorithm::RS512,
    Algorithm::PS256,
    Algorithm::PS384,
    Algorithm::PS512,
    Algorithm::ES256,
    Algorithm::ES384,
    Algorithm::EdDSA,
];

/// The shortest [`OidcSettings::refresh_interval`] accepted.
pub const MIN_REFRESH_INTERVAL: Duration = Duration::from_millis(100);

/// The longest [`OidcSettings::leeway`] accepted.
pub const MAX_LEEWAY: Duration = Duration::from_secs(10 * 60);

/// An issuer whose tokens the server accepts, and for which audiences.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OidcIssuer {
    /// The issuer's identifier, exactly as its tokens' `iss` and its discovery document's
    /// `issuer` spell it (e.g. `https://accounts.google.com`); its discovery document is at
    /// `<issuer>/.well-known/openid-configuration`.
    pub issuer: String,
    /// The audiences accepted (a token's `aud` must contain one): the client ids of the
    /// application at that issuer. At least one: a token minted for another application of the
    /// same issuer must not work here.
    pub audiences: Vec<String>,
}

impl FromStr for OidcIssuer {
    type Err = String;

    /// `<issuer>=<audience>[,<audience>…]`, as `--oidc-issuer` takes it, e.g.
    /// `https://accounts.google.com=1234.apps.googleusercontent.com`.
    fn from_str(text: &str) -> Result<Self, String> {
        let (issuer, audiences) = text.split_once('=').ok_or_else(|| {
            format!(
                "`{text}` names no audience: write <issuer>=<audience>[,<audience>…], e.g. \
                 https://accounts.google.com=1234.apps.googleusercontent.com"
            )
        })?;
        let audiences: Vec<String> = audiences
            .split(',')
            .map(str::trim)
            .filter(|audience| !audience.is_empty())
            .map(str::to_owned)
            .collect();
        if audiences.is_empty() {
            return Err(format!(
                "`{text}` names no audience after `=`: give the application's client id"
            ));
        }
        Ok(Self {
            issuer: issuer.trim().to_owned(),
            audiences,
        })
    }
}

impl fmt::Display for OidcIssuer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}={}", self.issuer, self.audiences.join(","))
    }
}

/// Which OpenID Connect issuers the server accepts, and how it fetches their keys.
///
/// Start from [`OidcSettings::new`] and set the fields that differ.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct OidcSettings {
    /// The issuers accepted, each with its audiences.
    pub issuers: Vec<OidcIssuer>,
    /// Accept issuers (and key URLs) over plain `http` when their host is a loopback address
    /// (`127.0.0.1`, `::1`, `localhost`): for tests against a provider on the same machine.
    /// Everything else must be `https`. Default: `false`.
    pub allow_http_loopback: bool,
    /// How far the server's clock and the issuer's may disagree: a token is accepted until
    /// `exp + leeway`, from `nbf - leeway`, and with an `iat` at most `leeway` in the future.
    /// Default: 30 s; at most [`MAX_LEEWAY`].
    pub leeway: Duration,
    /// The longest one fetch of an issuer's keys may take, its discovery document and key set
    /// together. Default: 5 s.
    pub fetch_timeout: Duration,
    /// The shortest time between two fetches of an issuer's keys asked for by tokens (a key
    /// id the server does not know, or no keys yet): tokens naming unknown keys within it are
    /// refused without a fetch. Default: 30 s; at least [`MIN_REFRESH_INTERVAL`].
    pub refresh_interval: Duration,
    /// How long keys are used before they are fetched again, in the background, while the
    /// old ones keep working (an issuer that removed a key stops being trusted for it within
    /// this time). Default: 1 hour.
    pub keys_max_age: Duration,
    /// The most tokens kept verified, so that a client sending the same token on every
    /// request pays for its signature once (a token kept is verified again once its key is no
    /// longer held, and refused once expired). `0`: every token verified every time.
    /// Default: 4,096.
    pub cache_capacity: usize,
}

impl OidcSettings {
    /// Accepts `issuers`, with the defaults for the rest.
    pub fn new(issuers: Vec<OidcIssuer>) -> Self {
        Self {
            issuers,
            allow_http_loopback: false,
            leeway: Duration::from_secs(30),
            fetch_timeout: Duration::from_secs(5),
            refresh_interval: Duration::from_secs(30),
            keys_max_age: Duration::from_secs(60 * 60),
            cache_capacity: 4096,
        }
    }

    /// Whether the settings can be used: at least one issuer, each an `https` URL (or `http`
    /// on loopback if allowed) without query or fragment, named once, with an audience; a
    /// refresh interval of at least [`MIN_REFRESH_INTERVAL`], a leeway of at most
    /// [`MAX_LEEWAY`], a fetch timeout.
    pub fn check(&self) -> Result<(), String> {
        if self.issuers.is_empty() {
            return Err("no OpenID Connect issuer is named".to_owned());
        }
        let mut seen = std::collections::HashSet::new();
        for issuer in &self.issuers {
            if !seen.insert(issuer.issuer.as_str()) {
                return Err(format!(
                    "the issuer {} is named twice: name it once with all its audiences",
                    issuer.issuer
                ));
            }
            fetch::check_url(&issuer.issuer, self.allow_http_loopback)
                .map_err(|why| format!("the issuer `{}` {why}", issuer.issuer))?;
            if issuer.audiences.is_empty() {
                return Err(format!("the issuer {} has no audience", issuer.issuer));
            }
        }
        if self.refresh_interval < MIN_REFRESH_INTERVAL {
            return Err(format!(
                "the refresh interval must be at least {MIN_REFRESH_INTERVAL:?}: each token with \
                 an unknown key id could otherwise make the server fetch the issuer's keys"
            ));
        }
        if self.leeway > MAX_LEEWAY {
            return Err(format!("the leeway must be at most {MAX_LEEWAY:?}"));
        }
        if self.fetch_timeout.is_zero() {
            return Err("the fetch timeout must not be zero".to_owned());
        }
        Ok(())
    }
}

/// Whether `token` has a JWT's shape (three dot-separated parts, the first base64url JSON
/// starting with `{`, which encodes as `eyJ`) rather than a server-signed token's.
pub(crate) fn looks_like_jwt(token: &str) -> bool {
    token.starts_with("eyJ") && token.bytes().filter(|&byte| byte == b'.').count() == 2
}

/// The verifier of the accepted issuers' tokens.
#[derive(Debug)]
pub(crate) struct Oidc {
    issuers: HashMap<String, IssuerKeys>,
    leeway: Duration,
    verified: VerifiedCache,
}

impl Oidc {
    /// The verifier of `settings`' issuers; `Err` if [`OidcSettings::check`] refuses them.
    pub(crate) fn new(settings: OidcSettings) -> Result<Self, String> {
        settings.check()?;
        let issuers = settings
            .issuers
            .iter()
            .map(|issuer| {
                (
                    issuer.issuer.clone(),
                    IssuerKeys::new(issuer.clone(), &settings),
                )
            })
            .collect();
        Ok(Self {
            issuers,
            leeway: settings.leeway,
            verified: VerifiedCache::new(settings.cache_capacity),
        })
    }

    /// Starts fetching every issuer's keys in the background.
    pub(crate) fn prefetch(&self) {
        for keys in self.issuers.values() {
            keys.refresh_in_background();
        }
    }

    /// What `token` (a JWT's shape) proves: from the tokens verified lately if it is among
    /// them, otherwise verified.
    pub(crate) async fn verify(&self, token: &str) -> Result<Verified, ApiError> {
        let now = unix_now();
        if let Some(verified) = self.verified.get(token, now) {
            return Ok(verified);
        }
        let unverified = jwt::Unverified::parse(token)?;
        let issuer = unverified.issuer();
        let keys = self.issuers.get(issuer).ok_or_else(|| {
            ApiError::new(
                ErrorCode::InvalidToken,
                format!(
                    "the token's issuer `{}` is not one this server accepts",
                    jwt::shortened(issuer)
                ),
            )
        })?;
        let key = keys.key_for(&unverified).await?;
        let token_claims = unverified.verify(key.decoding(), keys.issuer(), self.leeway)?;
        let verified = Verified {
            identity: oidc_identity(&token_claims.issuer, &token_claims.subject),
            claims: Some(Claims::from_verified_json(token_claims.payload)),
        };
        let until = token_claims
            .expires_at
            .saturating_add(self.leeway.as_secs());
        self.verified.put(token, &verified, (key, keys), until, now);
        Ok(verified)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_issuer_flag_names_its_audiences() {
        let issuer: OidcIssuer = "https://accounts.example.com=app-1, app-2".parse().unwrap();
        assert_eq!(issuer.issuer, "https://accounts.example.com");
        assert_eq!(issuer.audiences, ["app-1", "app-2"]);
        assert_eq!(
            issuer.to_string(),
            "https://accounts.example.com=app-1,app-2"
        );
        for bad in [
            "https://accounts.example.com",
            "https://a.example.com=",
            "x= , ",
        ] {
            let why = bad.parse::<OidcIssuer>().expect_err(bad);
            assert!(why.contains("audience"), "{why}");
        }
    }

    #[test]
    fn settings_refuse_plain_http_but_on_loopback_when_allowed_and_issuers_named_twice() {
        let settings = |issuers: &[&str], loopback: bool| {
            let mut settings = OidcSettings::new(
                issuers
                    .iter()
                    .map(|issuer| format!("{issuer}=app").parse().unwrap())
                    .collect(),
            );
            settings.allow_http_loopback = loopback;
            settings.check()
        };
        assert_eq!(settings(&["https://accounts.example.com"], false), Ok(()));
        assert_eq!(settings(&["http://127.0.0.1:9000"], true), Ok(()));
        assert_eq!(settings(&["http://localhost:9000/realms/x"], true), Ok(()));
        for (issuers, loopback, why) in [
            (&["http://127.0.0.1:9000"][..], false, "https"),
            (&["http://accounts.example.com"][..], true, "loopback"),
            (&["https://a.example.com?x=1"][..], false, "query"),
            (&["ftp://a.example.com"][..], false, "https"),
            (&["not a url"][..], false, "URL"),
            (
                &["https://a.example.com", "https://a.example.com"][..],
                false,
                "twice",
            ),
            (&[][..], false, "no OpenID"),
        ] {
            let refused = settings(issuers, loopback).expect_err(why);
            assert!(refused.contains(why), "{issuers:?}: {refused}");
        }
    }

    #[test]
    fn settings_that_would_fetch_per_token_or_overflow_are_refused() {
        let issuer: OidcIssuer = "https://accounts.example.com=app".parse().unwrap();
        let mut settings = OidcSettings::new(vec![issuer]);
        settings.refresh_interval = Duration::ZERO;
        assert!(settings.check().unwrap_err().contains("refresh interval"));
        settings.refresh_interval = MIN_REFRESH_INTERVAL;
        settings.leeway = Duration::from_secs(u64::MAX);
        assert!(settings.check().unwrap_err().contains("leeway"));
        settings.leeway = MAX_LEEWAY;
        settings.fetch_timeout = Duration::ZERO;
        assert!(settings.check().unwrap_err().contains("timeout"));
        settings.fetch_timeout = Duration::from_secs(1);
        assert_eq!(settings.check(), Ok(()));
        assert!(Oidc::new(OidcSettings::new(Vec::new())).is_err());
    }

    #[test]
    fn only_a_jwt_shape_goes_to_the_issuers() {
        assert!(looks_like_jwt("eyJhbGciOiJSUzI1NiJ9.eyJ4Ijp9.c2ln"));
        assert!(!looks_like_jwt("wm1.ab.12.cd"));
        assert!(!looks_like_jwt("eyJhbGciOiJSUzI1NiJ9.eyJ4Ijp9"));
        assert!(!looks_like_jwt("eyJ.a.b.c"));
    }
}
