//! A real NATS JetStream cluster on loopback, for tests.
//!
//! wasmod's high availability (DESIGN.md, "Beyond one machine: roles") stands on a consensus
//! engine it does not implement: Debian's `nats-server` (2.9.10) in a 3-node JetStream cluster,
//! spoken to with the `async-nats` crate (0.52). The primary appends each commit batch to a
//! replicated stream, a deposed primary's appends are refused, standbys tail the stream, and
//! the lease is a key-value entry. Whether that holds depends on how this server version and
//! this client version behave together, which only real processes show: a fake engine would
//! tell us what we assumed. [`NatsCluster`] starts those processes, one `nats-server` per node
//! on free loopback ports with its own store directory, waits until they form a cluster, and
//! lets a test kill, pause, resume and restart nodes.
//!
//! It serves the high-availability tests of the node, the server and the CLI, and the load
//! generator's failover run. Its own tests (`tests/engine.rs`) pin down the behaviour of the
//! engine that wasmod relies on, so that an upgrade of either side that changes it fails there,
//! under a name, rather than as a flaky failover elsewhere. The library is synchronous and
//! uses only the standard library (the monitoring endpoints are read over a plain
//! `TcpStream`), `tempfile` and `libc` (signals); the tests bring `async-nats` and tokio.
//!
//! # What the engine tests establish
//!
//! With `async-nats` 0.52 against `nats-server` 2.9.10, 3 nodes on loopback, a stream with
//! `num_replicas: 3` on file storage:
//!
//! - **Appends.** `Context::send_publish` then awaiting the returned `PublishAckFuture` gives a
//!   `PublishAck` whose `sequence` is the message's, once a quorum holds it. A message of
//!   almost [`MAX_PAYLOAD`] is one append like any other.
//! - **Fencing.** A publish whose `Nats-Expected-Last-Sequence` (`PublishMessage::
//!   expected_last_sequence`) is not the stream's last sequence is refused: the error's
//!   `kind()` is `PublishErrorKind::WrongLastSequence`, and its `source()` is the server's
//!   `jetstream::Error` (code 400, `error_code()` `ErrorCode::STREAM_WRONG_LAST_SEQUENCE`, that
//!   is 10071, "wrong last sequence: LAST"). An empty stream's last sequence is 0, which a
//!   first append names. Nothing refused is stored.
//! - **Unavailability** is told apart from fencing by the kind: `PublishErrorKind::TimedOut`
//!   when no acknowledgement came within the JetStream context's timeout
//!   (`ContextBuilder::timeout`, 5 s by default: a publish does not wait on the connection's
//!   `request_timeout`), and `PublishErrorKind::StreamNotFound`, at once, when the server
//!   answered "no responders": the stream exists but has no leader at the moment. A timed-out
//!   publish may still be appended later: a stream leader that lost its quorum keeps the
//!   message and commits it when a follower comes back.
//! - **Retrying.** `Nats-Msg-Id` (`PublishMessage::message_id`) is checked before the expected
//!   sequence: a publish whose id the stream has seen (within its duplicate window, 2 minutes
//!   by default) is answered with the first one's sequence and `duplicate: true`, and nothing
//!   is stored, even when its expected sequence has gone stale since. A refused publish's id is
//!   not remembered. So a publish whose outcome is unknown is retried with the same id and the
//!   same expected sequence: `duplicate: true` means it had been appended, 10071 that another
//!   writer appended first.
//! - **Key-value** (the lease): `Context::create_key_value` fails on 2.9.10, with
//!   `CreateKeyValueErrorKind::JetStream`, because it first reads the account's limits
//!   (`Context::query_account`) and cannot decode 2.9.10's answer, which lacks
//!   `reserved_memory` and `reserved_storage`. The bucket's stream is created by hand instead
//!   (`KV_<bucket>` on `$KV.<bucket>.>`, as `create_key_value` would) and opened with
//!   `Context::get_key_value`. On an R3 bucket, `Store::create` of a live key fails with
//!   `CreateErrorKind::AlreadyExists`; `Store::update` at a stale revision fails with
//!   `UpdateErrorKind::WrongLastRevision` (server code 10071 again); a key not written for the
//!   bucket's `max_age` is gone, `Store::entry` returns `None` (no delete or purge entry), and
//!   `create` succeeds again, then an update at the old revision fails. With `max_age` 2 s,
//!   `create` succeeded 2.01 to 2.05 s after the last write, polling every 50 ms. `entry` is
//!   a direct get (the bucket's stream allows them), which any replica answers, the leader or
//!   not, so it may be stale: once it answered `None` half a millisecond after a `create` was
//!   acknowledged, from a replica that had not applied it yet. Only `create` and `update`,
//!   which the stream's leader checks, decide who holds a lease.
//! - **Reading.** An ordered consumer (`Stream::create_consumer` with
//!   `consumer::pull::OrderedConfig`, `DeliverPolicy::ByStartSequence`, then `messages()`)
//!   delivers from the start sequence in order and goes on with what is appended later;
//!   `Stream::get_raw_message(sequence)` reads one message, as does `Stream::direct_get` on a
//!   stream with `allow_direct: true`; `Stream::info()` gives `state.last_sequence`.
//! - **Failures.** With the stream's leader killed, publishes fail with `StreamNotFound` until
//!   another is elected: acknowledged again after 4 to 9 s (Raft's election timeout). A paused
//!   leader is worse for a writer: it still holds its subscriptions, so publishes time out
//!   (6 to 8 s of them) instead of failing at once. With two of three nodes killed, publishes
//!   fail (`StreamNotFound` when the survivor does not lead the stream, `TimedOut` when it does
//!   or the client is reconnecting). Restarting one of the two brings acknowledgements back
//!   after 6 to 30 s when it is the stalest node (a stream leader election that may take
//!   several rounds, then a catch-up that 2.9.10 may report stalled and retry after 10 s),
//!   2 to 6 s after the restart when the stream's leader alone had lost its quorum; the last
//!   node rejoins in about 2 s.
//!
//! # Running the tests
//!
//! Each test starts its own cluster on its own ports, so they may run in parallel, as `cargo
//! test` runs them (two at a time on 2 cores: six servers). The timings above are what they
//! printed (`-- --nocapture`) over runs with `--test-threads=1` and in parallel on the
//! project's 2-core machine. Each wait is bounded, and a failing test prints the end of every
//! node's log.
//!
//! # Processes
//!
//! Every node is killed when the [`NatsCluster`] is dropped, and by the kernel if the thread
//! that started (or restarted) it ends first (`PR_SET_PDEATHSIG`), so a test that aborts leaves
//! no server behind. Start and restart nodes from a thread that outlives the cluster, such as
//! the test's own thread (where `#[tokio::test]` runs its body), not from a short-lived one such
//! as one of tokio's `spawn_blocking` threads.

