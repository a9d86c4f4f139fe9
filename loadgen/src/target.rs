//! What a measurement runs against: `wasmod serve`, or a bare broadcast floor on one
//! WebSocket library ([`crate::floor`]), each as its own process on a loopback port.

use crate::audience::Subscribe;
use crate::floor::Library;
use crate::process::{self, Served};
use crate::Paths;
use anyhow::{Context, Result};

/// A server to measure.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    /// `wasmod serve` on the quickstart.
    Wasmod,
    /// A bare broadcast floor on a WebSocket library.
    Floor(Library),
}

/// Every target: wasmod first, then the floors.
pub const ALL: [Target; 3] = [
    Target::Wasmod,
    Target::Floor(Library::Tungstenite),
    Target::Floor(Library::TokioWebsockets),
];

/// A started target: its process and, for wasmod, its data directory (removed on drop,
/// after the process is killed).
#[derive(Debug)]
pub struct Started {
    /// The process.
    pub served: Served,
    _data: Option<tempfile::TempDir>,
}

impl Started {
    /// The WebSocket endpoint.
    pub fn url(&self) -> String {
        format!("{}/v1/subscribe", self.served.ws_base)
    }
}

impl Target {
    /// The target's name in reports.
    pub fn name(self) -> String {
        match self {
            Self::Wasmod => "wasmod serve".into(),
            Self::Floor(library) => format!("floor: {}", library.name()),
        }
    }

    /// What its clients subscribe to.
    pub fn subscribe(self) -> Subscribe {
        match self {
            Self::Wasmod => Subscribe::Messages,
            Self::Floor(_) => Subscribe::Nothing,
        }
    }

    /// Starts the target; `wasmod_arguments` go to `wasmod serve` (a floor has none).
    pub async fn start(self, paths: &Paths, wasmod_arguments: &[&str]) -> Result<Started> {
        match self {
            Self::Wasmod => {
                let data = tempfile::tempdir().context("a data directory")?;
                let served = process::wasmod_serve(
                    &paths.wasmod,
                    &paths.module,
                    data.path(),
                    wasmod_arguments,
                )
                .await?;
                Ok(Started {
                    served,
                    _data: Some(data),
                })
            }
            Self::Floor(library) => {
                let mut command = std::process::Command::new(&paths.loadgen);
                command.args(["floor-server", "--library", library.argument()]);
                Ok(Started {
                    served: Served::start(command).await?,
                    _data: None,
                })
            }
        }
    }
}
