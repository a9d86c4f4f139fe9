//! The processes a measurement talks to: a `wasmod serve` or a floor server, started as a
//! child on a free loopback port and killed when the measurement ends, however it ends.
//!
//! Both kinds announce their address with one line on stdout, `listening on http://ADDR`
//! (what `wasmod serve` prints), so one spawner serves both. The child's resident memory is
//! read from `/proc/<pid>/status`: the memory goal is about the server process alone.

use anyhow::{anyhow, bail, Context, Result};
use std::io::{BufRead, BufReader, Write};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::time::Duration;
use tokio::sync::mpsc;

/// How long a child may take to print its address (a debug `wasmod serve` compiles the
/// module first).
const START_TIMEOUT: Duration = Duration::from_secs(120);

/// A child process serving on loopback; killed on drop.
#[derive(Debug)]
pub struct Served {
    child: Child,
    /// `ws://127.0.0.1:PORT`.
    pub ws_base: String,
    stdin: Option<ChildStdin>,
    lines: mpsc::UnboundedReceiver<String>,
}

impl Served {
    /// Starts `command` (stdout piped, stderr inherited) and waits for its address line.
    ///
    /// The child is killed on drop, and also by the kernel if this process dies without
    /// dropping it (an abort, a signal): `PR_SET_PDEATHSIG`, which fires when the thread that
    /// spawned the child ends, and the runtime's worker threads that spawn children live as
    /// long as the process.
    pub async fn start(command: Command) -> Result<Self> {
        Self::start_logging(command, Stdio::inherit()).await
    }

    /// [`start`](Self::start) with the child's stderr sent to `stderr` (a log file of its
    /// own, say) instead of this program's.
    pub async fn start_logging(mut command: Command, stderr: Stdio) -> Result<Self> {
        let program = command.get_program().to_string_lossy().into_owned();
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
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(stderr)
            .spawn()
            .with_context(|| format!("starting {program}"))?;
        let stdout = child.stdout.take().context("the child's stdout")?;
        let stdin = child.stdin.take();
        let (sender, lines) = mpsc::unbounded_channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if sender.send(line).is_err() {
                    break;
                }
            }
        });
        let mut served = Self {
            child,
            ws_base: String::new(),
            stdin,
            lines,
        };
        let line = served.next_line(START_TIMEOUT).await.with_context(|| {
            format!("{program} did not print its address within {START_TIMEOUT:?}")
        })?;
        let address = line
            .strip_prefix("listening on http://")
            .ok_or_else(|| anyhow!("{program} printed {line:?} instead of its address"))?;
        served.ws_base = format!("ws://{address}");
        Ok(served)
    }

    /// The child's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Sends `signal` to the child: SIGSTOP and SIGCONT to pause it and let it go on, as a
    /// machine paused or cut off would be.
    pub fn signal(&self, signal: libc::c_int) -> Result<()> {
        let pid = libc::pid_t::try_from(self.pid()).context("a pid")?;
        // SAFETY: kill(2) with the id of our own child, which has not been reaped (only
        // `kill` and drop reap it, and they take `self`).
        if unsafe { libc::kill(pid, signal) } != 0 {
            bail!(
                "signal {signal} to {pid}: {}",
                std::io::Error::last_os_error()
            );
        }
        Ok(())
    }

    /// Kills the child at once (SIGKILL, as a crash or a lost machine: no shutdown runs, a
    /// paused child too) and waits for it to end.
    pub fn kill(mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// The child's memory now.
    pub fn memory(&self) -> Result<Memory> {
        Memory::of(self.pid())
    }

    /// Resets the child's peak (`VmHWM`) to what is resident now, so that the next peak read
    /// is of what happens from here on (Linux's `clear_refs`, value 5).
    pub fn reset_peak(&self) -> Result<()> {
        let path = format!("/proc/{}/clear_refs", self.pid());
        std::fs::write(&path, "5").with_context(|| format!("writing {path}"))
    }

    /// Sends one line to the child's stdin.
    pub fn tell(&mut self, line: &str) -> Result<()> {
        let stdin = self.stdin.as_mut().context("the child's stdin is closed")?;
        writeln!(stdin, "{line}").context("writing to the child")?;
        stdin.flush().context("writing to the child")
    }

    /// The child's next line on stdout, waiting at most `timeout`.
    pub async fn next_line(&mut self, timeout: Duration) -> Result<String> {
        match tokio::time::timeout(timeout, self.lines.recv()).await {
            Ok(Some(line)) => Ok(line),
            Ok(None) => bail!("the child's stdout ended"),
            Err(_) => bail!("no line from the child within {timeout:?}"),
        }
    }
}