use std::fs::File;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use std::{fmt, fs};

/// How long the nodes get to form a cluster, or a restarted node to rejoin it. A cold 3-node
/// start takes about a second on loopback, but a node restarted into a cluster that had lost
/// its quorum waits for a meta leader election (4 to 9 s in 2.9.10, a Raft election timeout)
/// and a stream leader election (in one round or several), then catches up on its streams,
/// which 2.9.10 at times reports stalled and retries after 10 s: measured at 6 to 30 s.
const READY_TIMEOUT: Duration = Duration::from_secs(120);

/// How often the monitoring endpoints are polled while waiting. Each failed `/healthz` is a
/// warning line in the node's log.
const POLL: Duration = Duration::from_millis(100);

/// The bound on one monitoring request: a paused node accepts connections (the kernel does)
/// but never answers.
const MONITOR_TIMEOUT: Duration = Duration::from_secs(1);

/// How many lines of each node's log a failing test prints.
const LOG_TAIL: usize = 60;

/// The largest message the servers accept: 8 MiB instead of the default 1 MiB, because wasmod
/// appends a commit batch as one message, and a batch may be large. 8 MiB is the most the
/// server accepts without warning that larger payloads are not recommended.
pub const MAX_PAYLOAD: usize = 8 * 1024 * 1024;

