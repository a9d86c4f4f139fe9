//! Checking a module against the ABI before it is instantiated.
//!
//! wasmtime would refuse an unknown import on its own, but with one error at a time and in
//! its words; a module author needs the whole list, each entry naming the import or export
//! and saying what the ABI expects. Imports are checked against the linker itself (the one
//! list of what the host provides), exports against the signatures of `docs/abi.md`.

use super::store::StoreData;
use std::collections::HashMap;
use wasmod_abi::names::{DESCRIBE_MODULE, IMPORT_MODULE};
use wasmod_abi::EntryKind;
use wasmtime::{Engine, Extern, ExternType, FuncType, Linker, Module, Store, ValType};

/// The name of the memory every module exports.
pub(crate) const MEMORY: &str = "memory";

/// The parameters of `__describe_module__`: the sink.
const DESCRIBE_PARAMS: &[Num] = &[Num::I32];

/// The parameters of a dispatch export of `kind`: the id, the caller (identity and connection
/// id as words) if [`EntryKind::takes_caller`], the timestamp, the byte source and the sink.
fn dispatch_params(kind: EntryKind) -> &'static [Num] {
    use Num::{I32, I64};
    if kind.takes_caller() {
        &[I32, I64, I64, I64, I64, I64, I64, I64, I32, I32]
    } else {
        &[I32, I64, I32, I32]
    }
}

/// The number types of the exports' signatures.
#[derive(Clone, Copy)]
enum Num {
    I32,
    I64,
}

impl Num {
    fn val_type(self) -> ValType {
        match self {
            Self::I32 => ValType::I32,
            Self::I64 => ValType::I64,
        }
    }
}

/// The type of every import the host provides, by name.
pub(crate) struct ImportTypes {
    types: HashMap<String, FuncType>,
}

impl ImportTypes {
    /// The function types of `linker`'s definitions in the ABI's import module.
    pub(crate) fn of(linker: &Linker<StoreData>, store: &mut Store<StoreData>) -> Self {
        let definitions: Vec<(String, Extern)> = linker
            .iter(&mut *store)
            .filter(|(module, _, _)| *module == IMPORT_MODULE)
            .map(|(_, name, definition)| (name.to_owned(), definition))
            .collect();
        let types = definitions
            .into_iter()
            .filter_map(|(name, definition)| Some((name, definition.into_func()?.ty(&*store))))
            .collect();
        Self { types }
    }
}

/// Checks `module`'s imports and exports; every mismatch is one line of the error.
pub(crate) fn check_module(module: &Module, imports: &ImportTypes) -> Result<(), Vec<String>> {
    let mut problems = Vec::new();
    for import in module.imports() {
        let (from, name) = (import.module(), import.name());
        if from != IMPORT_MODULE {
            problems.push(format!(
                "import `{from}::{name}`: wasmod modules import only from `{IMPORT_MODULE}`"
            ));
            continue;
        }
        let Some(expected) = imports.types.get(name) else {
            problems.push(format!(
                "import `{from}::{name}`: the host has no such function (ABI `{IMPORT_MODULE}`)"
            ));
            continue;
        };
        match import.ty() {
            ExternType::Func(actual) if FuncType::eq(&actual, expected) => {}
            actual => problems.push(format!(
                "import `{from}::{name}` is {}, but the ABI's is {}",
                describe(&actual),
                describe_func(expected)
            )),
        }
    }

    let engine = module.engine();
    let dispatch = EntryKind::ALL
        .into_iter()
        .map(|kind| (kind.export(), dispatch_params(kind)));
    for (name, params) in [(DESCRIBE_MODULE, DESCRIBE_PARAMS)]
        .into_iter()
        .chain(dispatch)
    {
        let expected = export_type(engine, params);
        match module.get_export(name) {
            None => problems.push(format!(
                "missing export `{name}`: the ABI requires {}",
                describe_func(&expected)
            )),
            Some(ExternType::Func(actual)) if FuncType::eq(&actual, &expected) => {}
            Some(actual) => problems.push(format!(
                "export `{name}` is {}, but the ABI's is {}",
                describe(&actual),
                describe_func(&expected)
            )),
        }
    }
    match module.get_export(MEMORY) {
        None => problems.push(format!(
            "missing export `{MEMORY}`: the ABI requires the module's memory"
        )),
        Some(ExternType::Memory(memory)) if memory.is_64() => problems.push(format!(
            "export `{MEMORY}` is a 64-bit memory, but the ABI's is 32-bit"
        )),
        Some(ExternType::Memory(memory)) if memory.is_shared() => problems.push(format!(
            "export `{MEMORY}` is a shared memory, but the ABI's is not shared"
        )),
        Some(ExternType::Memory(_)) => {}
        Some(actual) => problems.push(format!(
            "export `{MEMORY}` is {}, but the ABI's is a memory",
            describe(&actual)
        )),
    }

    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems)
    }
}

/// The type of a dispatch export with `params`.
fn export_type(engine: &Engine, params: &[Num]) -> FuncType {
    FuncType::new(
        engine,
        params.iter().map(|num| num.val_type()),
        [ValType::I32],
    )
}

/// What an import or export is, for a message: `a function of type ...`, `a memory`, ...
fn describe(ty: &ExternType) -> String {
    match ty {
        ExternType::Func(func) => describe_func(func),
        ExternType::Global(_) => "a global".into(),
        ExternType::Table(_) => "a table".into(),
        ExternType::Memory(_) => "a memory".into(),
        ExternType::Tag(_) => "an exception tag".into(),
    }
}

/// `a function (i32, i64) -> i32`.
fn describe_func(func: &FuncType) -> String {
    let list = |types: &mut dyn ExactSizeIterator<Item = ValType>| {
        types
            .map(|ty| ty.to_string())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let params = list(&mut func.params());
    match func.results().len() {
        0 => format!("a function ({params})"),
        _ => format!("a function ({params}) -> {}", list(&mut func.results())),
    }
}
