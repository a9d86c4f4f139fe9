//! Reading a description's JSON back (`GET /v1/module`, `wasmod describe --json`): the
//! [`Deserialize`] of [`ModuleDescription`].
//!
//! Written by hand over a [`serde_json::Value`] rather than derived, for the browser client's
//! size: serde's derives gave every `Vec<..>` of the description its own `deserialize_seq`
//! and the tagged [`TypeDescription`] a buffering visitor, some 40 KB of wasm between them,
//! while the client parses JSON into a `Value` anyway (a call's arguments). The one reader,
//! for every client and the `wasmod` command alike.
//!
//! It reads what serde's derives read: keys in any order, unknown keys ignored, a missing or
//! `null` optional field as `None`, any other missing field an error. Errors name the field
//! (`` `tables[0].columns[1].type`: expected a string ``).

use super::{
    FunctionDescription, HttpHandlerDescription, IndexDescription, ModuleDescription,
    ReducerDescription, ScheduleDescription, TableDescription, TypeDescription, Typed,
    VariantDescription,
};
use serde::de::Error as _;
use serde::{Deserialize, Deserializer};
use serde_json::{Map, Value};
use wasmod_abi::Lifecycle;

impl<'de> Deserialize<'de> for ModuleDescription {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let json = Value::deserialize(deserializer)?;
        module(json).map_err(|wrong| D::Error::custom(wrong.message()))
    }
}

impl ModuleDescription {
    /// The description whose JSON is `text`: what `serde_json::from_str` reads, with the same
    /// errors (but for text that is both not a description and followed by more than
    /// whitespace: the latter is the error here, the former there). Through the `Value` parser that reading a call's arguments uses too, where
    /// `from_str::<ModuleDescription>` would inline a copy of it (6 KB of the browser
    /// client's wasm).
    pub fn from_json(text: &str) -> serde_json::Result<Self> {
        let json: Value = serde_json::from_str(text)?;
        module(json).map_err(|wrong| serde_json::Error::custom(wrong.message()))
    }
}

/// What is wrong with the JSON, and where: the keys and positions leading to it, innermost
/// last.
struct Wrong {
    path: Vec<String>,
    what: &'static str,
}

impl Wrong {
    fn new(what: &'static str) -> Self {
        Self {
            path: Vec::new(),
            what,
        }
    }

    /// The same, inside `segment` (`.key` or `[index]`).
    fn inside(mut self, segment: String) -> Self {
        self.path.push(segment);
        self
    }

    /// `` `tables[0].name`: expected a string ``.
    fn message(&self) -> String {
        let path: String = self.path.iter().rev().map(String::as_str).collect();
        let path = path.strip_prefix('.').unwrap_or(&path);
        if path.is_empty() {
            format!("the description: {}", self.what)
        } else {
            format!("`{path}`: {}", self.what)
        }
    }
}

type Read<T> = Result<T, Wrong>;

/// The fields of an object, taken out one by one.
struct Object(Map<String, Value>);

impl Object {
    fn new(json: Value) -> Read<Self> {
        match json {
            Value::Object(map) => Ok(Self(map)),
            _ => Err(Wrong::new("expected an object")),
        }
    }

    /// Field `key`, read by `read`; `null` when it is missing.
    fn get<T>(&mut self, key: &str, read: impl FnOnce(Value) -> Read<T>) -> Read<T> {
        let value = self.0.remove(key);
        let missing = value.is_none();
        read(value.unwrap_or(Value::Null)).map_err(|wrong| {
            let wrong = if missing {
                Wrong::new("missing")
            } else {
                wrong
            };
            wrong.inside(format!(".{key}"))
        })
    }

    /// Field `key`, `None` when it is missing or `null`.
    fn optional<T>(&mut self, key: &str, read: impl FnOnce(Value) -> Read<T>) -> Read<Option<T>> {
        match self.0.remove(key) {
            None | Some(Value::Null) => Ok(None),
            Some(value) => read(value)
                .map(Some)
                .map_err(|wrong| wrong.inside(format!(".{key}"))),
        }
    }

    fn string(&mut self, key: &str) -> Read<String> {
        self.get(key, string)
    }

    fn id(&mut self, key: &str) -> Read<u32> {
        self.get(key, |json| {
            json.as_u64()
                .and_then(|id| u32::try_from(id).ok())
                .ok_or_else(|| Wrong::new("expected an integer from 0 to 4294967295"))
        })
    }

    fn list<T>(&mut self, key: &str, item: fn(Value) -> Read<T>) -> Read<Vec<T>> {
        self.get(key, |json| list(json, item))
    }
}

fn string(json: Value) -> Read<String> {
    match json {
        Value::String(text) => Ok(text),
        _ => Err(Wrong::new("expected a string")),
    }
}

fn list<T>(json: Value, item: fn(Value) -> Read<T>) -> Read<Vec<T>> {
    let Value::Array(items) = json else {
        return Err(Wrong::new("expected an array"));
    };
    items
        .into_iter()
        .enumerate()
        .map(|(index, json)| item(json).map_err(|wrong| wrong.inside(format!("[{index}]"))))
        .collect()
}

