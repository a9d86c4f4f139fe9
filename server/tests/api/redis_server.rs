//! A real `redis-server` (Debian's) on a free loopback port, without persistence, in a
//! temporary directory; killed when the guard goes. Stopped and started again on the same
//! port, it has lost every stream: what a Redis restart without persistence does.

use redis::aio::MultiplexedConnection;
use redis::streams::StreamRangeReply;
use std::net::TcpListener;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use wasmod_node::internals::StreamEntry;
use wasmod_node::replication::StreamAddress;

/// How long a test waits for Redis to start, or for a condition on the stream.
pub const PATIENCE: Duration = Duration::from_secs(20);

/// A running `redis-server`; killed on drop.
pub struct RedisServer {
    port: u16,
    dir: tempfile::TempDir,
    child: Option<Child>,
}

impl RedisServer {
    /// Starts one on a free loopback port and waits until it answers.
    pub fn start() -> Self {
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|listener| listener.local_addr())
            .expect("a free port")
            .port();
        let mut server = Self {
            port,
            dir: tempfile::tempdir().expect("a directory"),
            child: None,
        };
        server.resume();
        server
    }

    /// Kills it and waits for it to be gone.
    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Starts it again on the same port (empty) and waits until it answers.
    pub fn resume(&mut self) {
        let child = Command::new("redis-server")
            .args(["--port", &self.port.to_string(), "--bind", "127.0.0.1"])
            .args(["--save", "", "--appendonly", "no"])
            .arg("--dir")
            .arg(self.dir.path())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("redis-server starts (apt-get install redis-server)");
        self.child = Some(child);
        let started = Instant::now();
        let client = redis::Client::open(self.server()).expect("a client");
        while client
            .get_connection()
            .and_then(|mut connection| redis::cmd("PING").query::<String>(&mut connection))
            .is_err()
        {
            assert!(started.elapsed() < PATIENCE, "redis-server did not start");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// The process's id, while it runs.
    #[allow(dead_code)] // For the CLI's edge tests, which include this file.
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    /// `redis://127.0.0.1:<port>`.
    pub fn server(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
    }

    /// The address of stream `stream` on it.
    pub fn stream(&self, stream: &str) -> StreamAddress {
        format!("{}/{stream}", self.server())
            .parse()
            .expect("an address")
    }

    /// A connection.
    pub async fn connection(&self) -> MultiplexedConnection {
        redis::Client::open(self.server())
            .expect("a client")
            .get_multiplexed_async_connection()
            .await
            .expect("a connection")
    }

    /// Every entry of `stream`, oldest first, decoded.
    pub async fn entries(&self, stream: &str) -> Vec<StreamEntry> {
        let reply: StreamRangeReply = redis::cmd("XRANGE")
            .arg(stream)
            .arg("-")
            .arg("+")
            .query_async(&mut self.connection().await)
            .await
            .expect("XRANGE");
        reply
            .ids
            .iter()
            .map(|entry| StreamEntry::from_stream(entry).expect("an entry of ours"))
            .collect()
    }

    /// The length of `stream`.
    pub async fn len(&self, stream: &str) -> u64 {
        redis::cmd("XLEN")
            .arg(stream)
            .query_async(&mut self.connection().await)
            .await
            .expect("XLEN")
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        self.kill();
    }
}
