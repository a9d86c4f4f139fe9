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

/// The response header that carries a commit offset (lowercase, as HTTP/2 wants it): on the
/// answers of the module's HTTP handlers, the last commit when the handler ended (what a
/// client waits for to read the handler's writes); on an edge's replication exchanges, the
/// offset of a snapshot or of a forwarded call's end.
pub const OFFSET_HEADER: &str = "x-wasmod-offset";

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

/// The answer to a successful call: `{"duration_us": .., "offset": .., "status": "committed"}`
/// or `{"duration_us": .., "offset": .., "result": .., "status": "returned"}`.
///
/// `offset` is the commit offset a client waits for to read its own write over a
/// subscription (`WaitFor` in `docs/protocol.md`): a reducer's commit, or, for a reducer
/// that changed nothing and for procedures and views, the last commit when the call ended
/// (every commit a procedure made is at or before it).
#[derive(Clone, Debug, Deserialize)]
#[serde(try_from = "CallFields")]
pub enum CallResponse {
    /// A reducer's transaction committed.
    Committed {
        /// How long the call took in the module, commit included, in microseconds.
        duration_us: u64,
        /// The commit's offset (or the last commit's, if the reducer changed nothing).
        offset: u64,
    },
    /// A procedure or view returned a value.
    Returned {
        /// The value, in the JSON mapping of its type.
        result: Box<RawValue>,
        /// How long the call took in the module, in microseconds.
        duration_us: u64,
        /// The offset of the last commit when the call ended.
        offset: u64,
    },
}

impl CallResponse {
    /// A reducer's commit at `offset`, after `duration`.
    pub fn committed(offset: u64, duration: Duration) -> Self {
        Self::Committed {
            duration_us: micros(duration),
            offset,
        }
    }

    /// A returned `result`, after `duration`, with `offset` the last commit when the call
    /// ended.
    pub fn returned(result: Box<RawValue>, offset: u64, duration: Duration) -> Self {
        Self::Returned {
            result,
            duration_us: micros(duration),
            offset,
        }
    }

    /// The commit offset to wait for to read the call's writes (see the type's docs).
    pub fn offset(&self) -> u64 {
        match self {
            Self::Committed { offset, .. } | Self::Returned { offset, .. } => *offset,
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
    offset: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    result: Option<R>,
    status: CallStatus,
}

impl Serialize for CallResponse {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let fields = match self {
            Self::Committed {
                duration_us,
                offset,
            } => CallFields {
                duration_us: *duration_us,
                offset: *offset,
                result: None,
                status: CallStatus::Committed,
            },
            Self::Returned {
                result,
                duration_us,
                offset,
            } => CallFields {
                duration_us: *duration_us,
                offset: *offset,
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
        let (duration_us, offset) = (fields.duration_us, fields.offset);
        match (fields.status, fields.result) {
            (CallStatus::Committed, None) => Ok(Self::Committed {
                duration_us,
                offset,
            }),
            (CallStatus::Returned, Some(result)) => Ok(Self::Returned {
                result,
                duration_us,
                offset,
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
    fn call_responses_are_written_in_order_with_their_offset_and_read_back() {
        let committed = CallResponse::committed(41, Duration::from_micros(12));
        let text = serde_json::to_string(&committed).unwrap();
        assert_eq!(
            text,
            r#"{"duration_us":12,"offset":41,"status":"committed"}"#
        );
        assert!(matches!(
            serde_json::from_str(&text).unwrap(),
            CallResponse::Committed {
                duration_us: 12,
                offset: 41
            }
        ));
        assert_eq!(committed.offset(), 41);

        let returned = CallResponse::returned(raw(r#"{"a":[1,2]}"#), 7, Duration::from_micros(3));
        assert_eq!(returned.offset(), 7);
        let text = serde_json::to_string(&returned).unwrap();
        assert_eq!(
            text,
            r#"{"duration_us":3,"offset":7,"result":{"a":[1,2]},"status":"returned"}"#
        );
        match serde_json::from_str(&text).unwrap() {
            CallResponse::Returned {
                result,
                duration_us,
                offset,
            } => assert_eq!(
                (result.get(), duration_us, offset),
                (r#"{"a":[1,2]}"#, 3, 7)
            ),
            other => panic!("{other:?}"),
        }

        for wrong in [
            r#"{"duration_us":1,"offset":1,"result":1,"status":"committed"}"#,
            r#"{"duration_us":1,"offset":1,"status":"returned"}"#,
            r#"{"duration_us":1,"offset":1,"status":"maybe"}"#,
            r#"{"duration_us":1,"status":"committed"}"#,
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
