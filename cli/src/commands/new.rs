//! `wasmod new <dir>`: a module crate that builds and tests as generated.
//!
//! The crate has two public tables (tasks, and the names signed-in callers' claims give, kept
//! by `client_connected`, which refuses anonymous callers when `SIGN_IN_REQUIRED` is set), two
//! reducers, a per-caller view and native tests
//! (`wasmod_testing::TestModule`, from the dev-dependency `wasmod-testing`), a `.gitignore`,
//! and a `Cargo.toml` with the release profile modules ship with. It is its own workspace (an
//! empty `[workspace]` table), so it builds wherever it is put, even inside another
//! workspace's directory.
//!
//! `--template react` adds `web/`, the module's web app (Vite + React + TypeScript over
//! `@wasmod/client` and the bindings `wasmod generate --lang typescript` writes, which its
//! `dev` and `build` scripts write first; an optional sign-in with an OpenID Provider, on when
//! built with `VITE_OIDC_ISSUER` and `VITE_OIDC_CLIENT_ID`), and a `README.md` that says how to
//! run both and set sign-in up. Its
//! `@wasmod/client` dependency is `--client`'s: a tarball (`npm pack` in `client/npm`) or the
//! package's directory (a `file:` dependency, by absolute path), or else a version range from
//! the npm registry; by default this command's version from the registry, where the package
//! is not yet (the command says so, and names the flag).
//!
//! Its `wasmod` dependency, in order of precedence (`wasmod-testing` comes from the same place:
//! the version, or the checkout's `testing/`):
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

/// The files `--template react` adds: each path in the new directory, and its template.
const REACT: [(&str, &str); 11] = [
    ("README.md", include_str!("new/react/README.md.tmpl")),
    (
        "web/package.json",
        include_str!("new/react/package.json.tmpl"),
    ),
    (
        "web/vite.config.ts",
        include_str!("new/react/vite.config.ts.tmpl"),
    ),
    ("web/tsconfig.json", include_str!("new/react/tsconfig.json")),
    ("web/index.html", include_str!("new/react/index.html.tmpl")),
    ("web/.gitignore", include_str!("new/react/gitignore")),
    (
        "web/scripts/bindings.mjs",
        include_str!("new/react/bindings.mjs"),
    ),
    ("web/src/main.tsx", include_str!("new/react/main.tsx")),
    ("web/src/App.tsx", include_str!("new/react/App.tsx")),
    ("web/src/auth.ts", include_str!("new/react/auth.ts")),
    ("web/src/env.d.ts", include_str!("new/react/env.d.ts")),
];

/// What `wasmod new` makes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum Template {
    /// A module crate.
    #[default]
    Module,
    /// A module crate and its web app (Vite + React + TypeScript, in `web/`).
    React,
}

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
    /// What to make: a module crate, or a module and its web app (`react`).
    #[arg(long, value_enum, default_value_t)]
    template: Template,
    /// The web app's `@wasmod/client` (`--template react`): a tarball of the package
    /// (`npm pack` in `client/npm`), the package's directory, or a version range from the npm
    /// registry [default: this wasmod's version, from the registry]
    #[arg(long, value_name = "TARBALL|DIR|VERSION")]
    client: Option<String>,
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
    let client = match (args.template, &args.client) {
        (Template::React, spec) => Some(client_dependency(spec.as_deref())?),
        (Template::Module, Some(_)) => {
            return Err(Failure::usage(
                "--client is the web app's: give it with --template react",
            ))
        }
        (Template::Module, None) => None,
    };
    let (dependencies, source) = dependencies(&args, &dir, built_from())?;
    let mut files = vec![
        ("Cargo.toml", fill(CARGO_TOML, &name, &dependencies)),
        ("src/lib.rs", fill(LIB_RS, &name, &dependencies)),
        (".gitignore", GITIGNORE.to_owned()),
    ];
    if let Some(client) = &client {
        files.extend(REACT.map(|(file, template)| (file, client.fill(template, &name))));
    }
    for (file, contents) in files {
        let path = dir.join(file);
        if let Some(parent) = path.parent() {
            fs::create_dir_all(parent).context(parent.display())?;
        }
        fs::write(&path, contents).context(path.display())?;
    }
    let dir = args.dir.display();
    let made = format!("  depends on: {} ({source})\n", dependencies.wasmod);
    output::print(match client {
        None => format!(
            "created module crate `{name}` in {dir}\n{made}next: cd {dir} && cargo test && wasmod build\n"
        ),
        Some(client) => format!(
            "created module crate `{name}` and its web app in {dir}\n{made}  the app's @wasmod/client: {} ({})\n{}next, in two terminals:\n  wasmod serve {dir}\n  cd {dir}/web && npm install && npm run dev\n",
            client.spec,
            client.source,
            client.warning.unwrap_or_default(),
        ),
    })
}