/// A JetStream cluster of `nats-server` processes on loopback, each with its own client,
/// monitoring and cluster ports and its own store directory in a temporary directory.
///
/// Nodes are numbered from 0, and named `n0`, `n1`, … (their `server_name`). The methods panic
/// on failure, naming the node's log file: this is a test harness.
pub struct NatsCluster {
    nodes: Vec<Node>,
    /// The configuration files, store directories and logs. Declared after `nodes`, so it is
    /// removed after the processes that write into it are killed.
    dir: tempfile::TempDir,
}

/// One node: how to start it, where it listens, its process when it runs.
struct Node {
    name: String,
    config: PathBuf,
    log: PathBuf,
    client_port: u16,
    monitor_port: u16,
    /// `None` once killed.
    process: Option<Child>,
    /// Stopped by SIGSTOP and not yet continued.
    paused: bool,
}

impl NatsCluster {
    /// Starts a cluster of `nodes` servers and waits until JetStream's meta group has a
    /// leader that every node has contact with and is current with.
    ///
    /// # Panics
    ///
    /// If `nodes` is less than 2 (2.9.10 refuses to start a JetStream cluster without routes;
    /// 3 nodes keep a quorum through one failure), if `nats-server` cannot be started
    /// (`apt-get install nats-server`), or if the cluster does not form within two minutes.
    pub fn start(nodes: usize) -> NatsCluster {
        assert!(nodes >= 2, "a JetStream cluster has 2 nodes or more");
        let dir = tempfile::Builder::new()
            .prefix("nats-cluster")
            .tempdir()
            .expect("a temporary directory for the cluster");
        // All listeners held until every port is read, so that no two are the same.
        let listeners: Vec<TcpListener> = (0..nodes * 3)
            .map(|_| TcpListener::bind("127.0.0.1:0").expect("a free loopback port"))
            .collect();
        let ports: Vec<u16> = listeners
            .iter()
            .map(|listener| listener.local_addr().expect("a bound port").port())
            .collect();
        drop(listeners);
        let (client_ports, rest) = ports.split_at(nodes);
        let (monitor_ports, route_ports) = rest.split_at(nodes);
        let nodes = (0..nodes)
            .map(|i| {
                let name = format!("n{i}");
                let routes: Vec<String> = (0..route_ports.len())
                    .filter(|&j| j != i)
                    .map(|j| format!("\"nats-route://127.0.0.1:{}\"", route_ports[j]))
                    .collect();
                let store = dir.path().join(&name);
                let config = dir.path().join(format!("{name}.conf"));
                fs::write(
                    &config,
                    format!(
                        "server_name: {name}\n\
                         listen: \"127.0.0.1:{client}\"\n\
                         http: \"127.0.0.1:{monitor}\"\n\
                         max_payload: {MAX_PAYLOAD}\n\
                         jetstream {{\n  store_dir: \"{store}\"\n}}\n\
                         cluster {{\n  name: wasmod-test\n  listen: \"127.0.0.1:{route}\"\n  \
                         routes: [{routes}]\n}}\n",
                        client = client_ports[i],
                        monitor = monitor_ports[i],
                        store = store.display(),
                        route = route_ports[i],
                        routes = routes.join(", "),
                    ),
                )
                .expect("writing a node's configuration");
                Node {
                    log: dir.path().join(format!("{name}.log")),
                    name,
                    config,
                    client_port: client_ports[i],
                    monitor_port: monitor_ports[i],
                    process: None,
                    paused: false,
                }
            })
            .collect();
        let mut cluster = NatsCluster { nodes, dir };
        for node in &mut cluster.nodes {
            node.spawn();
        }
        cluster.wait_ready("to form a cluster");
        cluster
    }

    /// Each node's client URL, `nats://127.0.0.1:PORT`, in node order. The whole list is what
    /// `async_nats::connect` takes to know every node (a `Vec<String>` is `ToServerAddrs`), so
    /// that it reconnects to another when the one it uses dies; one of them, for a client that
    /// must talk to one node in particular.
    pub fn urls(&self) -> Vec<String> {
        self.nodes.iter().map(Node::url).collect()
    }

