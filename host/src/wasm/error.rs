//! Why a wasm module could not be loaded.

use crate::call::LoadError;
use std::fmt;

/// Why a [`WasmModule`](super::WasmModule) (or a [`WasmEngine`](super::WasmEngine)) could not
/// be made.
#[derive(Debug)]
#[non_exhaustive]
pub enum WasmError {
    /// The engine could not be created (an invalid [`EngineConfig`](super::EngineConfig)).
    Engine(String),
    /// The bytes are not a valid wasm module, or it did not compile.
    Compile(String),
    /// The module's imports or exports do not match the ABI: one line per problem, each naming
    /// the import or export.
    Abi(Vec<String>),
    /// The module could not be instantiated (its initial memory is over the cap, or its start
    /// function trapped).
    Instantiate(String),
    /// The module was instantiated but did not load: its description failed, did not decode
    /// or is invalid, or its `init` reducer did not succeed.
    Load(LoadError),
}

impl fmt::Display for WasmError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Engine(message) => write!(f, "the wasm engine could not be created: {message}"),
            Self::Compile(message) => write!(f, "the module does not compile: {message}"),
            Self::Abi(problems) => {
                write!(f, "the module does not match the wasmod ABI:")?;
                for problem in problems {
                    write!(f, "\n  - {problem}")?;
                }
                Ok(())
            }
            Self::Instantiate(message) => {
                write!(f, "the module could not be instantiated: {message}")
            }
            Self::Load(error) => error.fmt(f),
        }
    }
}

impl std::error::Error for WasmError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Load(error) => Some(error),
            _ => None,
        }
    }
}

impl From<LoadError> for WasmError {
    fn from(error: LoadError) -> Self {
        Self::Load(error)
    }
}
