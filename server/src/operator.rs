//! The operator's token: what opens the admin console (`/admin`) and the admin API
//! (`/v1/admin/*`).
//!
//! The operator is not an identity of the module: the admin API reads private tables and the
//! module's logs, which no client token may. So the operator has a token of its own, given
//! to the server at start (`wasmod serve --operator-token`, or `WASMOD_OPERATOR_TOKEN`) or made
//! up by it and printed once. A request presents it as `Authorization: Bearer <token>` or,
//! for the console's page and its live log feed (a browser sends no header on a navigation),
//! as the cookie `wasmod_operator=<token>` that the console's sign-in sets.
//!
//! The check is in constant time: the token presented and the operator's are each hashed
//! (SHA-256) and the digests compared without an early exit, so neither the time taken nor
//! the length of what was sent tells how much of it was right.

use crate::error::{ApiError, ErrorCode};
use axum::http::header::{AUTHORIZATION, COOKIE as COOKIE_HEADER, HOST, ORIGIN, SET_COOKIE};
use axum::http::{HeaderMap, HeaderValue, Method};
use sha2::{Digest, Sha256};
use std::fmt;

/// The shortest token the operator may choose.
pub const MIN_TOKEN_CHARS: usize = 16;

/// The name of the cookie that carries the token for the console.
pub const COOKIE: &str = "wasmod_operator";

/// The operator's token. Its `Debug` does not show it.
#[derive(Clone)]
pub struct OperatorToken {
    text: String,
    digest: [u8; 32],
}

impl OperatorToken {
    /// A new random token (32 random bytes, in hex), for a server started without one.
    pub fn generate() -> std::io::Result<Self> {
        let mut bytes = [0u8; 32];
        getrandom::fill(&mut bytes).map_err(std::io::Error::other)?;
        Ok(Self::from_text(hex::encode(bytes)))
    }

    /// The token `text`, chosen by the operator: at least [`MIN_TOKEN_CHARS`] characters,
    /// printable ASCII without spaces or the characters a cookie cannot hold (it goes in a
    /// header and a cookie).
    pub fn new(text: &str) -> Result<Self, String> {
        if text.chars().count() < MIN_TOKEN_CHARS {
            return Err(format!(
                "the operator token must have at least {MIN_TOKEN_CHARS} characters"
            ));
        }
        if !text
            .bytes()
            .all(|b| b.is_ascii_graphic() && !b";,\\\"".contains(&b))
        {
            return Err(
                "the operator token must be printable ASCII, without spaces, `;`, `,`, `\\` or `\"`"
                    .into(),
            );
        }
        Ok(Self::from_text(text.to_owned()))
    }

    fn from_text(text: String) -> Self {
        let digest = Sha256::digest(text.as_bytes()).into();
        Self { text, digest }
    }

    /// The token, to print for the operator.
    pub fn reveal(&self) -> &str {
        &self.text
    }

    /// Whether `presented` is the token, in time that does not depend on how much of it is.
    pub fn matches(&self, presented: &[u8]) -> bool {
        let digest: [u8; 32] = Sha256::digest(presented).into();
        let difference = digest
            .iter()
            .zip(&self.digest)
            .fold(0u8, |acc, (a, b)| acc | (a ^ b));
        std::hint::black_box(difference) == 0
    }

    /// Checks a request's credential: `unauthenticated` (401) if there is none,
    /// `not_operator` (403) if it is not this token.
    pub fn check(&self, presented: Option<&[u8]>) -> Result<(), ApiError> {
        let Some(presented) = presented else {
            return Err(ApiError::new(
                ErrorCode::Unauthenticated,
                "the admin API is the operator's: send `Authorization: Bearer <operator token>` \
                 (`wasmod serve` prints it at start)",
            ));
        };
        if self.matches(presented) {
            Ok(())
        } else {
            Err(ApiError::new(
                ErrorCode::NotOperator,
                "that is not the operator token",
            ))
        }
    }
}

impl fmt::Debug for OperatorToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("OperatorToken(…)")
    }
}