    /// Every node's client URL, comma-separated: the one-argument form for a command line or
    /// an environment variable (as the Go tools' `NATS_URL`). `async_nats::connect` does not
    /// take it (0.52 parses a string as one URL, and fails on the comma): give it
    /// [`urls`](Self::urls), or this split at the commas.
    pub fn url_list(&self) -> String {
        self.urls().join(",")
    }

    /// Kills node `i` (SIGKILL, as a crash or a power cut would: no lame-duck mode, no flush)
    /// and waits for its process to end. Works on a paused node too. Its store stays, for
    /// [`NatsCluster::restart`].
    ///
    /// # Panics
    ///
    /// If the node is not running.
    pub fn kill(&mut self, i: usize) {
        let node = &mut self.nodes[i];
        let mut process = node
            .process
            .take()
            .unwrap_or_else(|| panic!("node {} is not running: nothing to kill", node.name));
        // SIGKILL ends a stopped process too: the kernel does not need it to run.
        process.kill().expect("SIGKILL to a node");
        process.wait().expect("waiting for a killed node");
        node.paused = false;
    }

    /// Pauses node `i` (SIGSTOP): it keeps its connections and sockets but answers nothing, as
    /// a node behind a partition or in a long pause would. The cluster sees it go silent
    /// rather than disconnect.
    ///
    /// # Panics
    ///
    /// If the node is not running, or is already paused.
    pub fn pause(&mut self, i: usize) {
        let node = &mut self.nodes[i];
        assert!(!node.paused, "node {} is already paused", node.name);
        node.signal(libc::SIGSTOP);
        node.paused = true;
    }

    /// Resumes paused node `i` (SIGCONT). It does not wait for the node to catch up.
    ///
    /// # Panics
    ///
    /// If the node is not paused.
    pub fn resume(&mut self, i: usize) {
        let node = &mut self.nodes[i];
        assert!(node.paused, "node {} is not paused", node.name);
        node.signal(libc::SIGCONT);
        node.paused = false;
    }

    /// Starts killed node `i` again, with the same configuration, ports and store, and waits
    /// until it is back in the cluster: every running node has contact with one meta leader
    /// and is current with it and with the streams it holds (the server's `/healthz`). Its log
    /// goes on in the same file.
    ///
    /// # Panics
    ///
    /// If the node is running, or the cluster is not whole again within two minutes (with two
    /// of three nodes still down, there is no quorum to rejoin).
    pub fn restart(&mut self, i: usize) {
        let node = &mut self.nodes[i];
        assert!(
            node.process.is_none(),
            "node {} is running: kill it before restarting it",
            node.name
        );
        node.spawn();
        let what = format!("to take node {} back", node.name);
        self.wait_ready(&what);
    }

    /// Whether node `i`'s process is alive, paused or not: `false` once killed, or if it
    /// exited on its own.
    pub fn is_running(&mut self, i: usize) -> bool {
        self.nodes[i].exited().is_none() && self.nodes[i].process.is_some()
    }

    /// Node `i`'s process id while it runs (paused or not), `None` once killed: to read what
    /// the engine costs (its CPU time, in `/proc`), as the load generator does.
    pub fn pid(&self, i: usize) -> Option<u32> {
        self.nodes[i].process.as_ref().map(Child::id)
    }

    /// Node `i`'s log (its standard output and error, over all its restarts), for a failure
    /// message.
    pub fn log(&self, i: usize) -> String {
        self.nodes[i].log()
    }

