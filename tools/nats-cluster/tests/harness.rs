//! The harness itself: what a test that fails leaves behind, and what it refuses.

use std::net::{TcpListener, TcpStream};
use std::panic::{self, AssertUnwindSafe};
use std::time::{Duration, Instant};
use wasmod_nats_cluster::NatsCluster;

/// A test that panics with a cluster alive, one node paused: the cluster's drop (printing the
/// end of each node's log, since the test failed) kills every node, so nothing listens on
/// their ports any more.
#[test]
fn a_failing_test_leaves_no_server_behind() {
    let unwound = panic::catch_unwind(AssertUnwindSafe(|| {
        let mut cluster = NatsCluster::start(2);
        cluster.pause(1);
        let urls = cluster.urls();
        assert!(format!("{cluster:?}").contains(&urls[1]));
        for url in &urls {
            let address = url.strip_prefix("nats://").expect("a nats:// URL");
            TcpStream::connect(address).expect("a running node listens");
        }
        panic::panic_any(urls);
    }));
    let urls = unwound
        .expect_err("the test failed")
        .downcast::<Vec<String>>()
        .expect("the URLs it panicked with");
    for url in *urls {
        let address = url.strip_prefix("nats://").expect("a nats:// URL");
        assert!(
            TcpStream::connect(address).is_err(),
            "{url} still listens after the cluster was dropped"
        );
    }
}

/// A node that cannot start (here its client port is taken) fails the restart at once, with
/// its log, rather than after the wait for the cluster runs out.
#[test]
fn a_node_that_cannot_start_fails_its_restart_at_once_with_its_log() {
    let mut cluster = NatsCluster::start(2);
    cluster.kill(0);
    let address = cluster.urls()[0]
        .strip_prefix("nats://")
        .expect("a nats:// URL")
        .to_owned();
    let _taken = TcpListener::bind(&address).expect("the killed node's port");
    let started = Instant::now();
    let failed = panic::catch_unwind(AssertUnwindSafe(|| cluster.restart(0)))
        .expect_err("the restart fails");
    let message = failed.downcast::<String>().expect("a panic with a message");
    assert!(started.elapsed() < Duration::from_secs(10), "{message}");
    assert!(message.contains("nats-server n0 exited"), "{message}");
    assert!(message.contains("address already in use"), "{message}");
    assert!(!cluster.is_running(0));
}

#[test]
#[should_panic(expected = "2 nodes or more")]
fn one_node_is_no_cluster() {
    NatsCluster::start(1);
}
