//! `wasmod-loadgen`: issue 11's loopback benchmarks, against a real `wasmod serve` process.
//!
//! Criterion measures what runs in one process; what crosses sockets (a thousand clients, a
//! server process, the kernel's loopback) needs a load generator. This one spawns the built
//! `wasmod` on a free loopback port, serving the quickstart with its data in a temporary
//! directory, drives it with clients of the binary protocol (the `wasmod_protocol::ws`
//! types), and measures beside it, in the same run, bare broadcast servers with no wasmod in
//! them (the floor), one per WebSocket library:
//!
//! - `delivery`: deliveries per second at saturation and latency at half of it ([`delivery`]);
//! - `calls`: pipelined reducer calls per second over 1 and many connections ([`calls`]);
//! - `idle`: the server's memory with many idle subscribed connections ([`idle`]);
//! - `initial`: the initial rows of a large subscription, to a bare client and into the SDK
//!   client's cache, and the updates one SDK client applies per second ([`initial`],
//!   [`cached`]);
//! - `crash`: subscribers reconnecting after a SIGKILL of the server, resumed against full
//!   rows ([`crash`]);
//! - `transfer`: SpacetimeDB's keynote-2 workload (`examples/transfer`), committed calls per
//!   second over the binary and JSON WebSocket and HTTP, with the server's CPU per call by
//!   thread, beside a floor that only answers ([`transfer`]);
//! - `replication`: edge nodes (`wasmod edge`, fed by a `redis-server`): the primary's CPU per
//!   commit with and without subscribers on two edges, and lag and deliveries on the edges
//!   against one node ([`replication`]);
//! - `failover`: a replicated deployment (three nodes over a 3-node NATS JetStream cluster)
//!   under load while its primary, its standbys and its engine's servers are killed, paused
//!   and restarted at random, checked for every acknowledged write, with each failover timed
//!   ([`failover`]);
//! - `all`: every one of them, the way `benches/RESULTS.md` records them.
//!
//! Every run is bounded (timeouts on every wait, a fixed number of steps) and the servers are
//! child processes killed when the run ends, by error or panic too. `--quick` runs small
//! sizes for CI: it fails (non-zero exit) when something is broken (no deliveries, missing
//! rows, errors), never because something is slow.

mod audience;
mod cached;
mod caller;
mod calls;
mod client;
mod crash;
mod delivery;
mod deployment;
mod failover;
mod floor;
mod http;
mod idle;
mod initial;
mod latency;
mod pace;
mod process;
mod replication;
mod report;
mod sample;
mod target;
mod transfer;

