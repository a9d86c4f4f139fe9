//! The server's signing secret: made once with the operating system's CSPRNG, kept in the data
//! directory, readable by its owner only.
//!
//! Tokens are signed with this secret (see [`crate::auth`]), so it must survive restarts (or
//! every client would have to obtain a new identity) and must not leak (anyone holding it can
//! act as any identity). It lives in `<data>/identity-secret` as 64 hex digits; the directory
//! is created with mode `0700` and the file with `0600` (on Unix), atomically with the file's
//! creation, so it is never readable by others even for a moment. A secret file that other
//! users can read or write is refused, with how to fix it: another local user who planted (or
//! read) it could forge a token for any identity. A data directory that exists already and
//! that other users may enter or list is made private (`0700`) at start, with a warning; if it
//! cannot be (it is another user's), the start fails. The directory also gets a `.gitignore`
//! of `*`, so a data directory next to a module's sources is never committed by mistake.

use std::fmt;
use std::fs::{self, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// The name of the secret's file in the data directory.
pub const SECRET_FILE: &str = "identity-secret";

/// The length of the secret, in bytes.
pub const SECRET_LEN: usize = 32;

/// The key tokens are signed with.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret([u8; SECRET_LEN]);

impl Secret {
    /// A secret from its bytes (for tests and tools that sign tokens themselves).
    pub const fn from_bytes(bytes: [u8; SECRET_LEN]) -> Self {
        Self(bytes)
    }

    /// A fresh secret from the operating system's CSPRNG.
    pub fn generate() -> io::Result<Self> {
        let mut bytes = [0; SECRET_LEN];
        getrandom::fill(&mut bytes).map_err(io::Error::other)?;
        Ok(Self(bytes))
    }

    /// The secret's bytes.
    pub fn as_bytes(&self) -> &[u8; SECRET_LEN] {
        &self.0
    }

    /// Reads the secret of data directory `dir`, creating the directory and the secret if they
    /// do not exist yet.
    pub fn load_or_create(dir: &Path) -> Result<Self, SecretError> {
        let error = |path: &Path| {
            let path = path.to_owned();
            move |source| SecretError { path, source }
        };
        create_dir(dir).map_err(error(dir))?;
        let path = dir.join(SECRET_FILE);
        match Self::create(&path) {
            Ok(secret) => {
                tracing::info!(path = %path.display(), "created a new identity-signing secret");
                Ok(secret)
            }
            Err(create) if create.kind() == io::ErrorKind::AlreadyExists => {
                Self::read(&path).map_err(error(&path))
            }
            Err(create) => Err(error(&path)(create)),
        }
    }

    /// Reads the secret in the file at `path` (a data directory's [`SECRET_FILE`]), which
    /// must exist: how an edge node checks the tokens its primary issued.
    pub fn load(path: &Path) -> Result<Self, SecretError> {
        Self::read(path).map_err(|source| SecretError {
            path: path.to_owned(),
            source,
        })
    }

    /// Creates the file, failing if it exists, with mode `0600` from the start.
    fn create(path: &Path) -> io::Result<Self> {
        let secret = Self::generate()?;
        let mut options = OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        let mut file = options.open(path)?;
        file.write_all(format!("{}\n", hex::encode(secret.0)).as_bytes())?;
        file.sync_all()?;
        Ok(secret)
    }

    fn read(path: &Path) -> io::Result<Self> {
        refuse_if_shared(path)?;
        let text = fs::read_to_string(path)?;
        let mut bytes = [0; SECRET_LEN];
        hex::decode_to_slice(text.trim(), &mut bytes).map_err(|_| {
            io::Error::new(
                io::ErrorKind::InvalidData,
                format!("expected {} hex digits", SECRET_LEN * 2),
            )
        })?;
        Ok(Self(bytes))
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret(..)")
    }
}

/// Why the secret could not be read or created.
#[derive(Debug)]
pub struct SecretError {
    /// The file or directory at fault.
    pub path: PathBuf,
    /// What happened.
    pub source: io::Error,
}

impl fmt::Display for SecretError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "the identity-signing secret at {}: {}",
            self.path.display(),
            self.source
        )
    }
}

impl std::error::Error for SecretError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.source)
    }
}

/// Creates the data directory (mode `0700`) with its `.gitignore`, if it does not exist, or
/// makes the existing one private.
fn create_dir(dir: &Path) -> io::Result<()> {
    if dir.is_dir() {
        return make_private(dir);
    }
    wasmod_host::datastore::durability::create_private_dir(dir)?;
    fs::write(
        dir.join(".gitignore"),
        "# wasmod's data directory: never commit it.\n*\n",
    )
}

