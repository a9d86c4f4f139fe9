//! The authorization code flow with PKCE, scripted over HTTP as a browser would walk it, so
//! that Rust tests get real ID tokens from the real provider without a browser:
//!
//! 1. `GET` the authorization endpoint with the client's id and redirect URI, scope `openid
//!    profile email`, a PKCE challenge (S256), a `state` and a `nonce`;
//! 2. follow the redirects (each `Location`, with the cookies the provider set, kept by path
//!    as a browser keeps them) to the provider's pages: the login form, posted with the
//!    user's `sub` as the login, then the consent form, posted as the user's "continue";
//! 3. stop at the redirect to the client's redirect URI, and read its `code` (checking
//!    `state`), or the `error` the provider sent instead;
//! 4. `POST` the code and the PKCE verifier (and a confidential client's secret) to the token
//!    endpoint, and keep its `id_token` and `access_token`.
//!
//! Each page's form is found in its HTML (the development interactions of `oidc-provider`:
//! one `<form action=…>` with a hidden `prompt` field, `login` or `consent`).

use crate::jwt;
use crate::settings::Client;
use sha2::{Digest, Sha256};
use std::io;
use std::time::{Duration, SystemTime, UNIX_EPOCH};
use ureq::http::header::{COOKIE, LOCATION, SET_COOKIE};
use ureq::http::Response;
use ureq::{Agent, Body};

/// How many requests a sign-in may take before it is given up as a loop (it takes 6).
const MAX_STEPS: usize = 12;

/// The bound on each request to the provider.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(10);

/// What a sign-in gets from the token endpoint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenSet {
    /// The ID token: a JWT signed by the provider, whose `iss` is the issuer, `sub` the
    /// user's, `aud` the client's id; it carries the user's `name` and `email`. What a wasmod
    /// client hands to the server.
    pub id_token: String,
    /// The access token (opaque), if the token endpoint gave one.
    pub access_token: Option<String>,
    /// When the ID token expires: its `exp` claim.
    pub expires_at: SystemTime,
}

impl TokenSet {
    /// The ID token's claims, not verified ([`jwt::claims`](crate::jwt::claims)).
    ///
    /// # Errors
    ///
    /// If the ID token is not a JWT of JSON claims (the provider wrote it: it is).
    pub fn claims(&self) -> io::Result<serde_json::Value> {
        jwt::claims(&self.id_token)
    }
}

/// The provider's endpoints a sign-in uses, from its discovery document.
#[derive(Debug, Clone)]
pub(crate) struct Endpoints {
    pub(crate) authorization: String,
    pub(crate) token: String,
}

/// Signs user `sub` in at the provider of `endpoints` as `client`, and returns the tokens.
pub(crate) fn sign_in(endpoints: &Endpoints, sub: &str, client: &Client) -> io::Result<TokenSet> {
    let agent: Agent = Agent::config_builder()
        .max_redirects(0)
        .http_status_as_error(false)
        .timeout_global(Some(REQUEST_TIMEOUT))
        .build()
        .into();
    let verifier = random_token()?;
    let challenge = jwt::base64url(&Sha256::digest(verifier.as_bytes()));
    let state = random_token()?;
    let nonce = random_token()?;
    let mut jar = Jar::default();
    let mut response = jar.send(
        agent
            .get(&endpoints.authorization)
            .query("client_id", &client.id)
            .query("response_type", "code")
            .query("scope", "openid profile email")
            .query("redirect_uri", &client.redirect_uri)
            .query("code_challenge", &challenge)
            .query("code_challenge_method", "S256")
            .query("state", &state)
            .query("nonce", &nonce),
    )?;
    let mut logged_in = false;
    let mut code = None;
    for _ in 0..MAX_STEPS {
        let status = response.status().as_u16();
        if response.status().is_redirection() {
            let location = header(&response, LOCATION)
                .ok_or_else(|| failed(format!("a redirect ({status}) without a Location")))?;
            let next = resolve(&endpoints.authorization, &location)?;
            if let Some(query) = next.strip_prefix(&format!("{}?", client.redirect_uri)) {
                code = Some(authorization_code(query, &state)?);
                break;
            }
            response = jar.send(agent.get(&next))?;
            continue;
        }
        let page = response
            .body_mut()
            .read_to_string()
            .map_err(|err| failed(format!("reading a page: {err}")))?;
        if status != 200 {
            return Err(failed(format!("the provider answered {status}: {page}")));
        }
        let form = Form::find(&page)?;
        let request = agent.post(resolve(&endpoints.authorization, &form.action)?);
        response = match form.prompt.as_str() {
            "login" if logged_in => {
                return Err(failed(format!(
                    "the provider refused user `{sub}` (the login form came back): is it one \
                     of the settings' users?"
                )))
            }
            "login" => {
                logged_in = true;
                jar.send_form(
                    request,
                    &[("prompt", "login"), ("login", sub), ("password", "any")],
                )?
            }
            "consent" => jar.send_form(request, &[("prompt", "consent")])?,
            other => return Err(failed(format!("a page with an unknown prompt `{other}`"))),
        };
    }
    let code = code.ok_or_else(|| failed(format!("no code after {MAX_STEPS} requests")))?;
    let mut form = vec![
        ("grant_type", "authorization_code"),
        ("code", code.as_str()),
        ("redirect_uri", client.redirect_uri.as_str()),
        ("code_verifier", verifier.as_str()),
        ("client_id", client.id.as_str()),
    ];
    if let Some(secret) = &client.secret {
        form.push(("client_secret", secret));
    }
    let mut response = agent
        .post(&endpoints.token)
        .send_form(form)
        .map_err(|err| failed(format!("the token request: {err}")))?;
    let status = response.status().as_u16();
    let body = response
        .body_mut()
        .read_to_string()
        .map_err(|err| failed(format!("reading the token response: {err}")))?;
    if status != 200 {
        return Err(failed(format!(
            "the token endpoint answered {status}: {body}"
        )));
    }
    token_set(&body)
}