use anyhow::{Context, Result};
use clap::{Parser, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

/// Issue 11's loopback benchmarks against `wasmod serve`, beside bare WebSocket floors.
#[derive(Parser)]
#[command(version)]
struct Cli {
    #[command(flatten)]
    options: Options,
    #[command(subcommand)]
    command: Command,
}

/// What every measurement takes.
#[derive(clap::Args)]
struct Options {
    /// The `wasmod` binary [default: `wasmod` beside this program, i.e. of the same profile].
    #[arg(long, global = true)]
    wasmod: Option<PathBuf>,
    /// The module to serve: the quickstart (or a module with its `message` table and `send`
    /// reducer) as a `.wasm` file [default: the quickstart, built by `wasmod-wasm-tests`].
    #[arg(long, global = true)]
    module: Option<PathBuf>,
    /// Small sizes and short runs, for CI: checks that everything works, measures little.
    #[arg(long, global = true)]
    quick: bool,
    /// How many times each measurement runs (the report gives medians).
    #[arg(long, global = true)]
    repeat: Option<usize>,
}

#[derive(Subcommand)]
enum Command {
    /// A measurement.
    #[command(flatten)]
    Measure(Measurement),
    /// A floor server (started by the `delivery` and `idle` measurements, not by hand).
    #[command(hide = true)]
    FloorServer {
        /// Its WebSocket library.
        #[arg(long, value_enum)]
        library: floor::Library,
    },
    /// The answering floor (started by the `transfer` measurement, not by hand).
    #[command(hide = true)]
    AnswerServer,
}

#[derive(Subcommand)]
enum Measurement {
    /// Every measurement.
    All,
    /// Deliveries per second and latency, wasmod against the floors.
    Delivery {
        /// Subscribed clients.
        #[arg(long)]
        clients: Option<usize>,
    },
    /// Pipelined reducer calls per second (durability `group`).
    Calls,
    /// The server's memory with many idle subscribed connections.
    Idle {
        /// Idle connections.
        #[arg(long)]
        connections: Option<usize>,
    },
    /// The initial rows of a large subscription.
    Initial {
        /// Table sizes, ascending, comma-separated.
        #[arg(long, value_delimiter = ',')]
        rows: Option<Vec<u64>>,
    },
    /// Subscribers reconnecting after a SIGKILL: resumed against full rows.
    Crash {
        /// Subscribers connected at each kill.
        #[arg(long)]
        subscribers: Option<usize>,
        /// Rows in the subscribed table.
        #[arg(long)]
        rows: Option<u64>,
    },
    /// The keynote-2 transfer workload: committed calls per second and server CPU per call.
    Transfer {
        /// Accounts seeded.
        #[arg(long)]
        accounts: Option<u32>,
        /// Zipf exponents of the accounts drawn (0 uniform), comma-separated.
        #[arg(long, value_delimiter = ',')]
        alpha: Option<Vec<f64>>,
        /// Connection counts, comma-separated.
        #[arg(long, value_delimiter = ',')]
        connections: Option<Vec<usize>>,
        /// Transports, comma-separated.
        #[arg(long, value_enum, value_delimiter = ',')]
        transport: Option<Vec<transfer::Transport>>,
        /// Durability modes of `wasmod serve`, comma-separated.
        #[arg(long, value_delimiter = ',')]
        durability: Option<Vec<String>>,
        /// Calls in flight per WebSocket connection.
        #[arg(long)]
        in_flight: Option<usize>,
        /// Seconds each run calls.
        #[arg(long)]
        seconds: Option<f64>,
        /// More arguments for `wasmod serve` (after `--`).
        #[arg(last = true)]
        serve: Vec<String>,
    },
    /// Edge nodes: the primary's CPU per commit, lag and deliveries (needs `redis-server`).
    Replication {
        /// Subscribed clients, spread over the two edges.
        #[arg(long)]
        clients: Option<usize>,
    },
    /// A replicated deployment under load and random failures: every acknowledged write
    /// checked, failovers timed (needs `nats-server`).
    Failover {
        /// Seconds of chaos.
        #[arg(long)]
        seconds: Option<f64>,
        /// The seed of the chaos's choices (printed by every run).
        #[arg(long)]
        seed: Option<u64>,
        /// Only kill the primary, this many times (the failover time measurement).
        #[arg(long)]
        kills: Option<usize>,
    },
}

/// The programs a measurement starts.
#[derive(Clone, Debug)]
pub struct Paths {
    /// `wasmod`.
    pub wasmod: PathBuf,
    /// The module it serves.
    pub module: PathBuf,
    /// The module of the transfer workload (`examples/transfer`).
    pub transfer_module: PathBuf,
    /// This program, to start floor servers.
    pub loadgen: PathBuf,
}

/// The sizes of a run.
#[derive(Clone, Debug)]
pub struct Settings {
    /// Repetitions of each measurement.
    pub repeat: usize,
    /// The delivery search.
    pub delivery: delivery::Plan,
    /// Connection counts of the calls measurement.
    pub call_connections: Vec<usize>,
    /// How long each calls run lasts.
    pub call_run: Duration,
    /// Idle connections.
    pub idle: usize,
    /// Table sizes of the initial-subscription measurement.
    pub initial_rows: Vec<u64>,
    /// Whether the server refusing an initial subscription fails the run: the quick sizes
    /// always fit the server's queue bound, the full run's 1,000,000 rows may not (and the
    /// refusal is then what the report says).
    pub refusal_fails: bool,
    /// Commits one SDK client applies after the initial subscriptions.
    pub client_updates: u64,
    /// The edge nodes' run.
    pub replication: replication::Plan,
    /// The reconnections after a SIGKILL.
    pub crash: crash::Plan,
    /// The transfer workload's runs.
    pub transfer: transfer::Sizes,
    /// The failover run.
    pub failover: failover::Plan,
}

impl Settings {
    /// Issue 11's sizes.
    fn full() -> Self {
        Self {
            repeat: 3,
            delivery: delivery::Plan {
                clients: 1000,
                start_rate: 50.0,
                factor: 1.5,
                max_steps: 14,
                step: Duration::from_secs(2),
                latency_run: Duration::from_secs(5),
            },
            call_connections: vec![1, 64],
            call_run: Duration::from_secs(5),
            idle: 10_000,
            initial_rows: vec![100_000, 200_000, 1_000_000],
            refusal_fails: false,
            client_updates: 50_000,
            replication: replication::Plan {
                clients: 10_000,
                rate: 10.0,
                run: Duration::from_secs(10),
            },
            crash: crash::Plan {
                subscribers: 1000,
                rows: 1000,
            },
            transfer: transfer::Sizes {
                accounts: 100_000,
                in_flight: 16,
                run: Duration::from_secs(10),
                alphas: vec![0.0, 1.5],
                connections: vec![10, 64],
                transports: vec![
                    transfer::Transport::Binary,
                    transfer::Transport::Json,
                    transfer::Transport::Http,
                ],
                durabilities: vec!["group".into()],
                serve_arguments: Vec::new(),
            },
            failover: failover::Plan {
                run: Duration::from_secs(180),
                kills: None,
                seed: None,
                http_writers: 4,
                socket_writers: 4,
                subscribers: 16,
            },
        }
    }

    /// CI's sizes: a few seconds each on a debug build.
    fn quick() -> Self {
        Self {
            repeat: 1,
            delivery: delivery::Plan {
                clients: 20,
                start_rate: 20.0,
                factor: 2.0,
                max_steps: 3,
                step: Duration::from_secs(1),
                latency_run: Duration::from_secs(1),
            },
            call_connections: vec![1, 8],
            call_run: Duration::from_secs(1),
            idle: 200,
            initial_rows: vec![5_000],
            refusal_fails: true,
            client_updates: 500,
            replication: replication::Plan {
                clients: 20,
                rate: 20.0,
                run: Duration::from_secs(1),
            },
            crash: crash::Plan {
                subscribers: 20,
                rows: 100,
            },
            transfer: transfer::Sizes {
                accounts: 1000,
                in_flight: 16,
                run: Duration::from_secs(1),
                alphas: vec![0.0, 1.5],
                connections: vec![4],
                transports: vec![
                    transfer::Transport::Binary,
                    transfer::Transport::Json,
                    transfer::Transport::Http,
                ],
                durabilities: vec!["group".into(), "off".into()],
                serve_arguments: Vec::new(),
            },
            failover: failover::Plan {
                run: Duration::from_secs(30),
                kills: None,
                seed: None,
                http_writers: 2,
                socket_writers: 2,
                subscribers: 4,
            },
        }
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::FloorServer { library } => exit(floor::serve(library)),
        Command::AnswerServer => exit(transfer::floor::serve()),
        Command::Measure(measurement) => exit(run(cli.options, measurement)),
    }
}

fn exit(result: Result<()>) -> ExitCode {
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("wasmod-loadgen: {error:#}");
            ExitCode::FAILURE
        }
    }
}