/// How a request presented the operator's token.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Credential<'a> {
    /// `Authorization: Bearer <token>`: sent on purpose, by a program or a page's script.
    Bearer(&'a [u8]),
    /// The cookie [`COOKIE`]: sent by the browser by itself, whoever made the request.
    Cookie(&'a [u8]),
}

impl<'a> Credential<'a> {
    /// The token presented.
    pub fn token(self) -> &'a [u8] {
        match self {
            Self::Bearer(token) | Self::Cookie(token) => token,
        }
    }
}

/// The credential of a request: the bearer token of its `Authorization` header, else the
/// value of its operator cookie. An `Authorization` header of another scheme is
/// `invalid_token`, not a credential.
pub fn credential(headers: &HeaderMap) -> Result<Option<Credential<'_>>, ApiError> {
    if let Some(header) = headers.get(AUTHORIZATION) {
        let token = crate::auth::bearer(header.as_bytes())?;
        return Ok(Some(Credential::Bearer(token.as_bytes())));
    }
    Ok(headers
        .get_all(COOKIE_HEADER)
        .iter()
        .flat_map(|header| header.as_bytes().split(|&b| b == b';'))
        .find_map(operator_cookie)
        .map(Credential::Cookie))
}

/// The value of one `name=value` pair of a `Cookie` header if it is the operator's cookie.
fn operator_cookie(pair: &[u8]) -> Option<&[u8]> {
    pair.trim_ascii()
        .strip_prefix(COOKIE.as_bytes())?
        .strip_prefix(b"=")
}

/// The paths the cookie is sent to: the console's page and the admin API, nothing else of
/// the origin (not the module's handlers, not `--web` files).
pub const COOKIE_PATHS: [&str; 2] = ["/admin", "/v1/admin"];

/// The `Set-Cookie` headers that give a browser the cookie for `token` (`Some`) or make it
/// forget it (`None`): one per path of [`COOKIE_PATHS`]. `secure` adds `Secure`, for a
/// request that came over TLS ([`over_tls`]).
pub fn set_cookie(token: Option<&OperatorToken>, secure: bool) -> HeaderMap {
    let (value, lifetime) = match token {
        Some(token) => (token.reveal(), ""),
        None => ("", "; Max-Age=0"),
    };
    let secure = if secure { "; Secure" } else { "" };
    COOKIE_PATHS
        .iter()
        .filter_map(|path| {
            let cookie = format!(
                "{COOKIE}={value}; Path={path}; HttpOnly; SameSite=Strict{secure}{lifetime}"
            );
            // The token's characters are checked to fit a header ([`OperatorToken::new`]).
            Some((SET_COOKIE, HeaderValue::from_str(&cookie).ok()?))
        })
        .collect()
}

/// Whether the request came over TLS: the server serves plain HTTP, so only a TLS proxy in
/// front says so, with `X-Forwarded-Proto: https`. The header is trusted for the cookie's
/// `Secure` attribute only, which it can make stricter and never looser.
pub fn over_tls(headers: &HeaderMap) -> bool {
    headers
        .get("x-forwarded-proto")
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.split(',').next())
        .is_some_and(|scheme| scheme.trim().eq_ignore_ascii_case("https"))
}

/// Where a browser request came from, by its `Sec-Fetch-Site` and `Origin` headers.
///
/// `Sec-Fetch-Site` is set by the browser and no page can set it, so when it is sent it
/// decides alone (a proxy in front that rewrites `Host` does not change it). Without it (an
/// older browser), `Origin` must name the host the request was sent to (`Host`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Site {
    /// From a page of this server: `Sec-Fetch-Site: same-origin`, or without it an `Origin`
    /// naming the `Host`.
    Own,
    /// From anywhere else (another site, a sibling subdomain, a typed address or a
    /// bookmark), by either header.
    Foreign,
    /// Neither header: an old browser, or not a browser.
    Unknown,
}

impl Site {
    /// Where the request of `headers` came from.
    pub fn of(headers: &HeaderMap) -> Self {
        let own = |yes: bool| if yes { Self::Own } else { Self::Foreign };
        if let Some(site) = headers.get("sec-fetch-site") {
            return own(site.as_bytes().eq_ignore_ascii_case(b"same-origin"));
        }
        let Some(origin) = headers.get(ORIGIN).map(HeaderValue::as_bytes) else {
            return Self::Unknown;
        };
        let host = headers.get(HOST).map(HeaderValue::as_bytes);
        let authority = origin
            .strip_prefix(b"https://")
            .or_else(|| origin.strip_prefix(b"http://"));
        own(authority
            .zip(host)
            .is_some_and(|(authority, host)| authority.eq_ignore_ascii_case(host)))
    }
}

