//! Calling entry points by name with JSON, the part that needs only the module's description:
//! finding the entry point, encoding the arguments, rendering the result.
//!
//! The server's routes and `wasmod call` (in-process or against a server) refuse the same
//! calls with the same codes and write the same answers because they all go through here;
//! running the call is theirs (it needs the module).
//!
//! 1. [`find`] looks the name up among the kinds a route accepts, and refuses lifecycle
//!    reducers (only the host calls them);
//! 2. [`EntryPoint::encode_args`] converts the JSON arguments through the parameters' types,
//!    with errors that name the parameter;
//! 3. [`EntryPoint::returned`] renders a returned value's bytes as the API's answer, through
//!    the streaming JSON mapping.

use crate::errors::{ApiError, ErrorCode};
use crate::http::CallResponse;
use crate::json::{args_from_json, value_json};
use serde_json::value::RawValue;
use serde_json::Value as Json;
use std::time::Duration;
use wasmod_abi::{AlgebraicType, EntryKind, ModuleDef, ParamDef, Typespace};

/// The kinds of call by name: which message a call over the socket is, which route an HTTP
/// call takes, and so which kinds of entry point its name is looked up among
/// ([`CallKind::entry_kinds`]). This is the one place that decides it, for every transport.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CallKind {
    /// A reducer: [`ClientMessage::CallReducer`](crate::ws::ClientMessage::CallReducer),
    /// `POST /v1/reducers/{name}`.
    Reducer,
    /// A procedure: [`ClientMessage::CallProcedure`](crate::ws::ClientMessage::CallProcedure),
    /// `POST /v1/procedures/{name}`.
    Procedure,
    /// A view, per caller or anonymous:
    /// [`ClientMessage::CallView`](crate::ws::ClientMessage::CallView),
    /// `POST /v1/views/{name}`.
    View,
}

/// The kinds of entry point clients call by name, whatever the call's kind (`wasmod call`
/// names no kind); HTTP handlers are called by route, lifecycle and scheduled reducers by the
/// host alone.
pub const CALLED_BY_NAME: [EntryKind; 4] = [
    EntryKind::Reducer,
    EntryKind::Procedure,
    EntryKind::View,
    EntryKind::AnonymousView,
];

impl CallKind {
    /// The kinds of entry point a call of this kind finds its name among.
    pub const fn entry_kinds(self) -> &'static [EntryKind] {
        match self {
            Self::Reducer => &[EntryKind::Reducer],
            Self::Procedure => &[EntryKind::Procedure],
            Self::View => &[EntryKind::View, EntryKind::AnonymousView],
        }
    }

    /// The kinds a call of `kind` reaches: [`CallKind::entry_kinds`], or with no kind named,
    /// every kind called by name ([`CALLED_BY_NAME`]).
    pub const fn reaches(kind: Option<Self>) -> &'static [EntryKind] {
        match kind {
            Some(kind) => kind.entry_kinds(),
            None => &CALLED_BY_NAME,
        }
    }

    /// Its name, as the API's messages and the metrics' `kind` label write it.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Reducer => EntryKind::Reducer.as_str(),
            Self::Procedure => EntryKind::Procedure.as_str(),
            Self::View => EntryKind::View.as_str(),
        }
    }

    /// The tag of its message: the variant's position in
    /// [`ClientMessage`](crate::ws::ClientMessage).
    pub(crate) const fn message_tag(self) -> u8 {
        match self {
            Self::Reducer => 0,
            Self::Procedure => 1,
            Self::View => 2,
        }
    }
}

/// An entry point found in a module's description.
#[derive(Clone, Copy, Debug)]
pub struct EntryPoint<'m> {
    /// Its kind.
    pub kind: EntryKind,
    /// Its name.
    pub name: &'m str,
    /// Its parameters, after the context.
    pub params: &'m [ParamDef],
    /// The type it returns; `None` for reducers.
    pub returns: Option<&'m AlgebraicType>,
    typespace: &'m Typespace,
}

