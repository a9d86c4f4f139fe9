//! The log's files are private to the user who runs the server: directories are created
//! with mode `0700` and files with `0600` (on Unix), from their creation on, so that no other
//! local user can read a module's data, even for a moment. (A file or directory that already
//! exists keeps its mode: the operator chose it.)

use std::fs::{self, OpenOptions};
use std::io;
use std::path::Path;

/// Creates `dir` and its missing parents, each with mode `0700` (the server's data directory
/// too, which holds the log and the signing secret).
pub fn create_dir(dir: &Path) -> io::Result<()> {
    let mut builder = fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(dir)
}

/// Options that create files with mode `0600`; the caller says how to open them.
pub(crate) fn file_options() -> OpenOptions {
    #[cfg_attr(not(unix), allow(unused_mut))]
    let mut options = OpenOptions::new();
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    options
}