/// Whether a request of `method` with `credential` may go on, by where it came from: one
/// authenticated by the cookie alone that changes something (any method but `GET` and
/// `HEAD`) must come from the server's own pages ([`Site::Own`]); a request that sends
/// neither `Origin` nor `Sec-Fetch-Site` is refused too, since every current browser sends
/// `Origin` on such a request. `Authorization` is never sent by a browser on its
/// own, so a bearer token goes on from anywhere.
pub fn check_site(
    method: &Method,
    credential: Option<Credential<'_>>,
    headers: &HeaderMap,
) -> Result<(), ApiError> {
    let by_cookie = matches!(credential, Some(Credential::Cookie(_)));
    if !by_cookie || method == Method::GET || method == Method::HEAD {
        return Ok(());
    }
    match Site::of(headers) {
        Site::Own => Ok(()),
        Site::Foreign | Site::Unknown => Err(ApiError::new(
            ErrorCode::CrossSite,
            "a request that changes something, authenticated by the operator's cookie, must \
             come from this server's own pages (by its `Origin` or `Sec-Fetch-Site`): send \
             `Authorization: Bearer <operator token>` instead",
        )),
    }
}

/// The value of a `Cookie` header without the operator's cookie, `None` if nothing is left.
/// The module's HTTP handlers get this instead of the request's.
pub fn without_operator_cookie(header: &[u8]) -> Option<Vec<u8>> {
    let kept: Vec<&[u8]> = header
        .split(|&b| b == b';')
        .map(<[u8]>::trim_ascii)
        .filter(|pair| !pair.is_empty() && operator_cookie(pair).is_none())
        .collect();
    (!kept.is_empty()).then(|| kept.join(&b"; "[..]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_token_matches() {
        let token = OperatorToken::new("correct-horse-battery").unwrap();
        assert!(token.matches(b"correct-horse-battery"));
        for wrong in [
            &b""[..],
            b"correct-horse-batter",
            b"correct-horse-batteryX",
            b"x",
        ] {
            assert!(!token.matches(wrong));
        }
        assert_eq!(
            token.check(None).unwrap_err().code,
            ErrorCode::Unauthenticated
        );
        assert_eq!(
            token.check(Some(b"nope")).unwrap_err().code,
            ErrorCode::NotOperator
        );
        assert!(token.check(Some(b"correct-horse-battery")).is_ok());
        assert!(!format!("{token:?}").contains("horse"));
    }

    #[test]
    fn chosen_tokens_must_be_long_and_plain_and_generated_ones_differ() {
        assert!(OperatorToken::new("short").is_err());
        assert!(OperatorToken::new("has a space in it!").is_err());
        assert!(OperatorToken::new("semi;colon-not-allowed").is_err());
        let one = OperatorToken::generate().unwrap();
        let two = OperatorToken::generate().unwrap();
        assert_eq!(one.reveal().len(), 64);
        assert_ne!(one.reveal(), two.reveal());
    }

    #[test]
    fn the_credential_is_the_bearer_token_or_the_cookie() {
        let mut headers = HeaderMap::new();
        assert_eq!(credential(&headers), Ok(None));
        headers.insert(
            "cookie",
            HeaderValue::from_static("theme=dark; wasmod_operator=abc; x=y"),
        );
        assert_eq!(credential(&headers), Ok(Some(Credential::Cookie(b"abc"))));
        headers.insert("authorization", HeaderValue::from_static("Bearer def"));
        assert_eq!(credential(&headers), Ok(Some(Credential::Bearer(b"def"))));
    }

    #[test]
    fn an_authorization_without_the_bearer_scheme_is_refused() {
        for value in ["def", "Basic def", "Bearer", "Token def"] {
            let mut headers = HeaderMap::new();
            headers.insert("authorization", HeaderValue::from_str(value).unwrap());
            headers.insert("cookie", HeaderValue::from_static("wasmod_operator=def"));
            assert_eq!(
                credential(&headers).map_err(|error| error.code),
                Err(ErrorCode::InvalidToken),
                "{value}"
            );
        }
    }

    #[test]
    fn the_cookie_is_http_only_strict_and_for_the_consoles_paths() {
        let token = OperatorToken::new("correct-horse-battery").unwrap();
        let given = set_cookie(Some(&token), false);
        let given: Vec<&HeaderValue> = given.get_all("set-cookie").iter().collect();
        assert_eq!(
            given,
            [
                "wasmod_operator=correct-horse-battery; Path=/admin; HttpOnly; SameSite=Strict",
                "wasmod_operator=correct-horse-battery; Path=/v1/admin; HttpOnly; SameSite=Strict",
            ]
        );
        let forgotten = set_cookie(None, true);
        assert_eq!(
            forgotten["set-cookie"],
            "wasmod_operator=; Path=/admin; HttpOnly; SameSite=Strict; Secure; Max-Age=0"
        );
        let mut headers = HeaderMap::new();
        assert!(!over_tls(&headers));
        headers.insert("x-forwarded-proto", HeaderValue::from_static("HTTPS, http"));
        assert!(over_tls(&headers));
    }

    fn browser(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert("host", HeaderValue::from_static("127.0.0.1:3000"));
        headers.insert("cookie", HeaderValue::from_static("wasmod_operator=abc"));
        for (name, value) in pairs {
            headers.insert(*name, HeaderValue::from_static(value));
        }
        headers
    }

    #[test]
    fn cookie_requests_that_change_something_must_come_from_the_servers_own_pages() {
        let own = [
            browser(&[("origin", "http://127.0.0.1:3000")]),
            browser(&[("sec-fetch-site", "same-origin")]),
            // Behind a proxy that rewrites `Host`, the browser's own word decides.
            browser(&[
                ("origin", "https://console.example"),
                ("sec-fetch-site", "same-origin"),
            ]),
        ];
        let foreign = [
            browser(&[("origin", "http://evil.example")]),
            browser(&[("origin", "http://127.0.0.1:3001")]),
            browser(&[("origin", "null")]),
            browser(&[("sec-fetch-site", "cross-site")]),
            browser(&[("sec-fetch-site", "same-site")]),
            browser(&[("sec-fetch-site", "none")]),
            browser(&[
                ("origin", "http://127.0.0.1:3000"),
                ("sec-fetch-site", "cross-site"),
            ]),
        ];
        let site = |headers: &HeaderMap| {
            let credential = credential(headers).unwrap();
            check_site(&Method::POST, credential, headers).map_err(|error| error.code)
        };
        for headers in &own {
            assert_eq!(Site::of(headers), Site::Own, "{headers:?}");
            assert_eq!(site(headers), Ok(()), "{headers:?}");
        }
        for headers in &foreign {
            assert_eq!(Site::of(headers), Site::Foreign, "{headers:?}");
            assert_eq!(site(headers), Err(ErrorCode::CrossSite), "{headers:?}");
        }
        let silent = browser(&[]);
        assert_eq!(Site::of(&silent), Site::Unknown);
        assert_eq!(site(&silent), Err(ErrorCode::CrossSite));
        // Reads are not refused, nor requests with the header a browser never adds by itself.
        let credential = credential(&foreign[0]).unwrap();
        assert_eq!(check_site(&Method::GET, credential, &foreign[0]), Ok(()));
        let mut bearer = foreign[0].clone();
        bearer.insert("authorization", HeaderValue::from_static("Bearer abc"));
        let credential = super::credential(&bearer).unwrap();
        assert_eq!(check_site(&Method::POST, credential, &bearer), Ok(()));
    }

    #[test]
    fn the_module_never_sees_the_operator_cookie() {
        assert_eq!(
            without_operator_cookie(b"theme=dark; wasmod_operator=abc;x=y"),
            Some(b"theme=dark; x=y".to_vec())
        );
        assert_eq!(without_operator_cookie(b"wasmod_operator=abc"), None);
        assert_eq!(
            without_operator_cookie(b"wasmod_operator_not=1"),
            Some(b"wasmod_operator_not=1".to_vec())
        );
    }
}