/// Finds the entry point `name` among the kinds `kinds` (reducers, procedures, views and
/// anonymous views: the kinds called by name).
///
/// Fails with `no_such_entry` (saying what `name` is, if it is an entry point of another kind),
/// `lifecycle_reducer` or `scheduled_reducer`.
pub fn find<'m>(
    module: &'m ModuleDef,
    name: &str,
    kinds: &[EntryKind],
) -> Result<EntryPoint<'m>, ApiError> {
    let found = kinds
        .iter()
        .find_map(|&kind| module.entry_points_of(kind).find(|def| def.name == name));
    if let Some(def) = found {
        if def.lifecycle.is_some() {
            return Err(ApiError::new(
                ErrorCode::LifecycleReducer,
                format!("`{name}` is a lifecycle reducer: only the host calls it"),
            ));
        }
        if def.kind == EntryKind::Reducer {
            if let Some(table) = module.tables.iter().find(|table| {
                table
                    .schedule
                    .as_ref()
                    .is_some_and(|schedule| schedule.reducer == name)
            }) {
                return Err(ApiError::new(
                    ErrorCode::ScheduledReducer,
                    format!(
                        "`{name}` is called with the rows of the schedule table `{}`: only the host calls it, when a row is due",
                        table.name
                    ),
                ));
            }
        }
        return Ok(EntryPoint {
            kind: def.kind,
            name: def.name,
            params: def.params,
            returns: def.returns,
            typespace: &module.typespace,
        });
    }
    let wanted = match kinds {
        [EntryKind::View, EntryKind::AnonymousView]
        | [EntryKind::AnonymousView, EntryKind::View] => "view",
        [one] => one.as_str(),
        _ => "reducer, procedure or view",
    };
    let message = match module.entry_point_names().find(|&(_, other)| other == name) {
        Some((actual, _)) => {
            format!("`{name}` is not a {wanted}: it is one of the module's {actual}s")
        }
        None => format!("the module has no {wanted} named `{name}`"),
    };
    Err(ApiError::new(ErrorCode::NoSuchEntry, message))
}

