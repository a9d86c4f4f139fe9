//! Fetching an issuer's discovery document and key set: over `https` (or `http` on loopback
//! when allowed), both within one timeout and each within a size cap, never following a
//! redirect to plain `http` (with http on loopback allowed, following none at all). Blocking
//! (`ureq`), so run on Tokio's blocking pool, off the async workers.

use serde_json::Value;
use std::net::IpAddr;
use std::time::{Duration, Instant};
use ureq::Agent;

/// The largest discovery document or key set read (a real one is a few KiB).
const MAX_DOCUMENT_BYTES: u64 = 512 * 1024;

/// Whether `url` may be fetched: an absolute `https` URL, or `http` to a loopback host when
/// `allow_http_loopback`, with neither query nor fragment. `Err` says why not.
pub(super) fn check_url(url: &str, allow_http_loopback: bool) -> Result<(), String> {
    let uri: ureq::http::Uri = url
        .parse()
        .map_err(|_| "is not a URL".to_owned())
        .and_then(|uri: ureq::http::Uri| {
            uri.host()
                .is_some()
                .then_some(uri)
                .ok_or_else(|| "is not a URL with a host".to_owned())
        })?;
    if uri.query().is_some() || url.contains('#') {
        return Err("has a query or a fragment, which an issuer's URL may not".to_owned());
    }
    match uri.scheme_str() {
        Some("https") => Ok(()),
        Some("http") if allow_http_loopback => {
            let host = uri.host().unwrap_or_default();
            let host = host.trim_start_matches('[').trim_end_matches(']');
            let loopback = host == "localhost"
                || host
                    .parse::<IpAddr>()
                    .is_ok_and(|address| address.is_loopback());
            if loopback {
                Ok(())
            } else {
                Err("is plain http to a host that is not loopback: only https is accepted".into())
            }
        }
        Some("http") => Err(
            "is plain http: only https is accepted (--oidc-allow-http-loopback allows http on \
             loopback, for tests)"
                .to_owned(),
        ),
        _ => Err("is not an https URL".to_owned()),
    }
}

/// Fetches issuers' documents.
#[derive(Clone, Debug)]
pub(super) struct Fetcher {
    agent: Agent,
    timeout: Duration,
    allow_http_loopback: bool,
}

impl Fetcher {
    /// A fetcher whose every fetch of an issuer's keys takes at most `timeout`.
    pub(super) fn new(timeout: Duration, allow_http_loopback: bool) -> Self {
        let agent = Agent::config_builder()
            .https_only(!allow_http_loopback)
            .max_redirects(if allow_http_loopback { 0 } else { 3 })
            .http_status_as_error(false)
            .build()
            .new_agent();
        Self {
            agent,
            timeout,
            allow_http_loopback,
        }
    }

    /// The longest one fetch of an issuer's keys takes.
    pub(super) fn timeout(&self) -> Duration {
        self.timeout
    }

    /// `issuer`'s keys (each a JWK as JSON) and the URL they were read from: `jwks_uri` if
    /// known, otherwise the one its discovery document names. Within the timeout, in all.
    pub(super) fn keys_of(
        &self,
        issuer: &str,
        jwks_uri: Option<String>,
    ) -> Result<(String, Vec<Value>), String> {
        let deadline = Instant::now() + self.timeout;
        let jwks_uri = match jwks_uri {
            Some(uri) => uri,
            None => self.jwks_uri(issuer, deadline)?,
        };
        let keys = match self
            .json(&jwks_uri, deadline)?
            .get_mut("keys")
            .map(Value::take)
        {
            Some(Value::Array(keys)) => keys,
            _ => return Err(format!("the key set {jwks_uri} has no `keys` array")),
        };
        Ok((jwks_uri, keys))
    }

    /// The `jwks_uri` of `issuer`'s discovery document, which must name `issuer` as its
    /// `issuer` exactly.
    fn jwks_uri(&self, issuer: &str, deadline: Instant) -> Result<String, String> {
        let url = format!(
            "{}/.well-known/openid-configuration",
            issuer.trim_end_matches('/')
        );
        let document = self.json(&url, deadline)?;
        if document.get("issuer").and_then(Value::as_str) != Some(issuer) {
            return Err(format!(
                "the discovery document {url} names another issuer ({}), so it is not {issuer}'s",
                document.get("issuer").unwrap_or(&Value::Null)
            ));
        }
        let jwks_uri = document
            .get("jwks_uri")
            .and_then(Value::as_str)
            .ok_or_else(|| format!("the discovery document {url} has no jwks_uri"))?;
        check_url(jwks_uri, self.allow_http_loopback)
            .map_err(|why| format!("the jwks_uri `{jwks_uri}` of {url} {why}"))?;
        Ok(jwks_uri.to_owned())
    }

    /// The JSON document at `url`, read before `deadline`.
    fn json(&self, url: &str, deadline: Instant) -> Result<Value, String> {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(format!("no time was left to fetch {url}"));
        }
        let mut response = self
            .agent
            .get(url)
            .config()
            .timeout_global(Some(left))
            .build()
            .header("accept", "application/json")
            .call()
            .map_err(|error| format!("{url} could not be fetched: {error}"))?;
        if !response.status().is_success() {
            return Err(format!("{url} answered {}", response.status()));
        }
        let body = response
            .body_mut()
            .with_config()
            .limit(MAX_DOCUMENT_BYTES)
            .read_to_string()
            .map_err(|error| format!("{url} could not be read: {error}"))?;
        serde_json::from_str(&body).map_err(|error| format!("{url} is not JSON: {error}"))
    }
}