/// The tokens of a token endpoint's answer.
fn token_set(body: &str) -> io::Result<TokenSet> {
    let answer: serde_json::Value = serde_json::from_str(body)
        .map_err(|err| failed(format!("the token response is not JSON ({err}): {body}")))?;
    let id_token = answer["id_token"]
        .as_str()
        .ok_or_else(|| failed(format!("the token response has no id_token: {body}")))?
        .to_owned();
    let exp = jwt::claims(&id_token)?["exp"]
        .as_u64()
        .ok_or_else(|| failed("the ID token has no numeric `exp`".to_owned()))?;
    Ok(TokenSet {
        access_token: answer["access_token"].as_str().map(str::to_owned),
        expires_at: UNIX_EPOCH + Duration::from_secs(exp),
        id_token,
    })
}

/// The code of the redirect back to the client (its query), once its `state` is checked; the
/// provider's `error` if it sent one instead.
fn authorization_code(query: &str, state: &str) -> io::Result<String> {
    let pairs: Vec<(String, String)> = query
        .split('&')
        .filter_map(|pair| pair.split_once('='))
        .map(|(name, value)| Ok((name.to_owned(), percent_decode(value)?)))
        .collect::<io::Result<_>>()?;
    let get = |name: &str| {
        pairs
            .iter()
            .find(|(key, _)| key == name)
            .map(|(_, value)| value.as_str())
    };
    if let Some(error) = get("error") {
        let description = get("error_description").unwrap_or_default();
        return Err(failed(format!(
            "the provider answered the client with `{error}`: {description}"
        )));
    }
    if get("state") != Some(state) {
        return Err(failed(format!(
            "the redirect's state is not the request's: {query}"
        )));
    }
    get("code")
        .map(str::to_owned)
        .ok_or_else(|| failed(format!("the redirect to the client has no code: {query}")))
}

/// The form of one of the provider's interaction pages: where it posts, and its `prompt`.
#[derive(Debug, PartialEq, Eq)]
struct Form {
    action: String,
    prompt: String,
}

impl Form {
    fn find(page: &str) -> io::Result<Self> {
        let attribute = |after: &str, name: &str| -> Option<String> {
            let (_, rest) = after.split_once(&format!("{name}=\""))?;
            rest.split('"').next().map(unescape_html)
        };
        let no_form = || failed(format!("a page without the expected form: {page}"));
        let (_, form) = page.split_once("<form").ok_or_else(no_form)?;
        let action = attribute(form, "action").ok_or_else(no_form)?;
        let (_, prompt) = form.split_once("name=\"prompt\"").ok_or_else(no_form)?;
        let prompt = attribute(prompt, "value").ok_or_else(no_form)?;
        Ok(Self { action, prompt })
    }
}

