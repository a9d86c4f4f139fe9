//! HTTP requests and responses, as they cross the module boundary.
//!
//! Used both by HTTP handlers (the host sends a [`Request`], the module answers a
//! [`Response`]) and by procedures' outbound requests (the other way round).

/// An HTTP method.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, crate::SchemaType)]
#[wasmod(crate = crate)]
pub enum Method {
    /// `GET`.
    Get,
    /// `POST`.
    Post,
    /// `PUT`.
    Put,
    /// `PATCH`.
    Patch,
    /// `DELETE`.
    Delete,
    /// `HEAD`.
    Head,
    /// `OPTIONS`.
    Options,
}

impl Method {
    /// The method as written on the wire, such as `"GET"`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Get => "GET",
            Self::Post => "POST",
            Self::Put => "PUT",
            Self::Patch => "PATCH",
            Self::Delete => "DELETE",
            Self::Head => "HEAD",
            Self::Options => "OPTIONS",
        }
    }

    /// The methods of `methods` as an `Allow` header names them: `"GET, POST"`.
    pub fn list(methods: &[Self]) -> String {
        let names: Vec<&str> = methods.iter().map(|method| method.as_str()).collect();
        names.join(", ")
    }

    /// Parses a method as written on the wire (upper case).
    pub fn parse(text: &str) -> Option<Self> {
        [
            Self::Get,
            Self::Post,
            Self::Put,
            Self::Patch,
            Self::Delete,
            Self::Head,
            Self::Options,
        ]
        .into_iter()
        .find(|method| method.as_str() == text)
    }
}

/// Why no HTTP handler answers `method` on `uri`: no route matches the path (`allowed` is
/// empty), or routes do for the `allowed` methods only. The one wording of the refusal, which
/// the host and the server both answer with.
pub fn unrouted(method: Method, uri: &str, allowed: &[Method]) -> String {
    let takes = if allowed.is_empty() {
        String::new()
    } else {
        format!(": it takes {}", Method::list(allowed))
    };
    format!("no http handler answers {} {uri}{takes}", method.as_str())
}

/// An HTTP request.
#[derive(Clone, Debug, PartialEq, Eq, crate::SchemaType)]
#[wasmod(crate = crate)]
pub struct Request {
    /// The method.
    pub method: Method,
    /// For handlers: the path relative to the module's prefix, without the query. For
    /// outbound requests: the full URL.
    pub uri: String,
    /// The query string without its `?`, empty if none.
    pub query: String,
    /// Header names (lower case) and values.
    pub headers: Vec<(String, String)>,
    /// The body.
    pub body: Vec<u8>,
}

impl Request {
    /// A request with no query, headers or body.
    pub fn new(method: Method, uri: impl Into<String>) -> Self {
        Self {
            method,
            uri: uri.into(),
            query: String::new(),
            headers: Vec::new(),
            body: Vec::new(),
        }
    }

    /// The first value of header `name` (compared without regard to case).
    pub fn header(&self, name: &str) -> Option<&str> {
        find_header(&self.headers, name)
    }

    /// The first value of `key` in the query string, decoded as HTML forms encode it (`+` a
    /// space, `%XX` a byte); the empty string for a key given without `=`; `None` if absent.
    /// `?name=ann+lee&all` gives `Some("ann lee")` for `name` and `Some("")` for `all`.
    pub fn query(&self, key: &str) -> Option<String> {
        wasmod_route::query_value(&self.query, key)
    }
}

/// An HTTP response.
#[derive(Clone, Debug, PartialEq, Eq, crate::SchemaType)]
#[wasmod(crate = crate)]
pub struct Response {
    /// The status code.
    pub status: u16,
    /// Header names and values.
    pub headers: Vec<(String, String)>,
    /// The body.
    pub body: Vec<u8>,
}

impl Response {
    /// A response with `status`, no headers and an empty body.
    pub fn new(status: u16) -> Self {
        Self {
            status,
            headers: Vec::new(),
            body: Vec::new(),
        }
    }

    /// A `200 OK` with a `text/plain` body.
    pub fn text(body: impl Into<String>) -> Self {
        Self::new(200)
            .with_header("content-type", "text/plain; charset=utf-8")
            .with_body(body.into())
    }

    /// A `200 OK` with `value` as an `application/json` body, written as the host writes
    /// values to clients (the mapping of `docs/json.md`): struct keys in sorted order, 64-bit
    /// integers beyond 2^53 − 1 as decimal strings, identities as hex, enums by variant name.
    ///
    /// ```
    /// use wasmod_abi::{http::Response, SchemaType};
    ///
    /// #[derive(SchemaType)]
    /// #[wasmod(crate = wasmod_abi)]
    /// struct Account {
    ///     name: String,
    ///     balance: u64,
    /// }
    ///
    /// let response = Response::json(&Account { name: "ann".into(), balance: u64::MAX });
    /// assert_eq!(response.header("content-type"), Some("application/json"));
    /// assert_eq!(response.body, br#"{"balance":"18446744073709551615","name":"ann"}"#);
    /// let created = Response::json(&vec![1u32, 2]).with_status(201);
    /// assert_eq!((created.status, created.body.as_slice()), (201, &b"[1,2]"[..]));
    /// ```
    ///
    /// # Panics
    ///
    /// If `T`'s [`SchemaType`](crate::SchemaType) does not describe its encoding: derived
    /// ones always do, so only a hand-written implementation can.
    pub fn json<T: crate::SchemaType>(value: &T) -> Self {
        let mut typespace = crate::Typespace::default();
        let ty = T::schema(&mut typespace);
        let mut body = Vec::new();
        if let Err(error) =
            crate::json::write_value(&mut body, &ty, &typespace, &crate::encoding::to_vec(value))
        {
            panic!(
                "`{}` does not encode as its SchemaType describes it: {error}",
                core::any::type_name::<T>()
            );
        }
        Self::new(200)
            .with_header("content-type", "application/json")
            .with_body(body)
    }

    /// This response with a header added.
    pub fn with_header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// This response with its body replaced.
    pub fn with_body(mut self, body: impl Into<Vec<u8>>) -> Self {
        self.body = body.into();
        self
    }

    /// This response with its status replaced.
    pub fn with_status(mut self, status: u16) -> Self {
        self.status = status;
        self
    }

    /// The first value of header `name` (compared without regard to case).
    pub fn header(&self, name: &str) -> Option<&str> {
        find_header(&self.headers, name)
    }
}

fn find_header<'a>(headers: &'a [(String, String)], name: &str) -> Option<&'a str> {
    headers
        .iter()
        .find(|(key, _)| key.eq_ignore_ascii_case(name))
        .map(|(_, value)| value.as_str())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unrouted_request_names_the_methods_that_have_handlers() {
        assert_eq!(
            unrouted(Method::Delete, "/items/1", &[Method::Get, Method::Put]),
            "no http handler answers DELETE /items/1: it takes GET, PUT"
        );
        assert_eq!(
            unrouted(Method::Get, "/nowhere?x=1", &[]),
            "no http handler answers GET /nowhere?x=1"
        );
    }
}