fn run(options: Options, measurement: Measurement) -> Result<()> {
    let loadgen = std::env::current_exe().context("this program's path")?;
    let wasmod = options.wasmod.unwrap_or_else(|| {
        loadgen.with_file_name(format!("wasmod{}", std::env::consts::EXE_SUFFIX))
    });
    let module = match options.module {
        Some(module) => module,
        None => {
            wasmod_wasm_tests::built(wasmod_wasm_tests::Profile::Release).library_path("quickstart")
        }
    };
    let transfer_module =
        wasmod_wasm_tests::built(wasmod_wasm_tests::Profile::Release).library_path("transfer");
    let paths = Paths {
        wasmod,
        module,
        transfer_module,
        loadgen,
    };
    let mut settings = if options.quick {
        Settings::quick()
    } else {
        Settings::full()
    };
    if let Some(repeat) = options.repeat {
        settings.repeat = repeat.max(1);
    }
    // A thousand clients need more descriptors than the usual soft limit of 1024; the
    // servers inherit the raised limit.
    process::raise_open_files(u64::MAX)?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    report::header(&paths, &settings);
    runtime.block_on(async {
        match measurement {
            Measurement::All => {
                report::delivery(&paths, &settings).await?;
                report::calls(&paths, &settings).await?;
                report::idle(&paths, &settings).await?;
                report::initial(&paths, &settings).await?;
                report::crash(&paths, &settings).await?;
                report::transfer(&paths, &settings).await?;
                report::replication(&paths, &settings).await?;
                report::failover(&paths, &settings).await
            }
            Measurement::Delivery { clients } => {
                if let Some(clients) = clients {
                    settings.delivery.clients = clients;
                }
                report::delivery(&paths, &settings).await
            }
            Measurement::Calls => report::calls(&paths, &settings).await,
            Measurement::Idle { connections } => {
                if let Some(connections) = connections {
                    settings.idle = connections;
                }
                report::idle(&paths, &settings).await
            }
            Measurement::Initial { rows } => {
                if let Some(rows) = rows {
                    settings.initial_rows = rows;
                }
                report::initial(&paths, &settings).await
            }
            Measurement::Crash { subscribers, rows } => {
                if let Some(subscribers) = subscribers {
                    settings.crash.subscribers = subscribers;
                }
                if let Some(rows) = rows {
                    settings.crash.rows = rows;
                }
                report::crash(&paths, &settings).await
            }
            Measurement::Transfer {
                accounts,
                alpha,
                connections,
                transport,
                durability,
                in_flight,
                seconds,
                serve,
            } => {
                let sizes = &mut settings.transfer;
                sizes.accounts = accounts.unwrap_or(sizes.accounts);
                sizes.alphas = alpha.unwrap_or(std::mem::take(&mut sizes.alphas));
                sizes.connections = connections.unwrap_or(std::mem::take(&mut sizes.connections));
                sizes.transports = transport.unwrap_or(std::mem::take(&mut sizes.transports));
                sizes.durabilities = durability.unwrap_or(std::mem::take(&mut sizes.durabilities));
                sizes.in_flight = in_flight.unwrap_or(sizes.in_flight).max(1);
                if let Some(seconds) = seconds {
                    sizes.run = Duration::from_secs_f64(seconds.max(0.1));
                }
                sizes.serve_arguments = serve;
                report::transfer(&paths, &settings).await
            }
            Measurement::Replication { clients } => {
                if let Some(clients) = clients {
                    settings.replication.clients = clients;
                }
                report::replication(&paths, &settings).await
            }
            Measurement::Failover {
                seconds,
                seed,
                kills,
            } => {
                let plan = &mut settings.failover;
                if let Some(seconds) = seconds {
                    plan.run = Duration::from_secs_f64(seconds.max(0.0));
                }
                plan.seed = seed;
                plan.kills = kills;
                report::failover(&paths, &settings).await
            }
        }
    })
}
