//! `wasmod new <dir>`: a module crate that builds and tests as generated.
//!
//! The crate has a public table, two reducers, a per-caller view and native tests
//! (`wasmod::testing::TestModule`), a `.gitignore`, and a `Cargo.toml` with the release
//! profile modules ship with. It is its own workspace (an empty `[workspace]` table), so it
//! builds wherever it is put, even inside another workspace's directory.
//!
//! Its `wasmod` dependency, in order of precedence:
//!
//! 1. `--wasmod-path <checkout>`: a path dependency on that checkout's `runtime/`;
//! 2. `--wasmod-version <version>`: that version from crates.io;
//! 3. if the new directory is inside a checkout of wasmod (a directory whose `runtime/` is
//!    the `wasmod` crate), a relative path dependency on it: examples and experiments inside
//!    the repository use the code beside them;
//! 4. otherwise the checkout this command was built from, if it is still there (an absolute
//!    path dependency, said in the output): what `cargo install --path cli` users get;
//! 5. otherwise nothing: the crates are not on crates.io yet, so a registry dependency would
//!    fail at the crate's first build; the command says so and names the two flags instead.
//!    (Once they are published, this command's own version becomes this default.)

use crate::failure::{Context, Failure, Result};
use crate::output;
use std::fs;
use std::path::{Component, Path, PathBuf};

const CARGO_TOML: &str = include_str!("new/Cargo.toml.tmpl");
const LIB_RS: &str = include_str!("new/lib.rs.tmpl");
const GITIGNORE: &str = include_str!("new/gitignore.tmpl");

/// `wasmod new`'s arguments.
#[derive(clap::Args)]
pub struct Args {
    /// The directory to create; its name is the crate's name unless `--name` is given.
    dir: PathBuf,
    /// The crate's name.
    #[arg(long)]
    name: Option<String>,
    /// Depend on the wasmod of this checkout (a path dependency).
    #[arg(long, value_name = "CHECKOUT", conflicts_with = "wasmod_version")]
    wasmod_path: Option<PathBuf>,
    /// Depend on this version of wasmod from crates.io.
    #[arg(long, value_name = "VERSION")]
    wasmod_version: Option<String>,
}

/// Runs `wasmod new`.
pub fn run(args: Args) -> Result {
    let dir = std::path::absolute(&args.dir).context(args.dir.display())?;
    if dir.exists() && fs::read_dir(&dir).map_or(true, |mut entries| entries.next().is_some()) {
        return Err(Failure::usage(format!(
            "{} already exists and is not empty",
            args.dir.display()
        )));
    }
    let name = match &args.name {
        Some(name) => name.clone(),
        None => dir
            .file_name()
            .and_then(|name| name.to_str())
            .unwrap_or_default()
            .to_owned(),
    };
    check_name(&name)?;
    let (dependency, source) = dependency(&args, &dir, built_from())?;
    fs::create_dir_all(dir.join("src")).context(dir.display())?;
    let files = [
        ("Cargo.toml", fill(CARGO_TOML, &name, &dependency)),
        ("src/lib.rs", fill(LIB_RS, &name, &dependency)),
        (".gitignore", GITIGNORE.to_owned()),
    ];
    for (file, contents) in files {
        let path = dir.join(file);
        fs::write(&path, contents).context(path.display())?;
    }
    output::print(format!(
        "created module crate `{name}` in {dir}\n  depends on: {dependency} ({source})\nnext: cd {dir} && cargo test && wasmod build\n",
        dir = args.dir.display()
    ))
}

/// The `wasmod = ..` line of the new crate in `dir` (an absolute path, which need not exist
/// yet), and where it comes from, in words; `built_from` is the checkout this command was
/// built from, if it is still one.
fn dependency(
    args: &Args,
    dir: &Path,
    built_from: Option<PathBuf>,
) -> Result<(String, &'static str)> {
    if let Some(version) = &args.wasmod_version {
        let line = format!("wasmod = {}", toml_string(version));
        return Ok((line, "the version asked for"));
    }
    let (checkout, source) = match &args.wasmod_path {
        Some(path) => {
            let path = path.canonicalize().context(path.display())?;
            if !is_checkout(&path) {
                return Err(Failure::usage(format!(
                    "--wasmod-path {}: not a wasmod checkout (no runtime/ crate named `wasmod`)",
                    path.display()
                )));
            }
            (path, "the checkout asked for")
        }
        None => match dir.ancestors().skip(1).find(|dir| is_checkout(dir)) {
            Some(enclosing) => (enclosing.to_owned(), "the checkout around it"),
            None => match built_from {
                Some(checkout) => (checkout, "the checkout this wasmod was built from"),
                None => {
                    return Err(Failure::usage(format!(
                        "no wasmod to depend on: this command was built from {}, which is no \
                         longer a wasmod checkout, and wasmod is not on crates.io yet; choose \
                         one with --wasmod-path <a wasmod checkout> or --wasmod-version \
                         <version>",
                        built_from_path().display()
                    )))
                }
            },
        },
    };
    let runtime = checkout.join("runtime");
    let path = if dir.starts_with(&checkout) {
        relative(dir, &runtime)
    } else {
        runtime
    };
    let path = path
        .to_str()
        .ok_or_else(|| Failure::usage(format!("{}: the path is not UTF-8", path.display())))?;
    Ok((
        format!("wasmod = {{ path = {} }}", toml_string(path)),
        source,
    ))
}

