//! Rows, arguments and returned values in JSON, for clients that know a module only from its
//! description (`GET /v1/module`) rather than from Rust types: the browser client (`web`)
//! and any dynamic tool.
//!
//! [`JsonModule`] reads the description's type names back into types
//! ([`ModuleDescription::typespace`]) once, then converts through the protocol's JSON mapping
//! (`wasmod_protocol::json`), the one the HTTP API uses: a row a browser sees is the row
//! `GET /v1/tables` shows, and arguments are accepted as `POST /v1/reducers` accepts them (an
//! array in parameter order, or an object keyed by parameter name). Whole server messages are
//! written in the JSON protocol's form by [`JsonModule::message_json`] (`message`).

mod message;

use crate::Error;
use crate::HashMap;
use serde_json::value::RawValue;
use serde_json::Value as Json;
use wasmod_abi::{AlgebraicType, ParamDef, Typespace};
use wasmod_protocol::description::{DescribedTypes, FunctionDescription, ModuleDescription};
use wasmod_protocol::errors::{ApiError, ErrorCode};
use wasmod_protocol::json::{args_from_json, value_json};

/// The kinds of entry point called with JSON.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum JsonCall {
    /// A reducer (it returns nothing but its commit).
    Reducer,
    /// A procedure.
    Procedure,
    /// A view (with parameters, or anonymous).
    View,
}

impl JsonCall {
    fn as_str(self) -> &'static str {
        match self {
            Self::Reducer => "reducer",
            Self::Procedure => "procedure",
            Self::View => "view",
        }
    }
}

/// An entry point's parameters and return type.
#[derive(Clone, Debug)]
struct Signature {
    params: Vec<ParamDef>,
    returns: AlgebraicType,
}

/// A module's types as its description gives them, ready to convert rows and calls.
#[derive(Clone, Debug)]
pub struct JsonModule {
    typespace: Typespace,
    tables: HashMap<String, AlgebraicType>,
    primary_keys: HashMap<String, String>,
    calls: HashMap<(&'static str, String), Signature>,
}

impl JsonModule {
    /// The types of `description`'s tables and entry points; an error if one of its type
    /// names does not read back.
    pub fn new(description: &ModuleDescription) -> Result<Self, Error> {
        let types = description.typespace().map_err(Error::Protocol)?;
        let parse = |text: &str| types.parse(text).map_err(Error::Protocol);
        let mut tables = HashMap::default();
        let mut primary_keys = HashMap::default();
        for table in &description.tables {
            tables.insert(table.name.clone(), parse(&table.row_type)?);
            if let Some(key) = &table.primary_key {
                primary_keys.insert(table.name.clone(), key.clone());
            }
        }
        let mut calls = HashMap::default();
        for reducer in &description.reducers {
            let signature = Signature {
                params: params(&types, &reducer.params)?,
                returns: AlgebraicType::Product(Vec::new()),
            };
            calls.insert(
                (JsonCall::Reducer.as_str(), reducer.name.clone()),
                signature,
            );
        }
        let functions = [
            (JsonCall::Procedure, &description.procedures),
            (JsonCall::View, &description.views),
            (JsonCall::View, &description.anonymous_views),
        ];
        for (kind, list) in functions {
            for function in list {
                calls.insert(
                    (kind.as_str(), function.name.clone()),
                    signature(&types, function)?,
                );
            }
        }
        Ok(Self {
            typespace: types.typespace,
            tables,
            primary_keys,
            calls,
        })
    }

    /// The named types the module's row and parameter types refer to.
    pub fn typespace(&self) -> &Typespace {
        &self.typespace
    }

    /// Table `table`'s row type, if the description has the table.
    pub fn row_type(&self, table: &str) -> Option<&AlgebraicType> {
        self.tables.get(table)
    }

    /// Table `table`'s primary key column, if it has one.
    pub fn primary_key(&self, table: &str) -> Option<&str> {
        self.primary_keys.get(table).map(String::as_str)
    }

    /// The names of the tables.
    pub fn tables(&self) -> impl Iterator<Item = &str> {
        self.tables.keys().map(String::as_str)
    }

    /// A row of `table` (its encoding) as JSON.
    pub fn row_json(&self, table: &str, row: &[u8]) -> Result<Box<RawValue>, Error> {
        let row_type = self.row_type(table).ok_or_else(|| {
            Error::Api(ApiError::new(
                ErrorCode::NoSuchTable,
                format!("the module has no public table `{table}`"),
            ))
        })?;
        value_json(row_type, &self.typespace, row)
            .map_err(|error| Error::Protocol(format!("a row of `{table}`: {error}")))
    }

    /// The encoding of `args` (JSON: an array in parameter order, an object keyed by
    /// parameter name, or `null` for none) for entry point `name` of kind `kind`.
    pub fn args(&self, kind: JsonCall, name: &str, args: &Json) -> Result<Vec<u8>, Error> {
        let signature = self.signature(kind, name)?;
        let none = Json::Array(Vec::new());
        let args = if args.is_null() { &none } else { args };
        args_from_json(&signature.params, &self.typespace, args).map_err(|error| {
            let error = error.in_entry_point(kind.as_str(), name);
            Error::Api(ApiError::new(ErrorCode::BadArguments, error.to_string()))
        })
    }