fn module(json: Value) -> Read<ModuleDescription> {
    let mut object = Object::new(json)?;
    Ok(ModuleDescription {
        anonymous_views: object.list("anonymous_views", function)?,
        http_handlers: object.list("http_handlers", http_handler)?,
        procedures: object.list("procedures", function)?,
        reducers: object.list("reducers", reducer)?,
        tables: object.list("tables", table)?,
        types: object.list("types", named_type)?,
        views: object.list("views", function)?,
    })
}

fn table(json: Value) -> Read<TableDescription> {
    let mut object = Object::new(json)?;
    Ok(TableDescription {
        auto_inc: object.list("auto_inc", string)?,
        columns: object.list("columns", typed)?,
        id: object.id("id")?,
        indexes: object.list("indexes", index)?,
        name: object.string("name")?,
        primary_key: object.optional("primary_key", string)?,
        public: object.get("public", |json| {
            json.as_bool()
                .ok_or_else(|| Wrong::new("expected true or false"))
        })?,
        row_type: object.string("row_type")?,
        schedule: object.optional("schedule", schedule)?,
        visibility: object.optional("visibility", string)?,
    })
}

fn schedule(json: Value) -> Read<ScheduleDescription> {
    let mut object = Object::new(json)?;
    Ok(ScheduleDescription {
        at: object.string("at")?,
        reducer: object.string("reducer")?,
    })
}

fn typed(json: Value) -> Read<Typed> {
    let mut object = Object::new(json)?;
    Ok(Typed {
        name: object.string("name")?,
        ty: object.string("type")?,
    })
}

fn index(json: Value) -> Read<IndexDescription> {
    let mut object = Object::new(json)?;
    Ok(IndexDescription {
        columns: object.list("columns", string)?,
        id: object.id("id")?,
        name: object.string("name")?,
        unique: object.get("unique", |json| {
            json.as_bool()
                .ok_or_else(|| Wrong::new("expected true or false"))
        })?,
    })
}

fn reducer(json: Value) -> Read<ReducerDescription> {
    let mut object = Object::new(json)?;
    Ok(ReducerDescription {
        id: object.id("id")?,
        lifecycle: object.get("lifecycle", |json| match json {
            Value::Null => Ok(None),
            Value::String(role) => Lifecycle::ALL
                .into_iter()
                .find(|known| known.as_str() == role)
                .map(Some)
                .ok_or_else(|| {
                    Wrong::new("expected a lifecycle role: init, client_connected, client_disconnected or null")
                }),
            _ => Err(Wrong::new("expected a string or null")),
        })?,
        name: object.string("name")?,
        params: object.list("params", typed)?,
    })
}

fn function(json: Value) -> Read<FunctionDescription> {
    let mut object = Object::new(json)?;
    Ok(FunctionDescription {
        id: object.id("id")?,
        name: object.string("name")?,
        params: object.list("params", typed)?,
        returns: object.string("returns")?,
    })
}

fn http_handler(json: Value) -> Read<HttpHandlerDescription> {
    let mut object = Object::new(json)?;
    Ok(HttpHandlerDescription {
        id: object.id("id")?,
        method: object.string("method")?,
        name: object.string("name")?,
        path: object.string("path")?,
    })
}

fn named_type(json: Value) -> Read<TypeDescription> {
    let mut object = Object::new(json)?;
    let kind = object.string("kind")?;
    let name = object.string("name")?;
    match kind.as_str() {
        "struct" => Ok(TypeDescription::Struct {
            name,
            fields: object.list("fields", typed)?,
        }),
        "enum" => Ok(TypeDescription::Enum {
            name,
            variants: object.list("variants", variant)?,
        }),
        "alias" => Ok(TypeDescription::Alias {
            name,
            ty: object.string("type")?,
        }),
        _ => Err(Wrong::new("expected struct, enum or alias").inside(".kind".to_owned())),
    }
}