/// Where this command was built from: the workspace above `cli/`.
fn built_from_path() -> &'static Path {
    let cli = Path::new(env!("CARGO_MANIFEST_DIR"));
    cli.parent().unwrap_or(cli)
}

/// The checkout this command was built from, if it is still a wasmod checkout.
fn built_from() -> Option<PathBuf> {
    let checkout = built_from_path();
    is_checkout(checkout).then(|| checkout.to_owned())
}

/// Whether `dir` is a checkout of wasmod: its `runtime/` is the `wasmod` crate.
fn is_checkout(dir: &Path) -> bool {
    dir.join("Cargo.toml").is_file()
        && fs::read_to_string(dir.join("runtime").join("Cargo.toml")).is_ok_and(|manifest| {
            manifest
                .lines()
                .any(|line| line.trim() == "name = \"wasmod\"")
        })
}

/// The path from directory `from` to `to`, both absolute and canonical.
fn relative(from: &Path, to: &Path) -> PathBuf {
    let from: Vec<Component<'_>> = from.components().collect();
    let to: Vec<Component<'_>> = to.components().collect();
    let common = from.iter().zip(&to).take_while(|(a, b)| a == b).count();
    let mut path = PathBuf::new();
    for _ in common..from.len() {
        path.push("..");
    }
    for component in &to[common..] {
        path.push(component);
    }
    path
}

/// Crate names as cargo takes them: ASCII letters, digits, `-` and `_`, not starting with a
/// digit.
fn check_name(name: &str) -> Result {
    let valid = name
        .chars()
        .next()
        .is_some_and(|first| first.is_ascii_alphabetic() || first == '_')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    if valid {
        Ok(())
    } else {
        Err(Failure::usage(format!(
            "`{name}` is not a valid crate name (letters, digits, `-` and `_`, not starting with a digit): choose one with --name"
        )))
    }
}

fn fill(template: &str, name: &str, dependency: &str) -> String {
    template
        .replace("{{name}}", name)
        .replace("{{dependency}}", dependency)
}

/// `text` as a TOML basic string.
fn toml_string(text: &str) -> String {
    serde_json::Value::String(text.to_owned()).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_paths_climb_then_descend() {
        assert_eq!(
            relative(Path::new("/r/examples/new"), Path::new("/r/runtime")),
            PathBuf::from("../../runtime")
        );
        assert_eq!(
            relative(Path::new("/r/x"), Path::new("/r/x/runtime")),
            PathBuf::from("runtime")
        );
    }

    #[test]
    fn crate_names_are_checked() {
        for good in ["chat", "my-module", "m_2", "_x"] {
            assert!(check_name(good).is_ok(), "{good}");
        }
        for bad in ["", "2fast", "my module", "naïve", "a.b"] {
            assert!(check_name(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn without_a_checkout_the_flags_are_named() {
        let args = Args {
            dir: PathBuf::from("/nowhere/mine"),
            name: None,
            wasmod_path: None,
            wasmod_version: None,
        };
        let refused = dependency(&args, Path::new("/nowhere/mine"), None).unwrap_err();
        let message = format!("{refused:?}");
        for words in ["--wasmod-path", "--wasmod-version", "not on crates.io"] {
            assert!(message.contains(words), "{message}");
        }
        let found = dependency(
            &args,
            Path::new("/nowhere/mine"),
            Some(PathBuf::from("/src/wasmod")),
        );
        assert_eq!(
            found.unwrap(),
            (
                "wasmod = { path = \"/src/wasmod/runtime\" }".to_owned(),
                "the checkout this wasmod was built from"
            )
        );
    }

    #[test]
    fn templates_are_filled() {
        let manifest = fill(CARGO_TOML, "todo", "wasmod = \"0.1\"");
        assert!(manifest.contains("name = \"todo\""));
        assert!(manifest.contains("\nwasmod = \"0.1\"\n"));
        assert!(!manifest.contains("{{"));
        assert!(!fill(LIB_RS, "todo", "").contains("{{"));
    }

    #[test]
    fn the_release_profile_checks_integer_overflow() {
        let profile = CARGO_TOML
            .split("\n[")
            .find(|table| table.starts_with("profile.release]"))
            .expect("the template has a release profile");
        assert!(
            profile.lines().any(|line| line == "overflow-checks = true"),
            "{profile}"
        );
    }
}
