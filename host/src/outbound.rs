//! Outbound HTTP for procedures: a real client behind the operator's allow list.
//!
//! A procedure may call other services (`ProcedureContext::send_http` in a module), but a
//! module is untrusted code running inside the operator's network, so the host decides where
//! it may connect. [`DenyAllHttp`](crate::DenyAllHttp), the default, allows nothing;
//! [`OutboundHttp`] allows exactly the hosts of an [`AllowList`] the operator wrote, and
//! nothing else:
//!
//! - the destination is checked **before** any name is resolved or connection made, against
//!   the host and port of the URL as the client itself parses it (one parser, so a URL cannot
//!   mean one host to the check and another to the connection);
//! - the addresses a name resolves to are checked **before** connecting, and the connection
//!   goes to the checked addresses: a name that leads to a loopback, private, link-local or
//!   other non-global address is refused (`addresses`, `resolver`), unless the operator allows
//!   that address by a rule naming it (`127.0.0.1:8080`) or allows private addresses
//!   ([`OutboundHttp::with_private_addresses`]);
//! - redirects are **not followed**: a `3xx` could lead off the list, so the module receives it
//!   as it is (and a request to its `location` is checked like any other);
//! - proxies from the environment (`HTTP_PROXY` and the like) are ignored, so that what the
//!   list allows is what is reached;
//! - each request has a deadline for the whole exchange, body included: the client's timeout,
//!   or the time the calling procedure has left before its own deadline if that is sooner
//!   (imports are not interrupted, so a request must not hold the module's only thread past
//!   the call's end); and the response body has a size cap, so a slow or generous server
//!   cannot hold a procedure or fill the host's memory (the responses a procedure keeps
//!   unread count against its call's budget of host memory, `Limits::max_held_bytes`);
//! - headers that frame the message (`host`, `content-length`, `transfer-encoding`,
//!   `connection`, …) are the client's to set, and a request that sets them is refused.
//!
//! Connections are kept alive and reused. A server may close an idle one just as a request is
//! sent on it (its idle timeout fired), and the request then fails before any answer through
//! nobody's fault; so a request whose method is idempotent (`GET`, `HEAD`, `PUT`, `DELETE`,
//! `OPTIONS`: sending it twice does what sending it once does, RFC 9110 §9.2.2) that fails
//! that way, its connection closed or reset before an answer came, is sent once more, on a
//! new connection, within what is left of its deadline. A `POST` or a `PATCH` is never sent
//! twice: the module sees the failure and decides.
//!
//! A refusal or a failure is an `Err` with a reason; [`InstanceEnv`](crate::InstanceEnv)
//! writes that reason to the module's log (level `warn`, target `wasmod::host`) and returns
//! `HTTP_FAILED` to the module, as it does for [`DenyAllHttp`](crate::DenyAllHttp). A response
//! with any status, `404` or `500` included, is a response, not a failure.
//!
//! The client is [`ureq`]: blocking, which is what a procedure call is (it runs on the host's
//! thread until it returns, with no async runtime to feed), small, and well kept. TLS comes
//! from rustls through this crate's `https` feature (on by default); without it only `http`
//! URLs can be fetched.

mod addresses;
mod resolver;

use crate::HttpClient;
use resolver::{CheckedResolver, RefusedAddress};
use std::fmt;
use std::str::FromStr;
use std::time::{Duration, Instant};
use ureq::http::Uri;
use ureq::unversioned::transport::DefaultConnector;
use ureq::{Agent, AsSendBody};
use wasmod_abi::http::{Method, Request, Response};

/// The hosts procedures may send requests to: nothing unless listed.
///
/// Each rule is a host with an optional port:
///
/// | rule | allows |
/// |---|---|
/// | `api.example.com` | that host, on the URL scheme's default port (80 for `http`, 443 for `https`) |
/// | `api.example.com:8443` | that host, on that port |
/// | `api.example.com:*` | that host, on any port |
/// | `*.example.com` | any host under `example.com` (`a.example.com`, `a.b.example.com`), but not `example.com` itself; ports as above |
/// | `127.0.0.1:8080`, `[::1]:8080` | an IP address, as written in URLs |
///
/// Host names compare without regard to case or a trailing dot. A bare `*` is refused: an
/// operator who means to allow everything should say which hosts instead. A `*.` rule matches
/// names only, never an IP address (`*.0.0.1` does not allow `127.0.0.1`).
///
/// A rule names hosts; [`OutboundHttp`] also checks the addresses a name resolves to, and
/// refuses non-global ones (loopback, private, link-local, …) unless private addresses are
/// allowed: only a rule written as an IP address allows that address as it is.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AllowList {
    rules: Vec<HostRule>,
}

