//! The commands as a user runs them: `new` outside the checkout, then `cargo test`, `build`
//! and `serve` on what it made; `describe`, `inspect` and `call` on the quickstart; the
//! errors of bad input.
//!
//! Nested cargo runs use `target/wasm-tests` under the workspace root, which the other tests'
//! wasm builds share: the `cargo test` running this holds the lock of its own target
//! directory, and the generated crate reuses what is already built there.

mod support;

use serde_json::Value;
use std::process::Command;
use support::{agent, send, text, wasmod, Served};
use wasmod_wasm_tests::{built, workspace_root, Profile};

/// The checkout the `wasmod` under test was built from, as it names it.
fn built_from() -> &'static str {
    let cli = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    cli.parent()
        .and_then(|root| root.to_str())
        .expect("a UTF-8 path")
}

#[test]
fn a_module_made_outside_the_checkout_tests_builds_and_serves() {
    let temp = tempfile::tempdir().expect("a temporary directory");
    assert!(
        !temp.path().starts_with(workspace_root()),
        "the temporary directory is outside the checkout"
    );
    let created = wasmod(&["new", "todo"], temp.path());
    assert!(created.status.success(), "{}", text(&created.stderr));
    let said = text(&created.stdout);
    assert!(
        said.contains("(the checkout this wasmod was built from)"),
        "{said}"
    );
    let dir = temp.path().join("todo");
    let manifest = std::fs::read_to_string(dir.join("Cargo.toml")).expect("a manifest");
    let root = built_from();
    for crate_folder in ["runtime", "testing"] {
        assert!(
            manifest.contains(&format!("path = \"{root}/{crate_folder}\"")),
            "{manifest}"
        );
    }
    // The workspace's lock file: same versions as the rest of the run, nothing to resolve.
    std::fs::copy(workspace_root().join("Cargo.lock"), dir.join("Cargo.lock")).expect("copied");

    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let tested = Command::new(cargo)
        .args(["test", "--offline", "--quiet"])
        .current_dir(&dir)
        .env(
            "CARGO_TARGET_DIR",
            workspace_root().join("target").join("wasm-tests"),
        )
        .output()
        .expect("cargo runs");
    assert!(
        tested.status.success(),
        "{}{}",
        text(&tested.stdout),
        text(&tested.stderr)
    );
    assert!(
        text(&tested.stdout).contains("5 passed"),
        "{}",
        text(&tested.stdout)
    );

    let build = wasmod(&["build", "."], &dir);
    let out = text(&build.stdout);
    assert!(build.status.success(), "{out}{}", text(&build.stderr));
    for line in [
        "abi: ok",
        "description: ok",
        "dispatch: clean",
        "#0   connected()  [lifecycle: client_connected]",
        "#1   add(title: String)",
        "#2   complete(id: u64)",
        "#0   my_tasks() -> Vec<Task>",
    ] {
        assert!(out.contains(line), "{line} in:\n{out}");
    }

    // From another directory, by path.
    let described = wasmod(&["describe", "todo"], temp.path());
    assert!(described.status.success(), "{}", text(&described.stderr));
    assert!(text(&described.stdout).contains("add(title: String)"));
    let inspected = wasmod(&["inspect", "todo"], temp.path());
    assert!(inspected.status.success(), "{}", text(&inspected.stderr));
    let called = wasmod(&["call", "todo", "add", r#""in-process""#], temp.path());
    assert!(called.status.success(), "{}", text(&called.stderr));
    assert!(
        text(&called.stdout).contains("committed"),
        "{}",
        text(&called.stdout)
    );

    let data = tempfile::tempdir().expect("a data directory");
    let served = Served::start(&dir, data.path());
    let agent = agent();
    let url = |path: &str| format!("{}{path}", served.base);
    let (status, issued) = send(&agent, "POST", &url("/v1/identity"), None, None);
    assert_eq!(status, 200, "{issued}");
    let token = issued["token"].as_str().expect("a token").to_owned();
    let call = |path: &str, body: &str| send(&agent, "POST", &url(path), Some(&token), Some(body));
    let added = call("/v1/reducers/add", r#"["write the tests"]"#);
    assert_eq!(added.0, 200, "{}", added.1);
    let mine = call("/v1/views/my_tasks", "[]");
    assert_eq!(mine.0, 200, "{}", mine.1);
    assert_eq!(
        mine.1["result"][0]["title"], "write the tests",
        "{}",
        mine.1
    );
    let (exit, _, logs) = served.terminate();
    assert!(exit.success(), "{logs}");

    let chosen = wasmod(&["new", "chosen", "--wasmod-path", root], temp.path());
    assert!(chosen.status.success(), "{}", text(&chosen.stderr));
    let manifest =
        std::fs::read_to_string(temp.path().join("chosen").join("Cargo.toml")).expect("a manifest");
    assert!(
        manifest.contains(&format!("path = \"{root}/runtime\"")),
        "{manifest}"
    );

    let again = wasmod(&["new", "todo"], temp.path());
    assert_eq!(again.status.code(), Some(2));
    assert!(
        text(&again.stderr).contains("not empty"),
        "{}",
        text(&again.stderr)
    );
}

#[test]
fn version_names_the_abi() {
    let version = wasmod(&["--version"], std::path::Path::new("."));
    assert!(version.status.success());
    let expected = format!(
        "wasmod {} (ABI {}, imports from `{}`)",
        env!("CARGO_PKG_VERSION"),
        wasmod_abi::names::ABI_VERSION,
        wasmod_abi::names::IMPORT_MODULE
    );
    assert_eq!(text(&version.stdout).trim(), expected);
}

#[test]
fn new_depends_on_the_enclosing_checkout_by_a_relative_path() {
    let temp = tempfile::tempdir().expect("a temporary directory");
    let checkout = temp.path().join("wasmod");
    std::fs::create_dir_all(checkout.join("runtime")).expect("made");
    std::fs::write(checkout.join("Cargo.toml"), "[workspace]\n").expect("written");
    std::fs::write(
        checkout.join("runtime").join("Cargo.toml"),
        "[package]\nname = \"wasmod\"\n",
    )
    .expect("written");
    let made = wasmod(&["new", "examples/mine"], &checkout);
    assert!(made.status.success(), "{}", text(&made.stderr));
    let manifest =
        std::fs::read_to_string(checkout.join("examples/mine/Cargo.toml")).expect("read");
    assert!(
        manifest.contains("wasmod = { path = \"../../runtime\" }"),
        "{manifest}"
    );
    assert!(
        manifest.contains("wasmod-testing = { path = \"../../testing\" }"),
        "{manifest}"
    );

    let outside = wasmod(&["new", "elsewhere"], temp.path());
    assert!(outside.status.success(), "{}", text(&outside.stderr));
    let manifest = std::fs::read_to_string(temp.path().join("elsewhere/Cargo.toml")).expect("read");
    assert!(
        manifest.contains(&format!(
            "wasmod = {{ path = \"{}/runtime\" }}",
            built_from()
        )),
        "outside a checkout, the one this wasmod was built from: {manifest}"
    );

    // A toolchain without the wasm32 target: the error says how to install it.
    let rustc = temp.path().join("rustc-without-wasm32");
    std::fs::write(&rustc, "#!/bin/sh\necho /nonexistent-sysroot\n").expect("written");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&rustc, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        let build = Command::new(env!("CARGO_BIN_EXE_wasmod"))
            .args(["build", "elsewhere"])
            .current_dir(temp.path())
            .env("RUSTC", &rustc)
            .output()
            .expect("wasmod runs");
        assert_eq!(build.status.code(), Some(2));
        let stderr = text(&build.stderr);
        assert!(
            stderr.contains("rustup target add wasm32-unknown-unknown"),
            "{stderr}"
        );
    }

    let bad = wasmod(&["new", "2fast"], temp.path());
    assert_eq!(bad.status.code(), Some(2));
    assert!(
        text(&bad.stderr).contains("--name"),
        "{}",
        text(&bad.stderr)
    );
}

#[test]
fn new_react_template_makes_a_module_and_a_web_app_over_the_client_asked_for() {
    let temp = tempfile::tempdir().expect("a temporary directory");
    let read = |path: &str| std::fs::read_to_string(temp.path().join(path)).expect(path);
    let package = workspace_root().join("client").join("npm");
    let package = package.to_str().expect("a UTF-8 path");

    // The package's directory: a link by absolute path, which Vite's dev server may read.
    let made = wasmod(
        &["new", "--template", "react", "linked", "--client", package],
        temp.path(),
    );
    assert!(made.status.success(), "{}", text(&made.stderr));
    let said = text(&made.stdout);
    for line in [
        "and its web app",
        "wasmod serve linked",
        "cd linked/web && npm install && npm run dev",
    ] {
        assert!(said.contains(line), "{line} in:\n{said}");
    }
    for file in [
        "Cargo.toml",
        "src/lib.rs",
        "README.md",
        "web/tsconfig.json",
        "web/index.html",
        "web/.gitignore",
        "web/scripts/bindings.mjs",
        "web/src/main.tsx",
        "web/src/App.tsx",
        "web/src/auth.ts",
        "web/src/env.d.ts",
    ] {
        assert!(temp.path().join("linked").join(file).is_file(), "{file}");
    }
    let manifest: Value = serde_json::from_str(&read("linked/web/package.json")).expect("JSON");
    assert_eq!(manifest["name"], "linked-web");
    assert_eq!(
        manifest["dependencies"]["@wasmod/client"],
        format!("file:{package}")
    );
    let vite = read("linked/web/vite.config.ts");
    assert!(
        vite.contains(&format!("allow: [\"..\", \"{package}\"]")),
        "{vite}"
    );
    assert!(read("linked/README.md").contains("wasmod serve ."));

    // A version: from the registry; none: this wasmod's, with a word that it is not there yet.
    let ranged = wasmod(
        &["new", "--template", "react", "ranged", "--client", "^0.1"],
        temp.path(),
    );
    assert!(ranged.status.success(), "{}", text(&ranged.stderr));
    let manifest: Value = serde_json::from_str(&read("ranged/web/package.json")).expect("JSON");
    assert_eq!(manifest["dependencies"]["@wasmod/client"], "^0.1");
    assert!(read("ranged/web/vite.config.ts").contains("allow: [\"..\"]"));
    let default = wasmod(&["new", "--template", "react", "default"], temp.path());
    assert!(default.status.success(), "{}", text(&default.stderr));
    assert!(
        text(&default.stdout).contains("not on the npm registry yet"),
        "{}",
        text(&default.stdout)
    );
    let manifest: Value = serde_json::from_str(&read("default/web/package.json")).expect("JSON");
    assert_eq!(
        manifest["dependencies"]["@wasmod/client"],
        format!("^{}", env!("CARGO_PKG_VERSION"))
    );

    // Refused: a directory that is not the package, a missing tarball, --client without the
    // web app.
    let here = temp.path().to_str().expect("a UTF-8 path");
    for (args, error) in [
        (
            vec!["new", "--template", "react", "a", "--client", here],
            "not the @wasmod/client package's directory",
        ),
        (
            vec![
                "new",
                "--template",
                "react",
                "b",
                "--client",
                "./missing.tgz",
            ],
            "missing.tgz",
        ),
        (
            vec!["new", "c", "--client", package],
            "give it with --template react",
        ),
    ] {
        let refused = wasmod(&args, temp.path());
        assert_eq!(refused.status.code(), Some(2), "{args:?}");
        assert!(
            text(&refused.stderr).contains(error),
            "{}",
            text(&refused.stderr)
        );
    }
}

#[test]
fn describe_inspect_and_call_the_quickstart() {
    let wasm = built(Profile::Release).library_path("quickstart");
    let wasm = wasm.to_str().expect("a UTF-8 path");
    let here = workspace_root();

    let described = wasmod(&["describe", wasm, "--json"], here);
    assert!(described.status.success(), "{}", text(&described.stderr));
    let json: Value = serde_json::from_slice(&described.stdout).expect("JSON");
    assert_eq!(json["tables"][2]["name"], "config");
    assert_eq!(json["tables"][2]["public"], false);
    assert_eq!(json["reducers"][3]["name"], "set_name");
    assert_eq!(json["http_handlers"][1]["path"], "/messages");

    let inspected = wasmod(&["inspect", wasm], here);
    assert!(inspected.status.success(), "{}", text(&inspected.stderr));
    assert!(text(&inspected.stdout).contains("result: clean"));

    let sent = wasmod(&["call", wasm, "send", "\"hi\""], here);
    assert!(sent.status.success(), "{}", text(&sent.stderr));
    let answer: Value = serde_json::from_slice(&sent.stdout).expect("JSON");
    assert_eq!(answer["status"], "committed");

    let named = wasmod(
        &["call", wasm, "set_name", "--json", r#"{"name": "ann"}"#],
        here,
    );
    assert!(named.status.success(), "{}", text(&named.stdout));

    let refused = wasmod(&["call", wasm, "send", "42"], here);
    assert_eq!(refused.status.code(), Some(1));
    let error: Value = serde_json::from_slice(&refused.stdout).expect("JSON");
    assert_eq!(error["error"]["code"], "bad_arguments");

    let not_json = wasmod(&["call", wasm, "send", "hello"], here);
    assert_eq!(not_json.status.code(), Some(2));
    assert!(
        text(&not_json.stderr).contains("'\"hello\"'"),
        "{}",
        text(&not_json.stderr)
    );

    let missing = wasmod(&["describe", "no/such/module.wasm"], here);
    assert_eq!(missing.status.code(), Some(2));
    let garbage = tempfile::NamedTempFile::new().expect("a file");
    std::fs::write(garbage.path(), b"not wasm").expect("written");
    let garbage = garbage.path().to_str().expect("UTF-8");
    let invalid = wasmod(&["describe", garbage], here);
    assert_eq!(invalid.status.code(), Some(1));
    assert!(
        text(&invalid.stderr).contains("does not compile"),
        "{}",
        text(&invalid.stderr)
    );
}

#[test]
fn printing_commands_stop_quietly_when_stdout_is_closed() {
    let wasm = built(Profile::Release).library_path("quickstart");
    for args in [
        &["describe", "--json"][..],
        &["describe"],
        &["inspect"],
        &["inspect", "--json"],
    ] {
        let (reader, writer) = std::io::pipe().expect("a pipe");
        drop(reader);
        let output = Command::new(env!("CARGO_BIN_EXE_wasmod"))
            .args(args)
            .arg(&wasm)
            .stdout(writer)
            .output()
            .expect("wasmod runs");
        assert!(output.status.success(), "{args:?}: {output:?}");
        assert_eq!(text(&output.stderr), "", "{args:?}");
    }
}

#[test]
fn in_process_calls_keep_state_in_a_data_directory_and_reach_http_handlers() {
    let wasm = built(Profile::Release).library_path("quickstart");
    let wasm = wasm.to_str().expect("a UTF-8 path");
    let temp = tempfile::tempdir().expect("a directory");
    let data = temp.path().join("data");
    let data = data.to_str().expect("a UTF-8 path");
    for text in ["\"one\"", "\"two\""] {
        let sent = wasmod(&["call", wasm, "send", text, "--data", data], temp.path());
        assert!(sent.status.success(), "{}", support::text(&sent.stderr));
    }
    let recent = wasmod(&["call", wasm, "recent", "--data", data], temp.path());
    assert!(recent.status.success(), "{}", text(&recent.stderr));
    let recent: Value = serde_json::from_slice(&recent.stdout).expect("JSON");
    let texts: Vec<&Value> = recent["result"]
        .as_array()
        .expect("rows")
        .iter()
        .map(|m| &m["text"])
        .collect();
    assert_eq!(texts, ["one", "two"], "{recent}");
    let forgotten = wasmod(&["call", wasm, "recent"], temp.path());
    let forgotten: Value = serde_json::from_slice(&forgotten.stdout).expect("JSON");
    assert_eq!(
        forgotten["result"],
        serde_json::json!([]),
        "without --data, nothing is kept"
    );

    let posted = wasmod(
        &[
            "call",
            wasm,
            "POST",
            "/messages",
            "--body",
            "three",
            "--data",
            data,
        ],
        temp.path(),
    );
    assert!(posted.status.success(), "{}", text(&posted.stderr));
    let stats = wasmod(
        &["call", wasm, "GET", "/stats", "--data", data],
        temp.path(),
    );
    assert!(stats.status.success(), "{}", text(&stats.stderr));
    let stats: Value = serde_json::from_slice(&stats.stdout).expect("JSON");
    assert_eq!(stats["status"], 200, "{stats}");
    let body: Value =
        serde_json::from_str(stats["body"].as_str().expect("a text body")).expect("JSON");
    assert_eq!(body["messages"], 3, "{stats}");

    let unrouted = wasmod(&["call", wasm, "GET", "/nowhere"], temp.path());
    assert_eq!(unrouted.status.code(), Some(1));
    let error: Value = serde_json::from_slice(&unrouted.stdout).expect("JSON");
    assert!(
        error["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("/nowhere")),
        "{error}"
    );
    let no_path = wasmod(&["call", wasm, "GET"], temp.path());
    assert_eq!(no_path.status.code(), Some(2));
    assert!(
        text(&no_path.stderr).contains("takes one argument, the path"),
        "{}",
        text(&no_path.stderr)
    );
}

#[test]
fn serve_refuses_a_zero_ping_interval_before_anything_else() {
    let temp = tempfile::tempdir().expect("a directory");
    let zero = wasmod(
        &["serve", "no-such-module", "--ping-interval", "0s"],
        temp.path(),
    );
    assert_eq!(zero.status.code(), Some(2));
    assert!(
        text(&zero.stderr).contains("--ping-interval: must be more than zero"),
        "{}",
        text(&zero.stderr)
    );
}

#[cfg(unix)]
#[test]
fn serve_refuses_token_files_other_users_may_read_before_anything_else() {
    use std::os::unix::fs::PermissionsExt;
    let temp = tempfile::tempdir().expect("a directory");
    let file = temp.path().join("token");
    std::fs::write(&file, "an-operator-token-for-the-tests\n").expect("write");
    let path = file.to_str().expect("a UTF-8 path");
    let serve = |flags: &[&str]| {
        let mut args = vec!["serve", "no-such-module"];
        args.extend(flags);
        wasmod(&args, temp.path())
    };
    let publish = ["--publish", "redis://127.0.0.1:1/commits"];
    for loose in [0o644, 0o640, 0o604, 0o620] {
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(loose)).expect("chmod");
        for flags in [
            vec!["--operator-token-file", path],
            [&publish[..], &["--edge-token-file", path]].concat(),
        ] {
            let refused = serve(&flags);
            let said = text(&refused.stderr);
            assert_eq!(refused.status.code(), Some(2), "{flags:?}: {said}");
            assert!(said.contains(&format!("(mode {loose:o})")), "{said}");
            assert!(said.contains(&format!("chmod 600 {path}")), "{said}");
        }
        // The commands that send the token read it the same way, before anything is sent.
        let nowhere = "http://127.0.0.1:1";
        for args in [
            vec!["logs", nowhere, "--operator-token-file", path],
            vec![
                "publish",
                nowhere,
                "no-such.wasm",
                "--operator-token-file",
                path,
            ],
        ] {
            let refused = wasmod(&args, temp.path());
            let said = text(&refused.stderr);
            assert_eq!(refused.status.code(), Some(2), "{args:?}: {said}");
            assert!(
                said.contains(&format!("chmod 600 {path}")),
                "{args:?}: {said}"
            );
        }
    }
    // A private file is read: the next thing refused is the missing module.
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).expect("chmod");
    let read = serve(&["--operator-token-file", path]);
    let said = text(&read.stderr);
    assert!(!said.contains("--operator-token-file"), "{said}");
    assert!(said.contains("no-such-module"), "{said}");
    // Its token is checked like one given on the command line.
    std::fs::write(&file, "short").expect("write");
    let short = serve(&["--operator-token-file", path]);
    assert!(
        text(&short.stderr).contains("--operator-token-file: the token in"),
        "{}",
        text(&short.stderr)
    );
}