fn variant(json: Value) -> Read<VariantDescription> {
    let mut object = Object::new(json)?;
    Ok(VariantDescription {
        name: object.string("name")?,
        payload: object.optional("type", string)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn read(json: Value) -> Result<ModuleDescription, String> {
        serde_json::from_value(json).map_err(|error| error.to_string())
    }

    /// A description with every kind of field, as `describe` writes one.
    fn full() -> Value {
        json!({
            "anonymous_views": [{"id": 0, "name": "all", "params": [], "returns": "Vec<u8>"}],
            "http_handlers": [{"id": 0, "method": "GET", "name": "hello", "path": "/hi"}],
            "procedures": [{"id": 0, "name": "roll",
                            "params": [{"name": "sides", "type": "u32"}], "returns": "u32"}],
            "reducers": [
                {"id": 0, "lifecycle": "client_connected", "name": "joined", "params": []},
                {"id": 1, "lifecycle": null, "name": "send",
                 "params": [{"name": "text", "type": "String"}]}
            ],
            "tables": [{
                "auto_inc": ["id"], "columns": [{"name": "id", "type": "u64"}],
                "id": 3, "indexes": [{"columns": ["id"], "id": 0, "name": "by_id", "unique": true}],
                "name": "job", "primary_key": "id", "public": true, "row_type": "Job",
                "schedule": {"at": "at", "reducer": "run"}, "visibility": "owner = :sender"
            }],
            "types": [
                {"fields": [{"name": "id", "type": "u64"}], "kind": "struct", "name": "Job"},
                {"kind": "enum", "name": "Shape",
                 "variants": [{"name": "Dot", "type": "u8"}, {"name": "Empty", "type": null}]},
                {"kind": "alias", "name": "Score", "type": "u64"}
            ],
            "views": [{"id": 1, "name": "mine", "params": [], "returns": "Option<Job>"}]
        })
    }

    #[test]
    fn every_field_reads_back_and_writes_again_the_same() {
        let description = read(full()).expect("a description");
        assert_eq!(serde_json::to_value(&description).unwrap(), full());
        assert_eq!(
            description.reducers[0].lifecycle,
            Some(Lifecycle::ClientConnected)
        );
        assert_eq!(
            description.types[2],
            TypeDescription::Alias {
                name: "Score".into(),
                ty: "u64".into()
            }
        );
    }

    #[test]
    fn optional_fields_may_be_missing_and_unknown_keys_are_ignored() {
        let mut json = full();
        let table = json["tables"][0].as_object_mut().unwrap();
        for key in ["primary_key", "schedule", "visibility"] {
            table.remove(key);
        }
        table.insert("later".into(), json!({"any": [1, 2]}));
        json["types"][1]["variants"][1]
            .as_object_mut()
            .unwrap()
            .remove("type");
        let description = read(json).expect("a description");
        let table = &description.tables[0];
        assert_eq!(
            (&table.primary_key, &table.schedule, &table.visibility),
            (&None, &None, &None)
        );
        assert_eq!(
            description.types[1],
            TypeDescription::Enum {
                name: "Shape".into(),
                variants: vec![
                    VariantDescription {
                        name: "Dot".into(),
                        payload: Some("u8".into())
                    },
                    VariantDescription {
                        name: "Empty".into(),
                        payload: None
                    },
                ]
            }
        );
    }

    #[test]
    fn errors_name_the_field() {
        /// A change that breaks the description, and the error it must give.
        type Case<'a> = (&'a dyn Fn(&mut Value), &'a str);
        let cases: [Case<'_>; 9] = [
            (
                &|json| json["tables"][0]["columns"][0]["type"] = json!(7),
                "`tables[0].columns[0].type`: expected a string",
            ),
            (
                &|json| {
                    json["reducers"][1].as_object_mut().unwrap().remove("name");
                },
                "`reducers[1].name`: missing",
            ),
            (
                &|json| json["tables"][0]["id"] = json!(-1),
                "`tables[0].id`: expected an integer from 0 to 4294967295",
            ),
            (
                &|json| json["tables"][0]["id"] = json!(4_294_967_296_u64),
                "`tables[0].id`: expected an integer from 0 to 4294967295",
            ),
            (
                &|json| json["tables"][0]["indexes"][0]["unique"] = json!("yes"),
                "`tables[0].indexes[0].unique`: expected true or false",
            ),
            (
                &|json| json["reducers"][0]["lifecycle"] = json!("sometimes"),
                "`reducers[0].lifecycle`: expected a lifecycle role: init, client_connected, client_disconnected or null",
            ),
            (
                &|json| json["types"][2]["kind"] = json!("union"),
                "`types[2].kind`: expected struct, enum or alias",
            ),
            (
                &|json| json["views"] = json!({}),
                "`views`: expected an array",
            ),
            (
                &|json| *json = json!([]),
                "the description: expected an object",
            ),
        ];
        for (break_it, message) in cases {
            let mut json = full();
            break_it(&mut json);
            assert_eq!(read(json).unwrap_err(), message);
        }
    }

    #[test]
    fn it_reads_from_text_as_from_a_value() {
        let text = full().to_string();
        let description: ModuleDescription = serde_json::from_str(&text).unwrap();
        assert_eq!(Ok(description), read(full()));
        let error = serde_json::from_str::<ModuleDescription>("{\"tables\": 1")
            .unwrap_err()
            .to_string();
        assert!(error.contains("EOF"), "{error}");
    }

    /// `from_json` reads what `serde_json::from_str` reads, with the same errors: bad JSON
    /// (with its position) and JSON that is not a description (with its path).
    #[test]
    fn from_json_reads_as_from_str() {
        let text = full().to_string();
        assert_eq!(
            ModuleDescription::from_json(&text).unwrap(),
            serde_json::from_str::<ModuleDescription>(&text).unwrap()
        );
        let trailing = format!("{text} x");
        for bad in ["{\"tables\": 1", "{\"tables\": 1}", "[]", &trailing] {
            let ours = ModuleDescription::from_json(bad).unwrap_err().to_string();
            let serde = serde_json::from_str::<ModuleDescription>(bad)
                .unwrap_err()
                .to_string();
            assert_eq!(ours, serde, "{bad}");
        }
    }
}