impl Drop for Served {
    /// SIGTERM, then SIGKILL if the server has not exited within 5 s: stopped this way
    /// `wasmod serve` runs its shutdown, and an instrumented build (CI's coverage run) writes
    /// its profile at exit, which a killed process never does.
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            if let Ok(pid) = libc::pid_t::try_from(self.child.id()) {
                // SAFETY: kill(2) with the id of our own child, which has not been reaped.
                unsafe { libc::kill(pid, libc::SIGTERM) };
            }
            let start = std::time::Instant::now();
            while start.elapsed() < Duration::from_secs(5) {
                if let Ok(Some(_)) = self.child.try_wait() {
                    return;
                }
                std::thread::sleep(Duration::from_millis(10));
            }
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A cap on connections that no run reaches: the load generator's clients all come from one
/// address, and the idle measurement holds 10,000 of them.
pub const UNCAPPED_CONNECTIONS: &str = "1000000";

/// `wasmod serve MODULE` on a free loopback port, with its data in `data` and `extra`
/// arguments (durability, queue) after. New identities are not rate-limited, and
/// connections are not capped per address (nor, as far as the open-file limit allows, in
/// all): every client of the load generator comes from 127.0.0.1 without a token.
pub async fn wasmod_serve(
    wasmod: &Path,
    module: &Path,
    data: &Path,
    extra: &[&str],
) -> Result<Served> {
    Served::start(serve_command(wasmod, module, data, "127.0.0.1:0", extra)?).await
}

/// The command of [`wasmod_serve`], listening on `listen` (a fixed address, for a node that
/// must come back where its clients look for it).
pub fn serve_command(
    wasmod: &Path,
    module: &Path,
    data: &Path,
    listen: &str,
    extra: &[&str],
) -> Result<Command> {
    if !wasmod.is_file() {
        bail!(
            "{} is not a file: build it (`cargo build -p wasmod-cli`) or pass --wasmod",
            wasmod.display()
        );
    }
    let mut command = Command::new(wasmod);
    command
        .args(["--log", "warn", "serve"])
        .arg(module)
        .args([
            "--listen",
            listen,
            "--identities-per-minute",
            "0",
            "--anonymous-calls-per-minute",
            "0",
            "--max-connections",
            UNCAPPED_CONNECTIONS,
            "--max-connections-per-address",
            UNCAPPED_CONNECTIONS,
            "--data",
        ])
        .arg(data)
        .args(extra);
    Ok(command)
}

/// A process's resident memory, from `/proc/<pid>/status`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Memory {
    /// Resident now (`VmRSS`), in bytes.
    pub resident: u64,
    /// The most it has been resident (`VmHWM`), in bytes.
    pub peak: u64,
}

impl Memory {
    /// The memory of process `pid`.
    pub fn of(pid: u32) -> Result<Self> {
        let path = format!("/proc/{pid}/status");
        let status = std::fs::read_to_string(&path).with_context(|| format!("reading {path}"))?;
        Self::parse(&status).with_context(|| format!("{path} has no VmRSS and VmHWM"))
    }

    fn parse(status: &str) -> Option<Self> {
        let field = |name: &str| {
            status.lines().find_map(|line| {
                let kib = line.strip_prefix(name)?.trim().strip_suffix("kB")?;
                kib.trim().parse::<u64>().ok().map(|kib| kib * 1024)
            })
        };
        Some(Self {
            resident: field("VmRSS:")?,
            peak: field("VmHWM:")?,
        })
    }
}

/// The CPU time process `pid` has used so far, user and system, from `/proc/<pid>/stat`.
pub fn cpu_time(pid: u32) -> Result<Duration> {
    let path = format!("/proc/{pid}/stat");
    let stat = std::fs::read_to_string(&path).with_context(|| format!("reading {path}"))?;
    let ticks = cpu_ticks(&stat).with_context(|| format!("{path} has no utime and stime"))?;
    Ok(Duration::from_secs_f64(
        ticks as f64 / clock_ticks_per_second()?,
    ))
}