    /// What entry point `name` of kind `kind` returned (its encoding) as JSON.
    pub fn returned_json(
        &self,
        kind: JsonCall,
        name: &str,
        bytes: &[u8],
    ) -> Result<Box<RawValue>, Error> {
        let signature = self.signature(kind, name)?;
        value_json(&signature.returns, &self.typespace, bytes).map_err(|error| {
            Error::Protocol(format!("{} `{name}` returned: {error}", kind.as_str()))
        })
    }

    fn signature(&self, kind: JsonCall, name: &str) -> Result<&Signature, Error> {
        self.calls
            .get(&(kind.as_str(), name.to_owned()))
            .ok_or_else(|| {
                Error::Api(ApiError::new(
                    ErrorCode::NoSuchEntry,
                    format!("the module has no {} named `{name}`", kind.as_str()),
                ))
            })
    }
}

fn params(
    types: &DescribedTypes,
    typed: &[wasmod_protocol::description::Typed],
) -> Result<Vec<ParamDef>, Error> {
    Ok(types
        .fields(typed)
        .map_err(Error::Protocol)?
        .into_iter()
        .map(|(name, ty)| ParamDef { name, ty })
        .collect())
}

fn signature(types: &DescribedTypes, function: &FunctionDescription) -> Result<Signature, Error> {
    Ok(Signature {
        params: params(types, &function.params)?,
        returns: types.parse(&function.returns).map_err(Error::Protocol)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use wasmod_abi::encoding::to_vec;
    use wasmod_abi::{
        Field, Identity, ModuleDef, ProcedureDef, ReducerDef, TableDef, Timestamp, TypeDef,
    };
    use wasmod_protocol::description::{describe, Tables};

    /// A chat's description: `message { id: u64, sender: Identity, sent: Timestamp, text:
    /// String }` keyed by `id`, reducer `send(text)`, procedure `echo(n: Option<u32>) -> Vec<u32>`.
    fn module() -> JsonModule {
        let mut typespace = Typespace::default();
        let mut table = TableDef::of_columns(
            &mut typespace,
            "chat::Message",
            "message",
            &[
                ("id", AlgebraicType::U64),
                ("sender", AlgebraicType::Identity),
                ("sent", AlgebraicType::Timestamp),
                ("text", AlgebraicType::String),
            ],
        );
        table.primary_key = Some(0);
        typespace.types.push(TypeDef {
            name: "chat::Unused".into(),
            ty: AlgebraicType::Product(vec![Field::named("x", AlgebraicType::Bool)]),
        });
        let param = |name: &str, ty| ParamDef {
            name: name.into(),
            ty,
        };
        let def = ModuleDef {
            typespace,
            tables: vec![table],
            reducers: vec![ReducerDef {
                name: "send".into(),
                params: vec![param("text", AlgebraicType::String)],
                lifecycle: None,
            }],
            procedures: vec![ProcedureDef {
                name: "echo".into(),
                params: vec![param(
                    "n",
                    AlgebraicType::Option(Box::new(AlgebraicType::U32)),
                )],
                returns: AlgebraicType::Array(Box::new(AlgebraicType::U32)),
            }],
            ..ModuleDef::default()
        };
        JsonModule::new(&describe(&def, Tables::PublicOnly)).expect("the description reads back")
    }

    #[test]
    fn a_row_is_the_json_of_its_columns() {
        let module = module();
        let row = to_vec(&(
            7u64,
            Identity::from_bytes([0xab; 32]),
            Timestamp::from_micros_since_unix_epoch(1_700_000_000_000_000),
            "hello".to_owned(),
        ));
        let json: Json =
            serde_json::from_str(module.row_json("message", &row).expect("a row").get())
                .expect("JSON");
        assert_eq!(
            json,
            json!({
                "id": 7,
                "sender": "ab".repeat(32),
                "sent": 1_700_000_000_000_000u64,
                "text": "hello",
            })
        );
        assert_eq!(module.primary_key("message"), Some("id"));
        assert!(matches!(
            module.row_json("message", &row[..5]),
            Err(Error::Protocol(_))
        ));
        assert!(matches!(module.row_json("nope", &row), Err(Error::Api(_))));
    }

    #[test]
    fn arguments_are_encoded_by_position_or_by_name() {
        let module = module();
        let expected = to_vec(&("hi".to_owned(),));
        for args in [json!(["hi"]), json!({"text": "hi"})] {
            assert_eq!(
                module.args(JsonCall::Reducer, "send", &args).ok(),
                Some(expected.clone())
            );
        }
        let bad = module.args(JsonCall::Reducer, "send", &json!([3]));
        assert!(
            matches!(&bad, Err(Error::Api(error)) if error.code == ErrorCode::BadArguments),
            "{bad:?}"
        );
        let missing = module.args(JsonCall::Procedure, "send", &json!([]));
        assert!(
            matches!(&missing, Err(Error::Api(error)) if error.code == ErrorCode::NoSuchEntry),
            "{missing:?}"
        );
        assert_eq!(
            module.args(JsonCall::Procedure, "echo", &Json::Null).ok(),
            None,
            "a parameter is missing"
        );
        assert_eq!(
            module
                .args(JsonCall::Procedure, "echo", &json!([null]))
                .ok(),
            Some(to_vec(&(None::<u32>,)))
        );
    }

    #[test]
    fn a_returned_value_is_json_of_the_return_type() {
        let module = module();
        let bytes = to_vec(&vec![1u32, 2, 3]);
        let json = module
            .returned_json(JsonCall::Procedure, "echo", &bytes)
            .expect("a value");
        assert_eq!(json.get(), "[1,2,3]");
    }
}