impl EntryPoint<'_> {
    /// Encodes the JSON arguments (an array in parameter order, or an object keyed by
    /// parameter name; `null` also stands for none, where none are taken) as the module
    /// expects them. Refused arguments are described as they were given (`null` as `null`).
    pub fn encode_args(&self, args: &Json) -> Result<Vec<u8>, ApiError> {
        if args.is_null() && self.params.is_empty() {
            return Ok(Vec::new());
        }
        args_from_json(self.params, self.typespace, args).map_err(|error| {
            let error = error.in_entry_point(self.kind.as_str(), self.name);
            ApiError::new(ErrorCode::BadArguments, error.to_string())
        })
    }

    /// The answer to a call that returned the encoded value `bytes` after `duration`, when
    /// the last commit was `offset`: the value as [`value`](Self::value) renders it.
    pub fn returned(
        &self,
        bytes: &[u8],
        offset: u64,
        duration: Duration,
    ) -> Result<CallResponse, ApiError> {
        Ok(CallResponse::returned(self.value(bytes)?, offset, duration))
    }

    /// The encoded value `bytes` the entry point returned, in the JSON mapping of its return
    /// type; `module_error` if the bytes are not a value of that type.
    pub fn value(&self, bytes: &[u8]) -> Result<Box<RawValue>, ApiError> {
        let unit = AlgebraicType::Product(Vec::new());
        let returns = self.returns.unwrap_or(&unit);
        value_json(returns, self.typespace, bytes).map_err(|error| {
            ApiError::new(
                ErrorCode::ModuleError,
                format!(
                    "{} `{}` returned a value that does not match its description: {error}",
                    self.kind, self.name
                ),
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use wasmod_abi::{ProcedureDef, ReducerDef, ViewDef};

    fn module() -> ModuleDef {
        let param = |name: &str, ty| ParamDef {
            name: name.into(),
            ty,
        };
        ModuleDef {
            reducers: vec![
                ReducerDef {
                    name: "init".into(),
                    params: vec![],
                    lifecycle: Some(wasmod_abi::Lifecycle::Init),
                },
                ReducerDef {
                    name: "send".into(),
                    params: vec![param("text", AlgebraicType::String)],
                    lifecycle: None,
                },
            ],
            procedures: vec![ProcedureDef {
                name: "double".into(),
                params: vec![param("n", AlgebraicType::U32)],
                returns: AlgebraicType::U64,
            }],
            anonymous_views: vec![ViewDef {
                name: "recent".into(),
                params: vec![],
                returns: AlgebraicType::Array(Box::new(AlgebraicType::String)),
            }],
            ..ModuleDef::default()
        }
    }

    #[test]
    fn the_reducer_of_a_schedule_table_is_refused() {
        let mut module = module();
        let mut table = wasmod_abi::TableDef::of_columns(&mut module.typespace, "Job", "job", &[]);
        table.schedule = Some(wasmod_abi::ScheduleDef {
            reducer: "send".into(),
            at: 0,
        });
        module.tables.push(table);
        let error = refused(&module, "send", &EntryKind::ALL);
        assert_eq!(error.code, ErrorCode::ScheduledReducer);
        assert!(
            error.message.contains("schedule table `job`"),
            "{}",
            error.message
        );
        assert_eq!(error.code.http_status(), 403);
    }

    fn refused(module: &ModuleDef, name: &str, kinds: &[EntryKind]) -> ApiError {
        find(module, name, kinds).expect_err("refused")
    }

    #[test]
    fn entry_points_are_found_among_the_kinds_asked_for() {
        let module = module();
        let views = [EntryKind::View, EntryKind::AnonymousView];
        let found = find(&module, "recent", &views).unwrap();
        assert_eq!(
            (found.kind, found.name),
            (EntryKind::AnonymousView, "recent")
        );
        let found = find(&module, "double", &EntryKind::ALL).unwrap();
        assert_eq!(found.kind, EntryKind::Procedure);

        let lifecycle = refused(&module, "init", &[EntryKind::Reducer]);
        assert_eq!(lifecycle.code, ErrorCode::LifecycleReducer);
        let misplaced = refused(&module, "double", &[EntryKind::Reducer]);
        assert_eq!(misplaced.code, ErrorCode::NoSuchEntry);
        assert_eq!(
            misplaced.message,
            "`double` is not a reducer: it is one of the module's procedures"
        );
        assert_eq!(
            refused(&module, "nope", &views).message,
            "the module has no view named `nope`"
        );
        assert_eq!(
            refused(&module, "nope", &EntryKind::ALL).message,
            "the module has no reducer, procedure or view named `nope`"
        );
    }

    #[test]
    fn arguments_are_encoded_and_results_rendered() {
        let module = module();
        let send = find(&module, "send", &[EntryKind::Reducer]).unwrap();
        assert_eq!(send.encode_args(&json!(["hi"])).unwrap(), b"\x02\0\0\0hi");
        let wrong = send.encode_args(&json!([1])).unwrap_err();
        assert_eq!(wrong.code, ErrorCode::BadArguments);
        assert_eq!(
            wrong.message,
            "argument `text` of reducer `send`: expected a string, found 1"
        );

        let null = send.encode_args(&Json::Null).unwrap_err();
        assert_eq!(null.code, ErrorCode::BadArguments);
        assert!(null.message.ends_with("found null"), "{}", null.message);
        let none = send.encode_args(&json!([])).unwrap_err();
        assert!(
            none.message.ends_with("found an array of 0 items"),
            "{}",
            none.message
        );

        let recent = find(&module, "recent", &[EntryKind::AnonymousView]).unwrap();
        assert!(recent.encode_args(&Json::Null).unwrap().is_empty());
        assert!(recent.encode_args(&json!([])).unwrap().is_empty());
        let mut rows = 1u32.to_le_bytes().to_vec();
        rows.extend(b"\x01\0\0\0a");
        let answer = recent.returned(&rows, 3, Duration::from_micros(5)).unwrap();
        assert_eq!(
            serde_json::to_string(&answer).unwrap(),
            r#"{"duration_us":5,"offset":3,"result":["a"],"status":"returned"}"#
        );
        let broken = recent.returned(&[9], 3, Duration::ZERO).unwrap_err();
        assert_eq!(broken.code, ErrorCode::ModuleError);
        assert!(broken
            .message
            .starts_with("anonymous view `recent` returned a value that does not match"));
    }
}