impl AllowList {
    /// An empty list: every request is refused.
    pub fn new() -> Self {
        Self::default()
    }

    /// A list of the rules `rules` (see [`AllowList`] for their syntax).
    pub fn from_rules<I>(rules: I) -> Result<Self, BadRule>
    where
        I: IntoIterator,
        I::Item: AsRef<str>,
    {
        let rules = rules
            .into_iter()
            .map(|rule| rule.as_ref().parse())
            .collect::<Result<_, _>>()?;
        Ok(Self { rules })
    }

    /// This list with `rule` added.
    pub fn with(mut self, rule: HostRule) -> Self {
        self.rules.push(rule);
        self
    }

    /// The rules, in the order they were given.
    pub fn rules(&self) -> &[HostRule] {
        &self.rules
    }

    /// Whether a request to `url` would be let through (it must also be an `http` or `https`
    /// URL with a host).
    pub fn allows(&self, url: &str) -> bool {
        url.parse::<Uri>().is_ok_and(|uri| {
            Destination::of(&uri).is_ok_and(|destination| self.permits(&destination))
        })
    }

    fn permits(&self, destination: &Destination<'_>) -> bool {
        let host = normalize_host(destination.host);
        self.rules
            .iter()
            .any(|rule| rule.matches(&host, destination.port, destination.default_port))
    }
}

/// One rule of an [`AllowList`]: a host (or every host under a domain) and a port.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct HostRule {
    host: HostPattern,
    port: PortRule,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum HostPattern {
    /// This host exactly (lower case, no trailing dot; IPv6 in brackets).
    Exact(String),
    /// Any host ending in `.` and this domain.
    Under(String),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum PortRule {
    /// The URL scheme's default port.
    Default,
    /// Any port.
    Any,
    /// This port.
    Exactly(u16),
}

impl HostRule {
    fn matches(&self, host: &str, port: u16, default_port: u16) -> bool {
        let host_matches = match &self.host {
            HostPattern::Exact(exact) => host == exact,
            HostPattern::Under(domain) => {
                host.parse::<std::net::Ipv4Addr>().is_err()
                    && host
                        .strip_suffix(domain.as_str())
                        .is_some_and(|head| head.len() > 1 && head.ends_with('.'))
            }
        };
        let port_matches = match self.port {
            PortRule::Default => port == default_port,
            PortRule::Any => true,
            PortRule::Exactly(allowed) => port == allowed,
        };
        host_matches && port_matches
    }
}

impl FromStr for HostRule {
    type Err = BadRule;

    fn from_str(rule: &str) -> Result<Self, BadRule> {
        let bad = |reason: &'static str| BadRule {
            rule: rule.to_owned(),
            reason,
        };
        let text = rule.trim();
        if text.is_empty() {
            return Err(bad("it is empty"));
        }
        if text.contains("://") || text.contains('/') {
            return Err(bad("a rule is a host and an optional port, not a URL"));
        }
        let (host, port) = if text.starts_with('[') {
            let end = text.find(']').ok_or(bad("an IPv6 address lacks its `]`"))?;
            let (host, rest) = text.split_at(end + 1);
            match rest {
                "" => (host, None),
                _ => (
                    host,
                    Some(
                        rest.strip_prefix(':')
                            .ok_or(bad("expected `:port` after `]`"))?,
                    ),
                ),
            }
        } else {
            match text.rsplit_once(':') {
                Some((host, port)) => (host, Some(port)),
                None => (text, None),
            }
        };
        let port = match port {
            None => PortRule::Default,
            Some("*") => PortRule::Any,
            Some(port) => match port.parse::<u16>() {
                Ok(port) if port != 0 => PortRule::Exactly(port),
                _ => return Err(bad("the port is not a number from 1 to 65535, nor `*`")),
            },
        };
        let host = normalize_host(host);
        let allowed = |c: char| c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | '_');
        let is_ipv6 = host.starts_with('[')
            && host.ends_with(']')
            && host[1..host.len() - 1]
                .chars()
                .all(|c| c.is_ascii_hexdigit() || matches!(c, ':' | '.'));
        let host = if host == "*" {
            return Err(bad(
                "allowing every host is not supported: list the hosts procedures may reach",
            ));
        } else if let Some(domain) = host.strip_prefix("*.") {
            if domain.is_empty() || !domain.chars().all(allowed) {
                return Err(bad("`*.` must be followed by a domain name"));
            }
            HostPattern::Under(domain.to_owned())
        } else if is_ipv6 || (!host.is_empty() && host.chars().all(allowed)) {
            HostPattern::Exact(host)
        } else {
            return Err(bad(
                "a host is a name, an IPv4 address, or an IPv6 address in brackets; the only wildcard is a leading `*.`",
            ));
        };
        Ok(Self { host, port })
    }
}

