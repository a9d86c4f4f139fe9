//! Crash safety: the real `wasmod serve` on the quickstart takes a stream of `send` calls and
//! is killed with SIGKILL at random points, several times, on the same data directory. After
//! each restart every acknowledged message is there, exactly once, and every message there is
//! whole and one the client sent. Snapshots are taken every 40 transactions, so recovery
//! goes through snapshot + log, and kills also land during snapshots. Rounds alternate `--durability group` and `fsync`. (With
//! `off` this test fails: acknowledged messages are lost.)

use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};
use ureq::Agent;
use wasmod_wasm_tests::{built, Profile};

/// A running `wasmod serve`; killed (SIGKILL) when dropped.
struct Served {
    child: Child,
    base: String,
}

impl Served {
    fn start(wasm: &Path, data: &Path, durability: &str) -> Self {
        let mut child = Command::new(env!("CARGO_BIN_EXE_wasmod"))
            .arg("serve")
            .arg(wasm)
            .args(["--listen", "127.0.0.1:0", "--durability", durability])
            // Snapshots during the rounds, so kills land before, during and after them.
            .args(["--snapshot-every", "40"])
            .args(["--log", "warn"])
            .arg("--data")
            .arg(data)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("wasmod starts");
        let stdout = child.stdout.take().expect("stdout");
        let (lines, address) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if let Some(address) = line.strip_prefix("listening on ") {
                    let _ = lines.send(address.to_owned());
                }
            }
        });
        let base = address
            .recv_timeout(Duration::from_secs(120))
            .expect("wasmod serve prints the address it listens on");
        Self { child, base }
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        // `Child::kill` is SIGKILL on Unix: no shutdown code runs.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn agent() -> Agent {
    Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(Duration::from_secs(10)))
        .build()
        .into()
}

/// A pseudo-random number from the clock, for kill points.
fn random_below(bound: u64) -> u64 {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.subsec_nanos());
    u64::from(nanos.wrapping_mul(2_654_435_761)) % bound
}

/// Every message's text in the server's `message` table, with how often it appears, read page
/// after page (a round sends hundreds: more than a page may hold).
fn messages(agent: &Agent, base: &str, sender: &str) -> BTreeMap<String, usize> {
    let mut texts = BTreeMap::new();
    let mut cursor = String::new();
    loop {
        let mut response = agent
            .get(format!("{base}/v1/tables/message?limit=10000{cursor}"))
            .call()
            .expect("the table is readable");
        assert_eq!(response.status().as_u16(), 200);
        let body: Value =
            serde_json::from_str(&response.body_mut().read_to_string().expect("a body")).unwrap();
        for row in body["rows"].as_array().expect("rows") {
            assert_eq!(row["sender"], sender, "a whole row: {row}");
            assert!(row["sent"].is_number() || row["sent"].is_string(), "{row}");
            let text = row["text"].as_str().expect("a text").to_owned();
            *texts.entry(text).or_insert(0) += 1;
        }
        match body["next_cursor"].as_str() {
            Some(next) => cursor = format!("&cursor={next}"),
            None => return texts,
        }
    }
}

#[test]
fn acknowledged_calls_survive_sigkill() {
    let started = Instant::now();
    let wasm = built(Profile::Release).library_path("quickstart");
    let data = tempfile::tempdir().expect("a data directory");
    let reader = agent();

    let first = Served::start(&wasm, data.path(), "group");
    let mut issued = reader
        .post(format!("{}/v1/identity", first.base))
        .send_empty()
        .expect("an identity");
    let issued: Value =
        serde_json::from_str(&issued.body_mut().read_to_string().expect("a body")).unwrap();
    let token = issued["token"].as_str().expect("a token").to_owned();
    let identity = issued["identity"].as_str().expect("an identity").to_owned();
    let mut served = Some(first);

    let acknowledged = Arc::new(Mutex::new(BTreeSet::<String>::new()));
    let mut sent = BTreeSet::new();
    let rounds = 4;
    let clients = 3;
    for round in 0..rounds {
        let server = served.take().expect("a server");
        let base = server.base.clone();
        let stop = Arc::new(AtomicBool::new(false));
        let (tx, rx) = mpsc::channel();
        let handles: Vec<_> = (0..clients)
            .map(|client| {
                let (base, token, stop) = (base.clone(), token.clone(), stop.clone());
                let acknowledged = acknowledged.clone();
                let tx = tx.clone();
                std::thread::spawn(move || {
                    let agent = agent();
                    let mut n = 0;
                    while !stop.load(Ordering::Relaxed) {
                        let text = format!("r{round}-c{client}-{n}");
                        n += 1;
                        let _ = tx.send(text.clone());
                        let answer = agent
                            .post(format!("{base}/v1/reducers/send"))
                            .header("authorization", format!("Bearer {token}"))
                            .send(serde_json::json!([text]).to_string());
                        match answer {
                            Ok(response) if response.status().as_u16() == 200 => {
                                acknowledged.lock().unwrap().insert(text);
                            }
                            // 429s and the like: not acknowledged, try the next one.
                            Ok(_) => {}
                            // The server is gone.
                            Err(_) => return,
                        }
                    }
                })
            })
            .collect();
        drop(tx);
        std::thread::sleep(Duration::from_millis(150 + random_below(600)));
        let acked_before_kill = acknowledged.lock().unwrap().len();
        drop(server); // SIGKILL
        stop.store(true, Ordering::Relaxed);
        for handle in handles {
            handle.join().expect("a client");
        }
        sent.extend(rx.try_iter());
        assert!(
            acked_before_kill > 0,
            "round {round}: no call was acknowledged before the kill"
        );

        // Alternate the modes that acknowledge only durable commits.
        let mode = if round % 2 == 0 { "fsync" } else { "group" };
        let restarted = Served::start(&wasm, data.path(), mode);
        let found = messages(&reader, &restarted.base, &identity);
        let acknowledged = acknowledged.lock().unwrap();
        let missing: Vec<_> = acknowledged
            .iter()
            .filter(|text| !found.contains_key(*text))
            .collect();
        assert!(
            missing.is_empty(),
            "round {round}: acknowledged messages lost: {missing:?}"
        );
        for (text, count) in &found {
            assert!(sent.contains(text), "a message nobody sent: {text:?}");
            assert_eq!(*count, 1, "{text:?} is there {count} times");
        }
        served = Some(restarted);
    }
    let snapshots = std::fs::read_dir(data.path().join("db"))
        .expect("the log directory")
        .filter(|entry| {
            entry
                .as_ref()
                .is_ok_and(|entry| entry.path().extension().is_some_and(|ext| ext == "wsnap"))
        })
        .count();
    // Two if a kill came between a snapshot's rename and the removal of the older one.
    assert!(snapshots >= 1, "recovery went through a snapshot");
    assert!(
        started.elapsed() < Duration::from_secs(240),
        "the crash test took {:?}",
        started.elapsed()
    );
}
