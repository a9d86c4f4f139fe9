//! Where a replication stream lives: `redis://HOST:PORT/<stream>`, the one argument of
//! `wasmod serve --publish` and `wasmod edge --follow`.

use std::fmt;
use std::str::FromStr;

/// A Redis server and the name of a stream on it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StreamAddress {
    /// The server, as the Redis client opens it: `redis://HOST:PORT`.
    pub server: String,
    /// The stream's key.
    pub stream: String,
}

impl FromStr for StreamAddress {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let rest = text
            .strip_prefix("redis://")
            .ok_or_else(|| format!("`{text}`: expected redis://HOST:PORT/<stream>"))?;
        let (authority, stream) = rest.split_once('/').ok_or_else(|| {
            format!("`{text}`: the stream's name is missing (redis://HOST:PORT/<stream>)")
        })?;
        if authority.is_empty() {
            return Err(format!("`{text}`: the host is missing"));
        }
        if stream.is_empty() || stream.contains('/') {
            return Err(format!(
                "`{text}`: the stream's name must be one non-empty path segment"
            ));
        }
        Ok(Self {
            server: format!("redis://{authority}"),
            stream: stream.to_owned(),
        })
    }
}

impl fmt::Display for StreamAddress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.server, self.stream)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_address_names_the_server_and_the_stream() {
        let address: StreamAddress = "redis://127.0.0.1:6379/chat".parse().expect("parses");
        assert_eq!(address.server, "redis://127.0.0.1:6379");
        assert_eq!(address.stream, "chat");
        assert_eq!(address.to_string(), "redis://127.0.0.1:6379/chat");
    }

    #[test]
    fn malformed_addresses_are_refused() {
        for text in [
            "127.0.0.1:6379/chat",
            "http://127.0.0.1:6379/chat",
            "redis://127.0.0.1:6379",
            "redis://127.0.0.1:6379/",
            "redis:///chat",
            "redis://host/a/b",
        ] {
            assert!(text.parse::<StreamAddress>().is_err(), "{text}");
        }
    }
}