impl fmt::Display for HostRule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.host {
            HostPattern::Exact(host) => f.write_str(host)?,
            HostPattern::Under(domain) => write!(f, "*.{domain}")?,
        }
        match self.port {
            PortRule::Default => Ok(()),
            PortRule::Any => f.write_str(":*"),
            PortRule::Exactly(port) => write!(f, ":{port}"),
        }
    }
}

/// A rule of an [`AllowList`] that does not parse.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BadRule {
    rule: String,
    reason: &'static str,
}

impl fmt::Display for BadRule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "bad outbound HTTP allow-list rule `{}`: {}",
            self.rule, self.reason
        )
    }
}

impl std::error::Error for BadRule {}

/// Lower case, without a trailing dot: how hosts are compared.
fn normalize_host(host: &str) -> String {
    host.strip_suffix('.').unwrap_or(host).to_ascii_lowercase()
}

/// Where a URL leads.
struct Destination<'a> {
    host: &'a str,
    port: u16,
    default_port: u16,
}

impl<'a> Destination<'a> {
    fn of(uri: &'a Uri) -> Result<Self, String> {
        let default_port = match uri.scheme_str() {
            Some(scheme) if scheme.eq_ignore_ascii_case("http") => 80,
            Some(scheme) if scheme.eq_ignore_ascii_case("https") => 443,
            _ => return Err("only http and https URLs can be fetched".to_owned()),
        };
        let host = uri
            .host()
            .filter(|host| !host.is_empty())
            .ok_or("the URL has no host")?;
        Ok(Self {
            host,
            port: uri.port_u16().unwrap_or(default_port),
            default_port,
        })
    }
}

/// Headers that frame the message or the connection: the client sets them.
const CLIENT_HEADERS: &[&str] = &[
    "host",
    "content-length",
    "transfer-encoding",
    "connection",
    "keep-alive",
    "upgrade",
    "te",
    "trailer",
    "proxy-connection",
];

/// Sends procedures' requests to the hosts of an [`AllowList`] (at global addresses only,
/// unless [`OutboundHttp::with_private_addresses`]), with a deadline and a cap on the
/// response's size. Plug it in with
/// [`InstanceEnv::with_http_client`](crate::InstanceEnv::with_http_client).
#[derive(Debug)]
pub struct OutboundHttp {
    allow: AllowList,
    timeout: Duration,
    max_response_bytes: u64,
    allow_private: bool,
    agent: Agent,
    /// The agent of the one retry of an idempotent request ([`retried`]): it keeps no
    /// connection, so each of its requests has a new one.
    fresh: Agent,
}