/// The CPU time each thread of process `pid` has used so far, by thread id, with the thread's
/// name (`comm`: what the program named it, 15 bytes at most), from `/proc/<pid>/task/*/stat`.
/// A thread that ends while they are read is left out.
pub fn thread_times(pid: u32) -> Result<Vec<ThreadTime>> {
    let dir = format!("/proc/{pid}/task");
    let per_second = clock_ticks_per_second()?;
    let mut threads = Vec::new();
    for entry in std::fs::read_dir(&dir).with_context(|| format!("reading {dir}"))? {
        let path = entry.with_context(|| format!("reading {dir}"))?.path();
        let Ok(stat) = std::fs::read_to_string(path.join("stat")) else {
            continue;
        };
        let (Some(name), Some(ticks)) = (thread_name(&stat), cpu_ticks(&stat)) else {
            continue;
        };
        let id = path.file_name().and_then(|n| n.to_str()?.parse().ok());
        threads.push(ThreadTime {
            id: id.unwrap_or_default(),
            name: name.to_owned(),
            cpu: Duration::from_secs_f64(ticks as f64 / per_second),
        });
    }
    Ok(threads)
}

/// One thread's CPU time so far.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ThreadTime {
    /// Its id (the kernel's, unique among the process's live threads).
    pub id: u32,
    /// Its name.
    pub name: String,
    /// User and system time.
    pub cpu: Duration,
}

fn clock_ticks_per_second() -> Result<f64> {
    // SAFETY: sysconf has no preconditions.
    let per_second = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if per_second <= 0 {
        bail!("the clock's ticks per second are unknown");
    }
    Ok(per_second as f64)
}

/// The command of a `/proc/<pid>/stat` line: between the first `(` and the last `)`.
fn thread_name(stat: &str) -> Option<&str> {
    stat.get(stat.find('(')? + 1..stat.rfind(')')?)
}

/// `utime + stime` of a `/proc/<pid>/stat` line, in clock ticks: fields 14 and 15, counted
/// after the command's parenthesis (which may hold spaces).
fn cpu_ticks(stat: &str) -> Option<u64> {
    let after_command = &stat[stat.rfind(')')? + 1..];
    let mut fields = after_command.split_whitespace().skip(11);
    let user: u64 = fields.next()?.parse().ok()?;
    let system: u64 = fields.next()?.parse().ok()?;
    Some(user + system)
}

/// Raises this process's soft limit of open files to `wanted` (children inherit it), or as
/// far as the hard limit allows; returns the limit now in force.
pub fn raise_open_files(wanted: u64) -> Result<u64> {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: `limit` is a valid `rlimit` for getrlimit to write.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } != 0 {
        bail!("getrlimit: {}", std::io::Error::last_os_error());
    }
    let target = wanted.min(limit.rlim_max);
    if target > limit.rlim_cur {
        limit.rlim_cur = target;
        // SAFETY: `limit` is a valid `rlimit` with the soft limit under the hard one.
        if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &limit) } != 0 {
            bail!("setrlimit: {}", std::io::Error::last_os_error());
        }
    }
    Ok(limit.rlim_cur.max(target))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_is_read_from_a_status_file() {
        let status = "Name:\twasmod\nVmHWM:\t   2048 kB\nVmRSS:\t   1024 kB\nThreads:\t3\n";
        assert_eq!(
            Memory::parse(status),
            Some(Memory {
                resident: 1024 * 1024,
                peak: 2048 * 1024
            })
        );
        assert_eq!(Memory::parse("Name:\tx\n"), None);
    }

    #[test]
    fn cpu_time_is_read_from_a_stat_line() {
        let stat = "42 (a (b) c) S 1 42 42 0 -1 4194560 100 0 0 0 7 5 0 0 20 0 1 0";
        assert_eq!(cpu_ticks(stat), Some(12));
        assert_eq!(cpu_ticks("42 (x) S 1"), None);
        assert!(cpu_time(std::process::id()).is_ok());
        assert_eq!(thread_name(stat), Some("a (b) c"));
    }

    #[test]
    fn threads_are_listed_by_name() {
        std::thread::Builder::new()
            .name("loadgen-probe".into())
            .spawn(|| {
                let threads = thread_times(std::process::id()).expect("/proc is mounted");
                assert!(threads.iter().any(|thread| thread.name == "loadgen-probe"));
            })
            .expect("a thread")
            .join()
            .expect("the probe");
    }

    #[test]
    fn this_process_has_memory() {
        let memory = Memory::of(std::process::id()).expect("/proc is mounted");
        assert!(memory.resident > 0 && memory.peak >= memory.resident);
    }
}
