//! The messages of the HTTP API (`docs/http-api.md`), as typed data.
//!
//! The server writes these and clients read them, so both sides name the same fields. Values
//! of the module's own types (a procedure's result, a table's rows) are JSON text written by
//! the streaming mapping ([`crate::json`]) and carried as a [`RawValue`]: the server writes
//! them from encoded bytes without building a tree, and a client parses them into whatever
//! type it wants.
//!
//! Fields are declared in alphabetical order, which is also the order they are written in:
//! the order the API's answers have always had, when they were built as `serde_json` maps.

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use std::time::Duration;
use wasmod_abi::{EntryKind, Identity};

/// The path of the route that calls entry points of `kind` by name, such as `/v1/reducers`
/// (`POST {route}/{name}`); `None` for HTTP handlers, which are routed by method and path
/// under `/v1/http`.
pub fn call_route(kind: EntryKind) -> Option<&'static str> {
    match kind {
        EntryKind::Reducer => Some("/v1/reducers"),
        EntryKind::Procedure => Some("/v1/procedures"),
        EntryKind::View | EntryKind::AnonymousView => Some("/v1/views"),
        _ => None,
    }
}

/// The answer to a successful call: `{"duration_us": .., "status": "committed"}` or
/// `{"duration_us": .., "result": .., "status": "returned"}`.
#[derive(Clone, Debug, Deserialize)]
#[serde(try_from = "CallFields")]
pub enum CallResponse {
    /// A reducer's transaction committed.
    Committed {
        /// How long the call took in the module, commit included, in microseconds.
        duration_us: u64,
    },
    /// A procedure or view returned a value.
    Returned {
        /// The value, in the JSON mapping of its type.
        result: Box<RawValue>,
        /// How long the call took in the module, in microseconds.
        duration_us: u64,
    },
}

impl CallResponse {
    /// A reducer's commit, after `duration`.
    pub fn committed(duration: Duration) -> Self {
        Self::Committed {
            duration_us: micros(duration),
        }
    }

    /// A returned `result`, after `duration`.
    pub fn returned(result: Box<RawValue>, duration: Duration) -> Self {
        Self::Returned {
            result,
            duration_us: micros(duration),
        }
    }
}

/// A duration in whole microseconds, saturating.
fn micros(duration: Duration) -> u64 {
    u64::try_from(duration.as_micros()).unwrap_or(u64::MAX)
}

/// What a [`CallResponse`] says, whether committed or returned.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
enum CallStatus {
    Committed,
    Returned,
}

/// A [`CallResponse`]'s fields as they are written: flat, in order.
#[derive(Serialize, Deserialize)]
struct CallFields<R = Box<RawValue>> {
    duration_us: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    result: Option<R>,
    status: CallStatus,
}

impl Serialize for CallResponse {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let fields = match self {
            Self::Committed { duration_us } => CallFields {
                duration_us: *duration_us,
                result: None,
                status: CallStatus::Committed,
            },
            Self::Returned {
                result,
                duration_us,
            } => CallFields {
                duration_us: *duration_us,
                result: Some(&**result),
                status: CallStatus::Returned,
            },
        };
        fields.serialize(serializer)
    }
}

impl TryFrom<CallFields> for CallResponse {
    type Error = &'static str;

    fn try_from(fields: CallFields) -> Result<Self, Self::Error> {
        match (fields.status, fields.result) {
            (CallStatus::Committed, None) => Ok(Self::Committed {
                duration_us: fields.duration_us,
            }),
            (CallStatus::Returned, Some(result)) => Ok(Self::Returned {
                result,
                duration_us: fields.duration_us,
            }),
            (CallStatus::Committed, Some(_)) => Err("a committed call has no `result`"),
            (CallStatus::Returned, None) => Err("a returned call has a `result`"),
        }
    }
}