impl OutboundHttp {
    /// How long a request may take by default, from the first byte sent to the last byte of
    /// the response body read (less when the calling procedure's deadline is sooner).
    pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);

    /// The largest response body accepted by default: 8 MiB.
    pub const DEFAULT_MAX_RESPONSE_BYTES: u64 = 8 << 20;

    /// A client for the hosts of `allow`, with the default deadline and size cap.
    pub fn new(allow: AllowList) -> Self {
        Self {
            allow,
            timeout: Self::DEFAULT_TIMEOUT,
            max_response_bytes: Self::DEFAULT_MAX_RESPONSE_BYTES,
            allow_private: false,
            agent: agent(false, Reuse::Pooled),
            fresh: agent(false, Reuse::Never),
        }
    }

    /// This client with requests given `timeout` to complete, response body included.
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// This client refusing response bodies larger than `max` bytes.
    pub fn with_max_response_bytes(mut self, max: u64) -> Self {
        self.max_response_bytes = max;
        self
    }

    /// This client connecting to names that resolve to non-global addresses (loopback,
    /// private, link-local, …) too, if `allowed`. Off by default: a name on the allow list
    /// then reaches only global addresses, and the operator's own network only through rules
    /// written as IP addresses.
    pub fn with_private_addresses(mut self, allowed: bool) -> Self {
        self.allow_private = allowed;
        self.agent = agent(allowed, Reuse::Pooled);
        self.fresh = agent(allowed, Reuse::Never);
        self
    }

    /// Whether names may lead to non-global addresses.
    pub fn private_addresses_allowed(&self) -> bool {
        self.allow_private
    }

    /// The hosts requests may go to.
    pub fn allow_list(&self) -> &AllowList {
        &self.allow
    }

    /// The deadline of each request.
    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    /// The largest response body accepted.
    pub fn max_response_bytes(&self) -> u64 {
        self.max_response_bytes
    }

    fn try_send(&self, request: Request, deadline: Option<Instant>) -> Result<Response, String> {
        let url = match request.query.as_str() {
            "" => request.uri,
            query if request.uri.contains('?') => format!("{}&{query}", request.uri),
            query => format!("{}?{query}", request.uri),
        };
        let uri: Uri = url
            .parse()
            .map_err(|error| format!("refused: not a valid URL ({error})"))?;
        let destination = Destination::of(&uri).map_err(|reason| format!("refused: {reason}"))?;
        if destination.default_port == 443 && !cfg!(feature = "https") {
            return Err(
                "refused: this host was built without TLS (the `https` feature of wasmod-host)"
                    .to_owned(),
            );
        }
        if !self.allow.permits(&destination) {
            return Err(format!(
                "refused: {}:{} is not on this host's allow list for outbound HTTP",
                destination.host, destination.port
            ));
        }
        let mut builder = ureq::http::Request::builder()
            .method(request.method.as_str())
            .uri(uri);
        for (name, value) in &request.headers {
            if CLIENT_HEADERS
                .iter()
                .any(|reserved| name.eq_ignore_ascii_case(reserved))
            {
                return Err(format!(
                    "refused: the `{name}` header is set by the HTTP client, not the module"
                ));
            }
            builder = builder.header(name, value);
        }
        let head = builder
            .body(())
            .map_err(|error| format!("refused: {error}"))?;
        let wait = Wait::until(self.timeout, deadline);
        if wait.timeout.is_zero() {
            return Err("refused: the call is past its deadline".to_owned());
        }
        let started = Instant::now();
        let response = match run(&self.agent, &head, &request.body, wait) {
            Err(error) if retried(request.method, &error) => {
                let left = wait.timeout.saturating_sub(started.elapsed());
                if left.is_zero() {
                    Err(error)
                } else {
                    let wait = Wait {
                        timeout: left,
                        ..wait
                    };
                    run(&self.fresh, &head, &request.body, wait)
                }
            }
            sent => sent,
        }
        .map_err(|error| failure(error, wait))?;
        let status = response.status().as_u16();
        let headers = response
            .headers()
            .iter()
            .map(|(name, value)| {
                let value = String::from_utf8_lossy(value.as_bytes()).into_owned();
                (name.as_str().to_owned(), value)
            })
            .collect();
        let body = response
            .into_body()
            .into_with_config()
            .limit(self.max_response_bytes)
            .read_to_vec()
            .map_err(|error| failure(error, wait))?;
        Ok(Response {
            status,
            headers,
            body,
        })
    }
}

/// Sends the request of `head` (its method, URI and headers) with `body` through `agent`,
/// giving the whole exchange `wait`'s timeout. An empty body is sent as none (no
/// `content-length: 0` on a `GET`).
fn run(
    agent: &Agent,
    head: &ureq::http::Request<()>,
    body: &[u8],
    wait: Wait,
) -> Result<ureq::http::Response<ureq::Body>, ureq::Error> {
    fn send<S: AsSendBody>(
        agent: &Agent,
        head: &ureq::http::Request<()>,
        body: S,
        wait: Wait,
    ) -> Result<ureq::http::Response<ureq::Body>, ureq::Error> {
        let mut request = ureq::http::Request::new(body);
        *request.method_mut() = head.method().clone();
        *request.uri_mut() = head.uri().clone();
        *request.headers_mut() = head.headers().clone();
        let request = agent
            .configure_request(request)
            .timeout_global(Some(wait.timeout))
            .build();
        agent.run(request)
    }
    if body.is_empty() {
        send(agent, head, (), wait)
    } else {
        send(agent, head, body, wait)
    }
}