/// The web app's dependency on `@wasmod/client`.
struct ClientDependency {
    /// Its `package.json` spec: `file:<path>` or a version range.
    spec: String,
    /// Where it comes from, in words.
    source: String,
    /// The directory of a linked package, which Vite's dev server must be allowed to read.
    linked: Option<String>,
    /// What the user should know about it (the package is not on the registry yet).
    warning: Option<String>,
}

impl ClientDependency {
    /// `template` with the module's `name` and this dependency filled in.
    fn fill(&self, template: &str, name: &str) -> String {
        let allow: Vec<String> = std::iter::once("..")
            .chain(self.linked.as_deref())
            .map(|dir| serde_json::Value::String(dir.to_owned()).to_string())
            .collect();
        template
            .replace("{{name}}", name)
            .replace(
                "{{client}}",
                &serde_json::Value::String(self.spec.clone()).to_string(),
            )
            .replace("{{client_source}}", &self.source)
            .replace("{{fs_allow}}", &format!("[{}]", allow.join(", ")))
    }
}

/// The web app's `@wasmod/client` for `--client spec`: a tarball or the package's directory
/// by absolute path, else a version range from the registry (this command's version by
/// default).
fn client_dependency(spec: Option<&str>) -> Result<ClientDependency> {
    let registry = |range: String, source: &str| {
        ClientDependency {
        source: format!("the npm registry, {source}"),
        spec: range,
        linked: None,
        warning: Some(
            "  note: @wasmod/client is not on the npm registry yet: `npm install` fails until it is; \
             make the package (cd client/npm && npm ci && npm run build && npm pack) and give its \
             tarball with --client <wasmod-client-VERSION.tgz>, or edit web/package.json\n"
                .to_owned(),
        ),
    }
    };
    let Some(spec) = spec else {
        let range = format!("^{}", env!("CARGO_PKG_VERSION"));
        return Ok(registry(range, "this wasmod's version"));
    };
    let path = Path::new(spec);
    let looks_like_a_path = path.exists() || spec.contains(['/', '\\']) || spec.ends_with(".tgz");
    if !looks_like_a_path {
        return Ok(registry(spec.to_owned(), "the version asked for"));
    }
    let path = path.canonicalize().context(spec)?;
    let text = path
        .to_str()
        .ok_or_else(|| Failure::usage(format!("{}: the path is not UTF-8", path.display())))?
        .to_owned();
    if path.is_dir() {
        let manifest = fs::read_to_string(path.join("package.json")).unwrap_or_default();
        if !manifest.contains("\"name\": \"@wasmod/client\"") {
            return Err(Failure::usage(format!(
                "--client {spec}: not the @wasmod/client package's directory (no package.json \
                 named @wasmod/client)"
            )));
        }
        let warning = (!path.join("dist").is_dir() || !path.join("wasm").is_dir()).then(|| {
            format!(
                "  note: {text} is not built yet: run `npm ci && npm run build` there before \
                 `npm install` in web/\n"
            )
        });
        return Ok(ClientDependency {
            spec: format!("file:{text}"),
            source: format!("the package's directory {text}, linked"),
            linked: Some(text),
            warning,
        });
    }
    Ok(ClientDependency {
        spec: format!("file:{text}"),
        source: format!("the tarball {text}"),
        linked: None,
        warning: None,
    })
}