/// The permission bits of the file or directory at `path` (links followed) if users other
/// than its owner have any access to it (`mode & 0o077`), `None` if it is private. Always
/// `None` where there are no Unix permissions.
pub fn loose_mode(path: &Path) -> io::Result<Option<u32>> {
    let metadata = fs::metadata(path)?;
    #[cfg(unix)]
    let mode = std::os::unix::fs::PermissionsExt::mode(&metadata.permissions()) & 0o777;
    #[cfg(not(unix))]
    let mode = {
        let _ = metadata;
        0
    };
    Ok((mode & 0o077 != 0).then_some(mode))
}

/// Fails if users other than the owner may read or write the file at `path`.
fn refuse_if_shared(path: &Path) -> io::Result<()> {
    let Some(mode) = loose_mode(path)? else {
        return Ok(());
    };
    Err(io::Error::new(
        io::ErrorKind::PermissionDenied,
        format!(
            "other users may read or write it (mode {mode:o}), and whoever holds it can sign a \
             token for any identity; if it is yours, make it private with `chmod 600 {}`, \
             otherwise delete it (a new secret is made, and every token issued so far stops \
             working)",
            path.display()
        ),
    ))
}

/// Makes the existing data directory `dir` private (`0700`) if other users may enter or list
/// it, with a warning; fails if it cannot (it is not the server's user's).
#[cfg(unix)]
fn make_private(dir: &Path) -> io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let Some(mode) = loose_mode(dir)? else {
        return Ok(());
    };
    fs::set_permissions(dir, fs::Permissions::from_mode(0o700)).map_err(|error| {
        io::Error::new(
            error.kind(),
            format!(
                "other users may enter the data directory (mode {mode:o}), and it could not be \
                 made private ({error}): `chmod 700 {}` as its owner",
                dir.display()
            ),
        )
    })?;
    tracing::warn!(
        path = %dir.display(),
        "other users could enter the data directory (mode {mode:o}): made it private (0700)"
    );
    Ok(())
}

#[cfg(not(unix))]
fn make_private(_: &Path) -> io::Result<()> {
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_secret_is_created_once_private_and_then_read_back() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let data = dir.path().join("nested").join("data");
        let first = Secret::load_or_create(&data).expect("created");
        let second = Secret::load_or_create(&data).expect("read");
        assert_eq!(first, second);
        assert_ne!(first.as_bytes(), &[0; SECRET_LEN]);
        assert!(data.join(".gitignore").is_file());
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = |path: &Path| fs::metadata(path).expect("exists").permissions().mode();
            assert_eq!(mode(&data.join(SECRET_FILE)) & 0o777, 0o600);
            assert_eq!(mode(&data) & 0o777, 0o700);
        }
    }

    #[test]
    fn a_corrupt_secret_is_an_error_naming_the_file() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let path = dir.path().join(SECRET_FILE);
        fs::write(&path, "not hex").expect("written");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            fs::set_permissions(&path, fs::Permissions::from_mode(0o600)).expect("chmod");
        }
        let error = Secret::load_or_create(dir.path()).expect_err("refused");
        assert!(error.to_string().contains(SECRET_FILE), "{error}");
        assert!(error.to_string().contains("hex digits"), "{error}");
    }

    #[cfg(unix)]
    #[test]
    fn a_secret_other_users_can_read_is_refused_with_how_to_fix_it() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().expect("a temporary directory");
        let secret = Secret::load_or_create(dir.path()).expect("created");
        let path = dir.path().join(SECRET_FILE);
        for loose in [0o644, 0o640, 0o602] {
            fs::set_permissions(&path, fs::Permissions::from_mode(loose)).expect("chmod");
            let error = Secret::load_or_create(dir.path()).expect_err("refused");
            let text = error.to_string();
            assert!(text.contains(&format!("mode {loose:o}")), "{text}");
            assert!(text.contains("chmod 600"), "{text}");
            assert_eq!(error.source.kind(), io::ErrorKind::PermissionDenied);
        }
        fs::set_permissions(&path, fs::Permissions::from_mode(0o400)).expect("chmod");
        assert_eq!(Secret::load_or_create(dir.path()).expect("private"), secret);
    }

    #[cfg(unix)]
    #[test]
    fn an_existing_data_directory_open_to_others_is_made_private() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().expect("a temporary directory");
        let data = dir.path().join("data");
        fs::create_dir(&data).expect("mkdir");
        fs::set_permissions(&data, fs::Permissions::from_mode(0o755)).expect("chmod");
        assert_eq!(loose_mode(&data).expect("exists"), Some(0o755));
        Secret::load_or_create(&data).expect("created");
        assert_eq!(loose_mode(&data).expect("exists"), None);
        let mode = fs::metadata(&data).expect("exists").permissions().mode();
        assert_eq!(mode & 0o777, 0o700);
    }

    #[test]
    fn two_secrets_differ() {
        let a = Secret::generate().expect("a secret");
        let b = Secret::generate().expect("a secret");
        assert_ne!(a, b);
    }
}