/// Whether a request of `method` that failed with `error` is sent once more, on a new
/// connection: its method is idempotent, and its connection was closed or reset before an
/// answer came (as when a server closes a kept-alive connection just as it is reused).
fn retried(method: Method, error: &ureq::Error) -> bool {
    let idempotent = matches!(
        method,
        Method::Get | Method::Head | Method::Put | Method::Delete | Method::Options
    );
    let closed = matches!(error, ureq::Error::Io(error) if matches!(
        error.kind(),
        std::io::ErrorKind::UnexpectedEof
            | std::io::ErrorKind::ConnectionReset
            | std::io::ErrorKind::ConnectionAborted
            | std::io::ErrorKind::BrokenPipe
    ));
    idempotent && closed
}

/// How long one request may take, and whether the calling procedure's deadline set it.
#[derive(Clone, Copy, Debug)]
struct Wait {
    timeout: Duration,
    /// The call's deadline came before the client's timeout would have.
    by_deadline: bool,
}

impl Wait {
    /// The smaller of `timeout` and the time left until `deadline`.
    fn until(timeout: Duration, deadline: Option<Instant>) -> Self {
        let left = deadline.map(|deadline| deadline.saturating_duration_since(Instant::now()));
        match left {
            Some(left) if left < timeout => Self {
                timeout: left,
                by_deadline: true,
            },
            _ => Self {
                timeout,
                by_deadline: false,
            },
        }
    }
}

/// Why a request that was let through failed.
fn failure(error: ureq::Error, wait: Wait) -> String {
    let reason = match error {
        ureq::Error::Timeout(_) if wait.by_deadline => format!(
            "timed out after {:?}, the time the call had left before its deadline",
            wait.timeout
        ),
        ureq::Error::Timeout(_) => format!("timed out after {:?}", wait.timeout),
        ureq::Error::BodyExceedsLimit(limit) => {
            format!("the response body is larger than the limit of {limit} bytes")
        }
        ureq::Error::LargeResponseHeader(_, limit) => {
            format!("the response headers are larger than the limit of {limit} bytes")
        }
        ureq::Error::HostNotFound => "the host name did not resolve".to_owned(),
        ureq::Error::Io(error) if error.kind() == std::io::ErrorKind::ConnectionRefused => {
            "the connection was refused".to_owned()
        }
        ureq::Error::Other(error) if error.is::<RefusedAddress>() => {
            return format!("refused: {error}");
        }
        other => other.to_string(),
    };
    format!("failed: {reason}")
}

impl HttpClient for OutboundHttp {
    fn send(&self, request: Request, deadline: Option<Instant>) -> Result<Response, String> {
        const MAX_URL_CHARS: usize = 200;
        let mut url: String = request.uri.chars().take(MAX_URL_CHARS).collect();
        if url.len() < request.uri.len() {
            url.push('…');
        }
        let method = request.method.as_str();
        self.try_send(request, deadline)
            .map_err(|reason| format!("outbound HTTP {method} {url} {reason}"))
    }
}

/// Whether an agent keeps connections to reuse them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Reuse {
    /// Kept alive, and reused by the next request to the same host.
    Pooled,
    /// Closed after their request: every request has a new one.
    Never,
}

/// An agent for the requests: statuses as responses, no redirects, no proxy, resolved
/// addresses checked unless `allow_private`, connections kept as `reuse` says (each request
/// gets its own deadline, [`Wait`]).
fn agent(allow_private: bool, reuse: Reuse) -> Agent {
    let kept = match reuse {
        Reuse::Pooled => ureq::config::Config::default().max_idle_connections_per_host(),
        Reuse::Never => 0,
    };
    let config = Agent::config_builder()
        .http_status_as_error(false)
        .max_redirects(0)
        .proxy(None)
        .max_idle_connections_per_host(kept)
        .user_agent(concat!("wasmod/", env!("CARGO_PKG_VERSION")))
        .build();
    Agent::with_parts(
        config,
        DefaultConnector::default(),
        CheckedResolver::new(allow_private),
    )
}