/// The cookies a browser would keep during one sign-in: by name and path, each sent to the
/// paths under its own (the provider scopes its interaction cookies to one interaction's path).
#[derive(Debug, Default)]
struct Jar {
    cookies: Vec<Cookie>,
}

#[derive(Debug)]
struct Cookie {
    name: String,
    value: String,
    path: String,
}

impl Jar {
    fn send(
        &mut self,
        request: ureq::RequestBuilder<ureq::typestate::WithoutBody>,
    ) -> io::Result<Response<Body>> {
        let request = self.with_cookies(request);
        let response = request
            .call()
            .map_err(|err| failed(format!("a request to the provider: {err}")))?;
        self.keep(&response);
        Ok(response)
    }

    fn send_form(
        &mut self,
        request: ureq::RequestBuilder<ureq::typestate::WithBody>,
        form: &[(&str, &str)],
    ) -> io::Result<Response<Body>> {
        let request = self.with_cookies(request);
        let response = request
            .send_form(form.iter().copied())
            .map_err(|err| failed(format!("posting a form to the provider: {err}")))?;
        self.keep(&response);
        Ok(response)
    }

    fn with_cookies<B>(&self, request: ureq::RequestBuilder<B>) -> ureq::RequestBuilder<B> {
        let path = request.uri_ref().map(|uri| uri.path().to_owned());
        let path = path.unwrap_or_default();
        let header: Vec<String> = self
            .cookies
            .iter()
            .filter(|cookie| path_matches(&cookie.path, &path))
            .map(|cookie| format!("{}={}", cookie.name, cookie.value))
            .collect();
        if header.is_empty() {
            request
        } else {
            request.header(COOKIE, header.join("; "))
        }
    }

    /// Keeps the response's cookies, and forgets those it clears (an empty value or an
    /// expiry in the past: the provider clears with `expires=Thu, 01 Jan 1970 …`).
    fn keep(&mut self, response: &Response<Body>) {
        for set in response.headers().get_all(SET_COOKIE) {
            let Ok(set) = set.to_str() else { continue };
            let mut attributes = set.split(';').map(str::trim);
            let Some((name, value)) = attributes.next().and_then(|pair| pair.split_once('='))
            else {
                continue;
            };
            let mut path = "/".to_owned();
            let mut cleared = value.is_empty();
            for attribute in attributes {
                let lower = attribute.to_ascii_lowercase();
                if let Some(value) = lower.strip_prefix("path=") {
                    path = attribute[attribute.len() - value.len()..].to_owned();
                } else if lower.starts_with("expires=") && lower.contains("1970") {
                    cleared = true;
                }
            }
            self.cookies
                .retain(|cookie| !(cookie.name == name && cookie.path == path));
            if !cleared {
                self.cookies.push(Cookie {
                    name: name.to_owned(),
                    value: value.to_owned(),
                    path,
                });
            }
        }
    }
}

/// Whether a cookie of path `cookie` is sent to `path` (RFC 6265, 5.1.4).
fn path_matches(cookie: &str, path: &str) -> bool {
    path == cookie
        || path
            .strip_prefix(cookie)
            .is_some_and(|rest| cookie.ends_with('/') || rest.starts_with('/'))
}

/// `location` (absolute, or a path on the provider) as an absolute URL, `base` being a URL of
/// the provider.
fn resolve(base: &str, location: &str) -> io::Result<String> {
    if location.starts_with("http://") || location.starts_with("https://") {
        return Ok(location.to_owned());
    }
    if !location.starts_with('/') {
        return Err(failed(format!("a relative redirect `{location}`")));
    }
    let scheme_end = base.find("://").map_or(0, |at| at + 3);
    let origin_end = base[scheme_end..]
        .find('/')
        .map_or(base.len(), |at| scheme_end + at);
    Ok(format!("{}{location}", &base[..origin_end]))
}

fn header(response: &Response<Body>, name: ureq::http::HeaderName) -> Option<String> {
    response
        .headers()
        .get(name)
        .and_then(|value| value.to_str().ok())
        .map(str::to_owned)
}

