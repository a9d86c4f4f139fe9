//! `wasmod publish` against the real `wasmod serve` with a data directory: a refused build
//! leaves the old one serving, a compatible one serves the next calls with the data carried
//! over, and after a restart the directory serves the published build (kept in it) and refuses
//! the old one, saying where the published build is.

mod support;

use serde_json::{json, Value};
use std::path::Path;
use support::{agent, send, text, wasmod, Served};
use wasmod_wasm_tests::{built, Profile};

/// Which build answers the module's HTTP handler.
fn build(base: &str) -> Value {
    send(
        &agent(),
        "GET",
        &format!("{base}/v1/http/build"),
        None,
        None,
    )
    .1
}

/// The notes' rows, by id.
fn notes(base: &str) -> Vec<Value> {
    let (status, page) = send(
        &agent(),
        "GET",
        &format!("{base}/v1/tables/note"),
        None,
        None,
    );
    assert_eq!(status, 200, "{page}");
    let mut rows = page["rows"].as_array().expect("rows").clone();
    rows.sort_by_key(|row| row["id"].as_u64());
    rows
}

/// `wasmod publish base module` with `token`, from `dir`: the token in a private file there
/// (`--operator-token-file`), as the docs advise.
fn publish(base: &str, module: &Path, token: &str, dir: &Path) -> std::process::Output {
    use std::os::unix::fs::PermissionsExt;
    let module = module.to_str().expect("a UTF-8 path");
    let file = dir.join("operator-token");
    std::fs::write(&file, token).expect("written");
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).expect("chmod");
    let file = file.to_str().expect("a UTF-8 path");
    wasmod(
        &["publish", base, module, "--operator-token-file", file],
        dir,
    )
}

#[test]
fn a_published_build_serves_at_once_and_after_a_restart() {
    let built = built(Profile::Release);
    let work = tempfile::tempdir().expect("a directory");
    let data = work.path().join("data");
    let v1 = built.library_path("notes");
    let (v2, incompatible) = (work.path().join("v2.wasm"), work.path().join("bad.wasm"));
    std::fs::write(&v2, built.example("notes_v2")).expect("written");
    std::fs::write(&incompatible, built.example("notes_incompatible")).expect("written");

    let served = Served::start(&v1, &data);
    let base = served.base.clone();
    let (status, issued) = send(&agent(), "POST", &format!("{base}/v1/identity"), None, None);
    assert_eq!(status, 200);
    let token = issued["token"].as_str().expect("a token").to_owned();
    let added = send(
        &agent(),
        "POST",
        &format!("{base}/v1/reducers/add_note"),
        Some(&token),
        Some(&json!(["first"]).to_string()),
    );
    assert_eq!(added.0, 200, "{}", added.1);

    let operator = served.operator_token.as_str();
    let refused = |module: &Path, token: &str, status: i32, says: &str| {
        let output = publish(&base, module, token, work.path());
        let stderr = text(&output.stderr);
        assert_eq!(output.status.code(), Some(status), "{stderr}");
        assert!(stderr.contains(says), "{stderr}");
    };
    refused(&incompatible, operator, 1, "column `text` was removed");
    // A build with an indirect call on a dispatch path is refused before it is sent.
    let indirect = built.library_path("control-table-dispatch");
    refused(&indirect, operator, 1, "indirect call(s) on dispatch paths");
    refused(&v2, "not-the-operator", 2, "not_operator");
    assert_eq!(build(&base), json!(1), "refused builds change nothing");

    let dispatch = |base: &str, token: &str| {
        let url = format!("{base}/v1/admin/dispatch");
        let (status, report) = send(&agent(), "GET", &url, Some(token), None);
        assert_eq!(status, 200, "{report}");
        report
    };
    let first_report = dispatch(&base, &served.operator_token);
    assert_eq!(first_report["clean"], true, "{first_report}");

    let published = publish(&base, &v2, &served.operator_token, work.path());
    assert!(published.status.success(), "{}", text(&published.stderr));
    let printed = text(&published.stdout);
    assert!(
        printed.starts_with(&format!(
            "published build 1 to {base}: serving from commit "
        )),
        "{printed}"
    );
    assert!(printed.contains("column `stars` is added"), "{printed}");
    assert_eq!(build(&base), json!(2));
    // The console's dispatch report is the new build's.
    let report = dispatch(&base, &served.operator_token);
    assert_eq!(report["clean"], true, "{report}");
    assert_ne!(report["report"], first_report["report"]);
    let starred = send(
        &agent(),
        "POST",
        &format!("{base}/v1/reducers/star"),
        Some(&token),
        Some(&json!([1]).to_string()),
    );
    assert_eq!(starred.0, 200, "{}", starred.1);
    let (status, _, logs) = served.terminate();
    assert!(status.success(), "{logs}");

    // The directory belongs to the published build now, which it keeps.
    let kept = data.join("published.wasm");
    assert_eq!(
        std::fs::read(&kept).expect("the published build is kept"),
        built.example("notes_v2")
    );
    let old = wasmod(
        &[
            "serve",
            v1.to_str().expect("a UTF-8 path"),
            "--listen",
            "127.0.0.1:0",
            "--data",
            data.to_str().expect("a UTF-8 path"),
        ],
        work.path(),
    );
    assert_eq!(old.status.code(), Some(1), "{}", text(&old.stderr));
    let said = text(&old.stderr);
    assert!(said.contains("`stars` was removed"), "{said}");
    assert!(said.contains(&kept.display().to_string()), "{said}");

    let again = Served::start(&kept, &data);
    assert_eq!(build(&again.base), json!(2));
    assert_eq!(
        notes(&again.base),
        [json!({"id": 1, "text": "first", "stars": 1})]
    );
}
