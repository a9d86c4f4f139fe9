//! The calls an edge forwards to its primary, and their answers, as they cross the wire
//! (`POST /v1/replication/calls`, with the edge token).
//!
//! An edge serves everything that reads from its replica, but a call that may write (a
//! reducer, a procedure, an HTTP handler, a client's connection and disconnection) must run
//! where the data is written: the edge sends it here, as the identity, over the connection and
//! with the claims (its verified token's payload, as the JSON text it was) of the client it
//! serves, so that the module sees the same caller whichever node the client reached, and the primary runs it on its module's thread exactly as it runs
//! its own clients' calls. The answer is the call's [`Outcome`], the commit included, once
//! that commit is durable; the edge answers its client after it has applied that commit itself
//! (see [`crate::runner`]), so a client reads its own writes.
//!
//! The body is JSON; bytes (encoded arguments, results, the commit's stream fields) are in
//! hexadecimal. A commit travels in the fields of its stream entry ([`StreamEntry::fields`]), so that
//! one encoding serves both ways a commit reaches an edge.

use super::entry::StreamEntry;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;
use wasmod_abi::encoding::{from_slice, to_vec};
use wasmod_abi::http::Request;
use wasmod_abi::{ConnectionId, Identity};
use wasmod_host::datastore::Commit;
use wasmod_host::{Caller, Claims, Outcome, WasmModule};
use wasmod_protocol::call::CallKind;

/// The primary's endpoint for the calls its edges forward.
pub const CALLS_PATH: &str = "/v1/replication/calls";

/// A call an edge forwards: what to run, as whom and over which connection.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ForwardedCall {
    /// The caller's identity (the edge checked the client's token).
    #[serde(with = "hex::serde")]
    pub(crate) caller: [u8; 32],
    /// The client's connection id on the edge (all zero for none).
    #[serde(with = "hex::serde")]
    pub(crate) connection: [u8; 16],
    /// The claims of the client's verified token, the edge having verified it; absent for
    /// none (and from an edge that predates claims).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) claims: Option<String>,
    /// What to run.
    pub(crate) call: Forwarded,
}

/// What a forwarded call runs.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Forwarded {
    /// Reducer `name` with its encoded arguments.
    Reducer {
        /// The reducer's name.
        name: String,
        /// The encoded product of its parameters.
        #[serde(with = "hex::serde")]
        args: Vec<u8>,
    },
    /// Procedure `name` with its encoded arguments.
    Procedure {
        /// The procedure's name.
        name: String,
        /// The encoded product of its parameters.
        #[serde(with = "hex::serde")]
        args: Vec<u8>,
    },
    /// The module's `client_connected` lifecycle reducer.
    Connect,
    /// The module's `client_disconnected` lifecycle reducer.
    Disconnect,
    /// The HTTP handler of a request (the ABI's encoding of [`Request`]).
    Http {
        /// The encoded request.
        #[serde(with = "hex::serde")]
        request: Vec<u8>,
    },
}

impl Forwarded {
    /// The HTTP handler call of `request`.
    pub fn http(request: &Request) -> Self {
        Self::Http {
            request: to_vec(request),
        }
    }
}

impl ForwardedCall {
    /// `call`, made by `caller`: its identity, connection and claims.
    pub fn new(caller: &Caller, call: Forwarded) -> Self {
        Self {
            caller: caller.identity.to_bytes(),
            connection: caller.connection_id.to_bytes(),
            claims: caller
                .claims
                .as_ref()
                .map(|claims| claims.as_json().to_owned()),
            call,
        }
    }

    /// The caller the primary runs the call as. Its claims are the edge's word: the primary
    /// takes them as the edge's client presented them, as it takes the identity.
    fn caller(&self) -> Caller {
        let identity = Identity::from_bytes(self.caller);
        let connection = ConnectionId::from_bytes(self.connection);
        let claims = self
            .claims
            .as_deref()
            .map(|json| Claims::from_verified_json(json.into()));
        Caller::new(identity, connection).with_claims(claims)
    }

    /// The kind and name of the entry point a call by name reaches (`None` for the lifecycle
    /// reducers and HTTP requests, which are not called by name).
    pub fn by_name(&self) -> Option<(CallKind, &str)> {
        match &self.call {
            Forwarded::Reducer { name, .. } => Some((CallKind::Reducer, name)),
            Forwarded::Procedure { name, .. } => Some((CallKind::Procedure, name)),
            Forwarded::Connect | Forwarded::Disconnect | Forwarded::Http { .. } => None,
        }
    }

