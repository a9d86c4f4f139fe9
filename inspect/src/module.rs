//! The parsed module: function index space with names and decoded bodies, exports, imports,
//! and the size of every section.
//!
//! Parsing validates the module first, so that everything later can rely on well-formed
//! bodies (balanced blocks, in-range function indices) and malformed input ends here, as an
//! [`InspectError`], instead of somewhere in the analysis.

use crate::body::Body;
use crate::error::InspectError;
use crate::names::demangle;
use serde::Serialize;
use wasmparser::{
    ExternalKind, KnownCustom, Name, Parser, Payload, TypeRef, Validator, WasmFeatures,
};

/// One section of the binary.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct SectionSize {
    /// The section id (0 for custom sections).
    pub id: u8,
    /// `type`, `import`, `code`, `data`, ..., or `custom:<name>` for a custom section.
    pub name: String,
    /// The size of its contents in bytes (without the id and length that precede them).
    pub size: usize,
}

impl SectionSize {
    /// A section's entry.
    pub(crate) fn new(id: u8, name: String, size: usize) -> Self {
        Self { id, name, size }
    }
}

/// One import.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Import {
    /// The module it is imported from.
    pub module: String,
    /// Its name there.
    pub name: String,
    /// `func`, `table`, `memory`, `global` or `tag`.
    pub kind: &'static str,
}

/// A function of the module's index space: imported functions first, then defined ones.
#[derive(Debug, Default)]
pub(crate) struct Function {
    /// The demangled name from the name section, or a `func[N]` placeholder.
    pub name: String,
    /// The decoded body; empty for an imported function.
    pub body: Body,
    /// Whether the function is imported (and so has no body to look into).
    pub imported: bool,
}

/// What the analysis needs of a module.
#[derive(Debug, Default)]
pub(crate) struct Module {
    /// Every function, by index.
    pub functions: Vec<Function>,
    /// Exported functions: name and function index.
    pub exports: Vec<(String, u32)>,
    /// Every import, of any kind.
    pub imports: Vec<Import>,
    /// Every section, in file order.
    pub sections: Vec<SectionSize>,
    /// The length of the whole binary.
    pub total_size: usize,
}

impl Module {
    /// Validates and parses `wasm`.
    pub fn parse(wasm: &[u8]) -> Result<Self, InspectError> {
        Validator::new_with_features(WasmFeatures::all()).validate_all(wasm)?;
        let mut module = Self {
            total_size: wasm.len(),
            ..Self::default()
        };
        let mut named = false;
        let mut next_body = 0;
        for payload in Parser::new(0).parse_all(wasm) {
            let payload = payload?;
            if let Some((id, range)) = payload.as_section() {
                module
                    .sections
                    .push(SectionSize::new(id, section_name(&payload), range.len()));
            }
            match payload {
                Payload::ImportSection(reader) => module.read_imports(reader)?,
                Payload::FunctionSection(reader) => {
                    let count = reader.count() as usize;
                    module
                        .functions
                        .extend((0..count).map(|_| Function::default()));
                }
                Payload::ExportSection(reader) => {
                    for export in reader {
                        let export = export?;
                        if export.kind == ExternalKind::Func {
                            module.exports.push((export.name.to_owned(), export.index));
                        }
                    }
                }
                Payload::CodeSectionStart { .. } => {
                    next_body = module.functions.iter().filter(|f| f.imported).count();
                }
                Payload::CodeSectionEntry(body) => {
                    if let Some(function) = module.functions.get_mut(next_body) {
                        function.body = Body::decode(&body)?;
                    }
                    next_body += 1;
                }
                Payload::CustomSection(reader) => {
                    if let KnownCustom::Name(names) = reader.as_known() {
                        named |= module.read_names(names)?;
                    }
                }
                _ => {}
            }
        }
        if !named {
            return Err(InspectError::NoNames);
        }
        for (index, function) in module.functions.iter_mut().enumerate() {
            if function.name.is_empty() {
                function.name = format!("func[{index}]");
            }
        }
        Ok(module)
    }

    /// The function at `index`, if the index is in range.
    pub fn function(&self, index: u32) -> Option<&Function> {
        self.functions.get(index as usize)
    }

    /// The name of the function at `index`.
    pub fn name(&self, index: u32) -> &str {
        self.function(index)
            .map_or("<out of range>", |function| &function.name)
    }

    /// Records the imports; imported functions open the function index space.
    fn read_imports(
        &mut self,
        reader: wasmparser::ImportSectionReader<'_>,
    ) -> Result<(), InspectError> {
        for import in reader.into_imports() {
            let import = import?;
            let kind = match import.ty {
                TypeRef::Func(_) | TypeRef::FuncExact(_) => {
                    self.functions.push(Function {
                        imported: true,
                        ..Function::default()
                    });
                    "func"
                }
                TypeRef::Table(_) => "table",
                TypeRef::Memory(_) => "memory",
                TypeRef::Global(_) => "global",
                TypeRef::Tag(_) => "tag",
            };
            self.imports.push(Import {
                module: import.module.to_owned(),
                name: import.name.to_owned(),
                kind,
            });
        }
        Ok(())
    }

    /// Applies the function names; returns whether there were any.
    fn read_names(
        &mut self,
        names: wasmparser::NameSectionReader<'_>,
    ) -> Result<bool, InspectError> {
        let mut any = false;
        for subsection in names {
            if let Name::Function(map) = subsection? {
                for naming in map {
                    let naming = naming?;
                    if let Some(function) = self.functions.get_mut(naming.index as usize) {
                        function.name = demangle(naming.name);
                        any = true;
                    }
                }
            }
        }
        Ok(any)
    }
}

/// A section's display name: its kind, or `custom:<name>` for a custom section.
fn section_name(payload: &Payload<'_>) -> String {
    let kind = match payload {
        Payload::CustomSection(reader) => return format!("custom:{}", reader.name()),
        Payload::TypeSection(_) => "type",
        Payload::ImportSection(_) => "import",
        Payload::FunctionSection(_) => "function",
        Payload::TableSection(_) => "table",
        Payload::MemorySection(_) => "memory",
        Payload::TagSection(_) => "tag",
        Payload::GlobalSection(_) => "global",
        Payload::ExportSection(_) => "export",
        Payload::StartSection { .. } => "start",
        Payload::ElementSection(_) => "element",
        Payload::DataCountSection { .. } => "datacount",
        Payload::DataSection(_) => "data",
        Payload::CodeSectionStart { .. } => "code",
        _ => "other",
    };
    kind.to_owned()
}