/// A query value decoded (`%XX` and `+`).
fn percent_decode(value: &str) -> io::Result<String> {
    let bytes = value.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'%' => {
                let hex = value
                    .get(i + 1..i + 3)
                    .and_then(|hex| u8::from_str_radix(hex, 16).ok())
                    .ok_or_else(|| failed(format!("a bad escape in `{value}`")))?;
                out.push(hex);
                i += 3;
            }
            b'+' => {
                out.push(b' ');
                i += 1;
            }
            byte => {
                out.push(byte);
                i += 1;
            }
        }
    }
    String::from_utf8(out).map_err(|_| failed(format!("`{value}` is not UTF-8 once decoded")))
}

/// An attribute's value with the HTML escapes the provider's templates write undone.
fn unescape_html(value: &str) -> String {
    value
        .replace("&#x2F;", "/")
        .replace("&#39;", "'")
        .replace("&quot;", "\"")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&")
}

/// 32 random bytes in base64url: a PKCE verifier, a `state`, a `nonce`.
fn random_token() -> io::Result<String> {
    let mut bytes = [0; 32];
    getrandom::fill(&mut bytes).map_err(|err| io::Error::other(format!("randomness: {err}")))?;
    Ok(jwt::base64url(&bytes))
}

fn failed(why: String) -> io::Error {
    io::Error::other(format!("sign-in: {why}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forms_are_found_in_the_pages() {
        let page = r#"<html><form autocomplete="off" action="http:&#x2F;&#x2F;127.0.0.1:1&#x2F;interaction&#x2F;u1" method="post">
            <input type="hidden" name="prompt" value="login"/><input name="login"></form>"#;
        assert_eq!(
            Form::find(page).unwrap(),
            Form {
                action: "http://127.0.0.1:1/interaction/u1".to_owned(),
                prompt: "login".to_owned()
            }
        );
        assert!(Form::find("<html>no form</html>")
            .unwrap_err()
            .to_string()
            .contains("without the expected form"));
        assert!(Form::find(r#"<form action="/x"><input name="login"></form>"#).is_err());
    }

    #[test]
    fn the_redirect_gives_the_code_or_the_error() {
        assert_eq!(
            authorization_code("code=a%2Bb&state=s", "s").unwrap(),
            "a+b"
        );
        let wrong_state = authorization_code("code=c&state=t", "s").unwrap_err();
        assert!(wrong_state.to_string().contains("state"), "{wrong_state}");
        let error = authorization_code(
            "error=access_denied&error_description=End-User+aborted&state=s",
            "s",
        )
        .unwrap_err();
        assert!(
            error
                .to_string()
                .contains("`access_denied`: End-User aborted"),
            "{error}"
        );
        assert!(authorization_code("state=s", "s").is_err());
        assert!(authorization_code("code=%zz&state=s", "s").is_err());
        assert!(authorization_code("code=%ff&state=s", "s").is_err());
    }

    #[test]
    fn locations_resolve_on_the_provider() {
        let base = "http://127.0.0.1:4000/auth";
        assert_eq!(
            resolve(base, "/interaction/x").unwrap(),
            "http://127.0.0.1:4000/interaction/x"
        );
        assert_eq!(resolve(base, "http://other/cb").unwrap(), "http://other/cb");
        assert!(resolve(base, "interaction").is_err());
        assert_eq!(
            resolve("http://127.0.0.1:4000", "/a").unwrap(),
            "http://127.0.0.1:4000/a"
        );
    }

    #[test]
    fn cookie_paths_match_as_a_browser_matches_them() {
        assert!(path_matches("/", "/auth/x"));
        assert!(path_matches("/auth/x", "/auth/x"));
        assert!(path_matches("/auth/x", "/auth/x/y"));
        assert!(!path_matches("/auth/x", "/auth/xy"));
        assert!(!path_matches("/interaction/x", "/auth/x"));
    }

    #[test]
    fn token_responses_are_read() {
        let id_token = format!(
            "{}.{}.sig",
            jwt::base64url(b"{}"),
            jwt::base64url(br#"{"exp":100}"#)
        );
        let body = format!(r#"{{"id_token":"{id_token}","access_token":"at"}}"#);
        let set = token_set(&body).unwrap();
        assert_eq!(set.expires_at, UNIX_EPOCH + Duration::from_secs(100));
        assert_eq!(set.access_token.as_deref(), Some("at"));
        assert!(token_set("{}")
            .unwrap_err()
            .to_string()
            .contains("no id_token"));
        assert!(token_set("nope").is_err());
    }
}