    /// Runs the call on `module` (on the primary's module thread); `None` for a lifecycle
    /// reducer the module does not have, as [`WasmModule::client_connected`] says.
    pub fn run(&self, module: &mut WasmModule) -> Option<Outcome> {
        let caller = self.caller();
        match &self.call {
            Forwarded::Reducer { name, args } => Some(module.call_reducer_as(name, &caller, args)),
            Forwarded::Procedure { name, args } => {
                Some(module.call_procedure_as(name, &caller, args))
            }
            Forwarded::Connect => module.client_connected_as(&caller),
            Forwarded::Disconnect => module.client_disconnected_as(&caller),
            Forwarded::Http { request } => Some(match from_slice::<Request>(request) {
                Ok(request) => module.call_http(&request, caller.claims),
                Err(error) => Outcome::Aborted {
                    reason: format!("the edge sent a request that does not decode: {error}"),
                },
            }),
        }
    }
}

/// How a forwarded call ended: an [`Outcome`] on the wire (`null` for a lifecycle reducer
/// the module does not have).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum ForwardedOutcome {
    /// [`Outcome::Committed`].
    Committed {
        /// The commit, as the fields of its stream entry; `None` if nothing changed.
        commit: Option<CommitFields>,
        /// How long the call took, in microseconds.
        duration_us: u64,
    },
    /// [`Outcome::Returned`].
    Returned {
        /// The encoded result.
        #[serde(with = "hex::serde")]
        bytes: Vec<u8>,
        /// How long the call took, in microseconds.
        duration_us: u64,
    },
    /// [`Outcome::Failed`].
    Failed {
        /// The error code.
        code: i16,
        /// The explanation.
        message: String,
    },
    /// [`Outcome::Aborted`].
    Aborted {
        /// The trap or panic message.
        reason: String,
    },
}

/// A commit as the id and fields of its stream entry, the fields' values in hexadecimal.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CommitFields {
    /// The entry's id (`<offset>-1`).
    pub id: String,
    /// The entry's fields.
    pub fields: HashMap<String, String>,
}

impl From<&Outcome> for ForwardedOutcome {
    fn from(outcome: &Outcome) -> Self {
        let micros = |duration: &Duration| duration.as_micros().min(u64::MAX as u128) as u64;
        match outcome {
            Outcome::Committed { commit, duration } => Self::Committed {
                commit: commit.as_ref().map(|commit| {
                    let entry = StreamEntry::Commit(commit.clone());
                    CommitFields {
                        id: entry.id(),
                        fields: entry
                            .fields()
                            .into_iter()
                            .map(|(name, value)| (name.to_owned(), hex::encode(value)))
                            .collect(),
                    }
                }),
                duration_us: micros(duration),
            },
            Outcome::Returned { bytes, duration } => Self::Returned {
                bytes: bytes.clone(),
                duration_us: micros(duration),
            },
            Outcome::Failed { code, message } => Self::Failed {
                code: *code,
                message: message.clone(),
            },
            Outcome::Aborted { reason } => Self::Aborted {
                reason: reason.clone(),
            },
        }
    }
}

impl ForwardedOutcome {
    /// The outcome as the primary had it; `Err` says what does not decode.
    pub fn into_outcome(self) -> Result<Outcome, String> {
        Ok(match self {
            Self::Committed {
                commit,
                duration_us,
            } => Outcome::Committed {
                commit: commit.map(CommitFields::decode).transpose()?,
                duration: Duration::from_micros(duration_us),
            },
            Self::Returned { bytes, duration_us } => Outcome::Returned {
                bytes,
                duration: Duration::from_micros(duration_us),
            },
            Self::Failed { code, message } => Outcome::Failed { code, message },
            Self::Aborted { reason } => Outcome::Aborted { reason },
        })
    }
}