    /// Waits until every running, unpaused node answers `/healthz` with 200 and names the
    /// same meta leader, itself one of them, in `/jsz`.
    ///
    /// 2.9.10's `/healthz` answers 503 until the node has contact with a meta leader and is
    /// current with it, and with every stream and consumer it holds a replica of (its
    /// `js-enabled-only` option checks only that JetStream is on, which is not enough here).
    /// `/jsz` is read for the leader's name: a node that lost its leader can still report
    /// healthy for the moment it takes to notice.
    fn wait_ready(&mut self, what: &str) {
        let started = Instant::now();
        loop {
            let mut waiting = Vec::new();
            let mut leaders = Vec::new();
            for node in &mut self.nodes {
                if let Some(status) = node.exited() {
                    panic!(
                        "nats-server {} exited ({status}) while waiting for the cluster {what}; \
                         its log, {}:\n{}",
                        node.name,
                        node.log.display(),
                        node.log()
                    );
                }
                if node.process.is_none() || node.paused {
                    continue;
                }
                match node.monitor("/healthz") {
                    Ok((200, _)) => {}
                    Ok((status, body)) => waiting.push(format!("{}: {status} {body}", node.name)),
                    Err(err) => waiting.push(format!("{}: {err}", node.name)),
                }
                match node.monitor("/jsz") {
                    Ok((200, body)) => leaders.push(meta_leader(&body)),
                    Ok((status, body)) => waiting.push(format!("{}: {status} {body}", node.name)),
                    Err(err) => waiting.push(format!("{}: {err}", node.name)),
                }
            }
            let up: Vec<&str> = self
                .nodes
                .iter()
                .filter(|node| node.process.is_some() && !node.paused)
                .map(|node| node.name.as_str())
                .collect();
            let agreed = leaders.first().is_some_and(|first| {
                first.as_deref().is_some_and(|leader| up.contains(&leader))
                    && leaders.iter().all(|leader| leader == first)
            });
            if waiting.is_empty() && agreed {
                return;
            }
            if started.elapsed() > READY_TIMEOUT {
                let logs: Vec<String> = self
                    .nodes
                    .iter()
                    .map(|node| format!("{}", node.log.display()))
                    .collect();
                panic!(
                    "the NATS cluster failed {what} within {READY_TIMEOUT:?}: {} (meta \
                     leaders seen: {leaders:?}); the nodes' logs: {}",
                    waiting.join("; "),
                    logs.join(", ")
                );
            }
            std::thread::sleep(POLL);
        }
    }
}

impl fmt::Debug for NatsCluster {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("NatsCluster")
            .field("dir", &self.dir.path())
            .field("urls", &self.urls())
            .finish_non_exhaustive()
    }
}

impl Drop for NatsCluster {
    /// Kills every node still running (paused ones too: SIGKILL needs no SIGCONT). When the
    /// cluster is dropped by a failing test (a panic), the end of each node's log is printed
    /// first: the temporary directory that holds the logs goes with the cluster.
    fn drop(&mut self) {
        for node in &mut self.nodes {
            if let Some(mut process) = node.process.take() {
                let _ = process.kill();
                let _ = process.wait();
            }
        }
        if std::thread::panicking() {
            for node in &self.nodes {
                // Without the warnings that the harness's own polling of `/healthz` caused.
                let log = node.log();
                let lines: Vec<&str> = log
                    .lines()
                    .filter(|line| !line.contains("Healthcheck failed"))
                    .collect();
                let tail = lines[lines.len().saturating_sub(LOG_TAIL)..].join("\n");
                eprintln!("--- the end of {}'s log:\n{tail}", node.name);
            }
        }
    }
}

impl Node {
    fn url(&self) -> String {
        format!("nats://127.0.0.1:{}", self.client_port)
    }