/// The new crate's dependencies on wasmod's crates, as lines of its `Cargo.toml`.
#[derive(Debug, PartialEq, Eq)]
struct Dependencies {
    /// `wasmod = ..`.
    wasmod: String,
    /// `wasmod-testing = ..`, the dev-dependency its tests run the module with.
    testing: String,
}

/// The dependencies of the new crate in `dir` (an absolute path, which need not exist yet),
/// and where they come from, in words; `built_from` is the checkout this command was built
/// from, if it is still one.
fn dependencies(
    args: &Args,
    dir: &Path,
    built_from: Option<PathBuf>,
) -> Result<(Dependencies, &'static str)> {
    if let Some(version) = &args.wasmod_version {
        let version = toml_string(version);
        let lines = Dependencies {
            wasmod: format!("wasmod = {version}"),
            testing: format!("wasmod-testing = {version}"),
        };
        return Ok((lines, "the version asked for"));
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
    // The crate `name` in the checkout's folder `folder`, by a path relative to the new crate
    // when the checkout holds it.
    let line = |name: &str, folder: &str| -> Result<String> {
        let folder = checkout.join(folder);
        let path = if dir.starts_with(&checkout) {
            relative(dir, &folder)
        } else {
            folder
        };
        let path = path
            .to_str()
            .ok_or_else(|| Failure::usage(format!("{}: the path is not UTF-8", path.display())))?;
        Ok(format!("{name} = {{ path = {} }}", toml_string(path)))
    };
    let lines = Dependencies {
        wasmod: line("wasmod", "runtime")?,
        testing: line("wasmod-testing", "testing")?,
    };
    Ok((lines, source))
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

/// `template` with the crate's `name` and `dependencies` filled in.
fn fill(template: &str, name: &str, dependencies: &Dependencies) -> String {
    template
        .replace("{{name}}", name)
        .replace("{{dependency}}", &dependencies.wasmod)
        .replace("{{dev_dependency}}", &dependencies.testing)
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
            template: Template::Module,
            client: None,
        };
        let refused = dependencies(&args, Path::new("/nowhere/mine"), None).unwrap_err();
        let message = format!("{refused:?}");
        for words in ["--wasmod-path", "--wasmod-version", "not on crates.io"] {
            assert!(message.contains(words), "{message}");
        }
        let found = dependencies(
            &args,
            Path::new("/nowhere/mine"),
            Some(PathBuf::from("/src/wasmod")),
        );
        assert_eq!(
            found.unwrap(),
            (
                Dependencies {
                    wasmod: "wasmod = { path = \"/src/wasmod/runtime\" }".to_owned(),
                    testing: "wasmod-testing = { path = \"/src/wasmod/testing\" }".to_owned(),
                },
                "the checkout this wasmod was built from"
            )
        );
    }

    #[test]
    fn a_version_is_the_version_of_both_crates() {
        let args = Args {
            dir: PathBuf::from("/nowhere/mine"),
            name: None,
            wasmod_path: None,
            wasmod_version: Some("0.1.0".to_owned()),
            template: Template::Module,
            client: None,
        };
        let (found, source) = dependencies(&args, Path::new("/nowhere/mine"), None).unwrap();
        assert_eq!(
            found,
            Dependencies {
                wasmod: "wasmod = \"0.1.0\"".to_owned(),
                testing: "wasmod-testing = \"0.1.0\"".to_owned(),
            }
        );
        assert_eq!(source, "the version asked for");
    }

    #[test]
    fn templates_are_filled() {
        let dependencies = Dependencies {
            wasmod: "wasmod = \"0.1\"".to_owned(),
            testing: "wasmod-testing = \"0.1\"".to_owned(),
        };
        let manifest = fill(CARGO_TOML, "todo", &dependencies);
        assert!(manifest.contains("name = \"todo\""));
        assert!(manifest.contains("[dependencies]\nwasmod = \"0.1\"\n"));
        assert!(manifest.contains("[dev-dependencies]\nwasmod-testing = \"0.1\"\n"));
        assert!(!manifest.contains("{{"));
        assert!(!fill(LIB_RS, "todo", &dependencies).contains("{{"));
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