impl CommitFields {
    /// The commit these fields are.
    fn decode(self) -> Result<Arc<Commit>, String> {
        let fields = self
            .fields
            .into_iter()
            .map(|(name, value)| {
                hex::decode(&value)
                    .map(|value| (name.clone(), value))
                    .map_err(|error| format!("the commit's field `{name}` is not hex: {error}"))
            })
            .collect::<Result<HashMap<_, _>, _>>()?;
        match StreamEntry::decode(&self.id, &fields)? {
            StreamEntry::Commit(commit) => Ok(commit),
            StreamEntry::Resync { .. } => {
                Err(format!("entry {} is a marker, not a commit", self.id))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use wasmod_abi::{EntryKind, Timestamp};
    use wasmod_host::datastore::{CommitMeta, EntryPoint, TableChanges, TxData};

    fn round_trip(outcome: &Outcome) -> Outcome {
        let json = serde_json::to_string(&ForwardedOutcome::from(outcome)).unwrap();
        serde_json::from_str::<ForwardedOutcome>(&json)
            .unwrap()
            .into_outcome()
            .unwrap()
    }

    #[test]
    fn outcomes_cross_the_wire_unchanged() {
        let commit = Arc::new(Commit {
            offset: 41,
            meta: CommitMeta {
                timestamp: Timestamp::from_micros_since_unix_epoch(1_700_000_000_000_000),
                caller: Identity::from_bytes([7; 32]),
                connection_id: ConnectionId::from_bytes([9; 16]),
                entry: Some(EntryPoint::new(EntryKind::Reducer, "send")),
            },
            changes: TxData {
                tables: vec![TableChanges {
                    table: 0,
                    inserted: vec![Arc::from(&b"new row"[..])],
                    deleted: vec![Arc::from(&b"old row"[..])],
                }],
            },
        });
        for outcome in [
            Outcome::Committed {
                commit: Some(commit),
                duration: Duration::from_micros(1234),
            },
            Outcome::Committed {
                commit: None,
                duration: Duration::from_micros(5),
            },
            Outcome::Returned {
                bytes: vec![0, 1, 255],
                duration: Duration::from_micros(77),
            },
            Outcome::Failed {
                code: 3,
                message: "no".to_owned(),
            },
            Outcome::Aborted {
                reason: "trap".to_owned(),
            },
        ] {
            assert_eq!(round_trip(&outcome), outcome);
        }
    }

    #[test]
    fn a_call_crosses_the_wire_unchanged_and_bad_bytes_are_refused() {
        let claims =
            Claims::from_verified_json(r#"{"iss":"https://id.example.com","sub":"ann"}"#.into());
        let caller = Caller::new(
            Identity::from_bytes([1; 32]),
            ConnectionId::from_bytes([2; 16]),
        )
        .with_claims(Some(claims));
        let call = ForwardedCall::new(
            &caller,
            Forwarded::Reducer {
                name: "send".to_owned(),
                args: vec![4, 0, 0, 0, b'h', b'i', b'!', b'!'],
            },
        );
        let json = serde_json::to_string(&call).unwrap();
        let crossed = serde_json::from_str::<ForwardedCall>(&json).unwrap();
        assert_eq!(crossed, call);
        assert_eq!(crossed.caller(), caller, "identity, connection and claims");
        let short = json.replace(&"01".repeat(32), "0101");
        assert!(serde_json::from_str::<ForwardedCall>(&short).is_err());
        let outcome = ForwardedOutcome::Committed {
            commit: Some(CommitFields {
                id: "3-1".to_owned(),
                fields: HashMap::from([("kind".to_owned(), "zz".to_owned())]),
            }),
            duration_us: 1,
        };
        assert!(outcome.into_outcome().unwrap_err().contains("not hex"));
    }

    /// The primary runs a forwarded call with the claims the edge sent: `signin` admits the
    /// connection of its issuer's user and refuses the same call without them, and its HTTP
    /// handler greets the holder of the request's token.
    #[test]
    fn the_primary_runs_a_forwarded_call_with_the_claims_the_edge_sent() {
        let mut module = crate::test_support::example("signin");
        let issuer = to_vec(&("https://id.example.com".to_owned(),));
        let configured =
            module.call_reducer("configure", Identity::ZERO, ConnectionId::ZERO, &issuer);
        assert!(configured.is_success(), "{configured}");
        let ann = Caller::new(
            Identity::from_bytes([1; 32]),
            ConnectionId::from_bytes([2; 16]),
        );
        let crossed = |caller: &Caller, call: Forwarded| {
            let json = serde_json::to_string(&ForwardedCall::new(caller, call)).unwrap();
            serde_json::from_str::<ForwardedCall>(&json).unwrap()
        };
        let without = crossed(&ann, Forwarded::Connect).run(&mut module);
        assert!(
            matches!(&without, Some(Outcome::Failed { message, .. }) if message.contains("sign in with")),
            "{without:?}"
        );
        let with =
            crossed(&ann.clone().with_claims(ann_claims()), Forwarded::Connect).run(&mut module);
        assert!(with.as_ref().is_some_and(Outcome::is_success), "{with:?}");
        let hello = crossed(
            &Caller::HOST.with_claims(ann_claims()),
            Forwarded::http(&Request::new(wasmod_abi::http::Method::Get, "/hello")),
        )
        .run(&mut module);
        let Some(Outcome::Returned { bytes, .. }) = hello else {
            panic!("{hello:?}")
        };
        let response: wasmod_abi::http::Response = from_slice(&bytes).unwrap();
        assert_eq!(response.body, b"hello, Ann");
    }

    fn ann_claims() -> Option<Claims> {
        Some(Claims::from_verified_json(
            r#"{"iss":"https://id.example.com","sub":"ann","name":"Ann"}"#.into(),
        ))
    }

    #[test]
    fn a_call_without_claims_leaves_them_off_the_wire_and_reads_as_none() {
        let call = ForwardedCall::new(
            &Caller::new(Identity::ZERO, ConnectionId::ZERO),
            Forwarded::Connect,
        );
        let json = serde_json::to_string(&call).unwrap();
        assert!(!json.contains("claims"), "{json}");
        let crossed = serde_json::from_str::<ForwardedCall>(&json).unwrap();
        assert_eq!(crossed.caller().claims, None);
    }
}