    /// Starts the node's process, its standard output and error appended to its log.
    fn spawn(&mut self) {
        let log = File::options()
            .create(true)
            .append(true)
            .open(&self.log)
            .expect("opening a node's log");
        let mut command = Command::new(server_program());
        command
            .arg("-c")
            .arg(&self.config)
            .stdin(Stdio::null())
            .stdout(log.try_clone().expect("a node's log, twice"))
            .stderr(log);
        // SAFETY: the closure runs in the child between fork and exec and only makes one
        // async-signal-safe system call.
        unsafe {
            command.pre_exec(|| {
                if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let process = command.spawn().unwrap_or_else(|err| {
            panic!("starting nats-server ({err}; it is Debian's `apt-get install nats-server`)")
        });
        self.process = Some(process);
    }

    /// The exit status of the node's process, if it has ended on its own: `None` while it
    /// runs, and for a node [`NatsCluster::kill`] killed (its process is gone from here).
    fn exited(&mut self) -> Option<std::process::ExitStatus> {
        let process = self.process.as_mut()?;
        let status = process.try_wait().expect("polling a node's process")?;
        self.process = None;
        Some(status)
    }

    /// Sends `signal` to the node's process.
    fn signal(&mut self, signal: libc::c_int) {
        let process = self
            .process
            .as_ref()
            .unwrap_or_else(|| panic!("node {} is not running", self.name));
        let pid = libc::pid_t::try_from(process.id()).expect("a process id is a pid_t");
        // SAFETY: kill(2) with the id of our own child, which has not been reaped (it is
        // reaped only by `kill`, `exited` or drop, which take it out of `process` first).
        if unsafe { libc::kill(pid, signal) } != 0 {
            panic!(
                "signal {signal} to node {}: {}",
                self.name,
                std::io::Error::last_os_error()
            );
        }
    }

    fn log(&self) -> String {
        fs::read_to_string(&self.log)
            .unwrap_or_else(|err| format!("(could not read {}: {err})", self.log.display()))
    }

    /// A GET of `path` on the node's monitoring port: its status code and body. HTTP/1.0, so
    /// the server closes the connection after its answer and the body is what is left.
    fn monitor(&self, path: &str) -> std::io::Result<(u16, String)> {
        let address = SocketAddr::from(([127, 0, 0, 1], self.monitor_port));
        let mut stream = TcpStream::connect_timeout(&address, MONITOR_TIMEOUT)?;
        stream.set_read_timeout(Some(MONITOR_TIMEOUT))?;
        stream.set_write_timeout(Some(MONITOR_TIMEOUT))?;
        write!(stream, "GET {path} HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n")?;
        let mut response = String::new();
        stream.read_to_string(&mut response)?;
        let invalid = || std::io::Error::other(format!("not an HTTP response: {response:?}"));
        let (head, body) = response.split_once("\r\n\r\n").ok_or_else(invalid)?;
        let status = head
            .split(' ')
            .nth(1)
            .and_then(|code| code.parse().ok())
            .ok_or_else(invalid)?;
        Ok((status, body.to_owned()))
    }
}

/// The meta leader's name in a `/jsz` answer (`"meta_cluster": {"leader": "n2", …}`), if it
/// names one. Read by hand, to keep this crate free of a JSON parser: the server writes the
/// field as `"leader": "NAME"`, and `leader` appears nowhere before it.
fn meta_leader(jsz: &str) -> Option<String> {
    let (_, after) = jsz.split_once("\"meta_cluster\"")?;
    let (_, after) = after.split_once("\"leader\"")?;
    let value = after.trim_start().strip_prefix(':')?.trim_start();
    let name = value.strip_prefix('"')?.split('"').next()?;
    (!name.is_empty()).then(|| name.to_owned())
}

/// Debian's `nats-server`: `/usr/sbin/nats-server`, which a user's `PATH` may lack, else
/// whichever `nats-server` the `PATH` finds.
fn server_program() -> PathBuf {
    let debian = Path::new("/usr/sbin/nats-server");
    if debian.exists() {
        debian.to_owned()
    } else {
        PathBuf::from("nats-server")
    }
}

#[cfg(test)]
mod tests {
    use super::meta_leader;

    #[test]
    fn the_meta_leader_is_read_from_jsz() {
        let jsz =
            r#"{"server_id": "X", "meta_cluster": {"name": "c", "leader": "n2", "peer": "p"}}"#;
        assert_eq!(meta_leader(jsz).as_deref(), Some("n2"));
        let pretty =
            "{\n  \"meta_cluster\": {\n    \"name\": \"c\",\n    \"leader\": \"n0\"\n  }\n}";
        assert_eq!(meta_leader(pretty).as_deref(), Some("n0"));
        assert_eq!(meta_leader(r#"{"meta_cluster": {"name": "c"}}"#), None);
        assert_eq!(meta_leader(r#"{"meta_cluster": {"leader": ""}}"#), None);
        assert_eq!(meta_leader(r#"{"server_id": "X"}"#), None);
    }
}