/// `POST /v1/identity`: a new identity and the token that proves it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct IdentityResponse {
    /// When the token expires, in seconds since the Unix epoch.
    pub expires_at: u64,
    /// The new identity, as 64 hex digits.
    #[serde(with = "crate::hex")]
    pub identity: Identity,
    /// The token: send it as `Authorization: Bearer <token>`.
    pub token: String,
}

/// `GET /v1/tables/{name}`: a page of a public table's rows.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct TableResponse {
    /// The rows, a JSON array of values of the table's row type, oldest first.
    pub rows: Box<RawValue>,
    /// Where the next page starts (send it back as `?cursor=`), or `None` on the last page.
    #[serde(default)]
    pub next_cursor: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(text: &str) -> Box<RawValue> {
        RawValue::from_string(text.to_owned()).unwrap()
    }

    #[test]
    fn call_responses_are_written_as_they_always_were_and_read_back() {
        let committed = CallResponse::committed(Duration::from_micros(12));
        let text = serde_json::to_string(&committed).unwrap();
        assert_eq!(text, r#"{"duration_us":12,"status":"committed"}"#);
        assert!(matches!(
            serde_json::from_str(&text).unwrap(),
            CallResponse::Committed { duration_us: 12 }
        ));

        let returned = CallResponse::returned(raw(r#"{"a":[1,2]}"#), Duration::from_micros(3));
        let text = serde_json::to_string(&returned).unwrap();
        assert_eq!(
            text,
            r#"{"duration_us":3,"result":{"a":[1,2]},"status":"returned"}"#
        );
        match serde_json::from_str(&text).unwrap() {
            CallResponse::Returned {
                result,
                duration_us,
            } => assert_eq!((result.get(), duration_us), (r#"{"a":[1,2]}"#, 3)),
            other => panic!("{other:?}"),
        }

        for wrong in [
            r#"{"duration_us":1,"result":1,"status":"committed"}"#,
            r#"{"duration_us":1,"status":"returned"}"#,
            r#"{"duration_us":1,"status":"maybe"}"#,
        ] {
            assert!(
                serde_json::from_str::<CallResponse>(wrong).is_err(),
                "{wrong}"
            );
        }
    }

    #[test]
    fn identities_and_tables_round_trip() {
        let issued = IdentityResponse {
            expires_at: 10,
            identity: Identity::from_bytes([0xab; 32]),
            token: "t".into(),
        };
        let text = serde_json::to_string(&issued).unwrap();
        assert_eq!(
            text,
            format!(
                r#"{{"expires_at":10,"identity":"{}","token":"t"}}"#,
                "ab".repeat(32)
            )
        );
        assert_eq!(
            serde_json::from_str::<IdentityResponse>(&text).unwrap(),
            issued
        );
        assert!(serde_json::from_str::<IdentityResponse>(
            r#"{"expires_at":1,"identity":"xyz","token":"t"}"#
        )
        .is_err());

        let table = TableResponse {
            rows: raw(r#"[{"id":1}]"#),
            next_cursor: Some("p2".to_owned()),
        };
        let text = serde_json::to_string(&table).unwrap();
        assert_eq!(text, r#"{"rows":[{"id":1}],"next_cursor":"p2"}"#);
        let read: TableResponse = serde_json::from_str(&text).unwrap();
        assert_eq!(read.rows.get(), r#"[{"id":1}]"#);
        assert_eq!(read.next_cursor.as_deref(), Some("p2"));
        let last: TableResponse = serde_json::from_str(r#"{"rows":[]}"#).unwrap();
        assert_eq!(last.next_cursor, None);
    }

    #[test]
    fn each_calling_kind_has_its_route() {
        assert_eq!(call_route(EntryKind::Reducer), Some("/v1/reducers"));
        assert_eq!(call_route(EntryKind::Procedure), Some("/v1/procedures"));
        assert_eq!(call_route(EntryKind::View), Some("/v1/views"));
        assert_eq!(call_route(EntryKind::AnonymousView), Some("/v1/views"));
        assert_eq!(call_route(EntryKind::HttpHandler), None);
    }
}
