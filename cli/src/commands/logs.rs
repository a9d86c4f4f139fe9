//! `wasmod logs <url> [--level info] [--operator-token-file F]`: streams a served module's logs.
//!
//! The records come from the server's live log feed (`GET /v1/admin/logs/feed`, the one the
//! admin console shows), which first sends the recent records the server keeps, then each new
//! one as the module logs it. The feed is the operator's: it takes the operator token that
//! `wasmod serve` printed at start (`--operator-token-file`, `WASMOD_OPERATOR_TOKEN` or `--operator-token`).
//!
//! **Output**: one line per record on stdout,
//! `2026-12-01T17:40:02.125Z  INFO chat (src/lib.rs:65): chat initialised`, its message's
//! control characters escaped (`\n`) so that a record is one line; with `--json`, the record
//! as the server sent it. When this reader falls behind, the server drops records for it
//! rather than wait; a line on stderr says how many.
//!
//! **Stopping**: Ctrl-C (SIGINT) or SIGTERM ends it with status 0; a server that ends the feed
//! is status 1; a refused token or a URL that is not a server's, status 2.

use super::credential::OperatorCredential;
use crate::failure::{Context, Failure, Result};
use crate::websocket;
use serde::Deserialize;
use std::io::{BufRead, BufReader, Write};
use tokio::sync::mpsc;

/// `wasmod logs`'s arguments.
#[derive(clap::Args)]
pub struct Args {
    /// The server's URL: `http://127.0.0.1:3000`.
    url: String,
    /// The least severe level shown: error, warn, info, debug, trace.
    #[arg(long, default_value = "info")]
    level: String,
    /// The operator token.
    #[command(flatten)]
    operator: OperatorCredential,
    /// Print each record as the server's JSON rather than as text.
    #[arg(long)]
    json: bool,
}

/// A record of the feed (`wasmod_node::FeedRecord`).
#[derive(Debug, Deserialize)]
struct Record {
    time_us: i64,
    level: String,
    target: String,
    file: String,
    line: u32,
    message: String,
}

/// What the feed said.
#[derive(Debug, PartialEq, Eq)]
enum Said {
    /// A record: its JSON.
    Log(String),
    /// The server dropped this many records for this reader.
    Dropped(u64),
}

/// Runs `wasmod logs`.
pub fn run(args: Args) -> Result {
    let authorization = args.operator.authorization()?;
    let base = websocket::http_base(&args.url)?;
    let url = format!("{base}/v1/admin/logs/feed?level={}", args.level);
    let agent: ureq::Agent = crate::api::config(&url).build().into();
    let mut response = agent
        .get(&url)
        .header("authorization", authorization)
        .call()
        .context(format!("GET {url}"))?;
    let status = response.status().as_u16();
    if status != 200 {
        let text = response.body_mut().read_to_string().unwrap_or_default();
        return Err(Failure::usage(format!(
            "{base} refused the log feed ({status}): {text}"
        )));
    }
    // The feed is read on a thread of its own, so that a signal ends the command at once
    // however long the feed stays silent.
    let (said, mut hear) = mpsc::channel(256);
    std::thread::spawn(move || {
        let reader = BufReader::new(response.into_body().into_reader());
        read_events(reader, |event| said.blocking_send(event).is_ok());
    });
    let json = args.json;
    websocket::run(async move {
        let print = async {
            while let Some(event) = hear.recv().await {
                print(&event, json)?;
            }
            Err::<(), _>(Failure::module(format!("{base} ended the log feed")))
        };
        tokio::select! {
            printed = print => printed,
            () = crate::signal::shutdown_signal() => Ok(()),
        }
    })
}

/// Reads server-sent events from `reader`, handing each to `heard` until it returns `false`
/// or the stream ends. Comments (keep-alives) and unknown events are skipped.
fn read_events(reader: impl BufRead, mut heard: impl FnMut(Said) -> bool) {
    let (mut event, mut data) = (String::new(), String::new());
    for line in reader.lines() {
        let Ok(line) = line else { return };
        if line.is_empty() {
            let said = match event.as_str() {
                "log" => Some(Said::Log(std::mem::take(&mut data))),
                "dropped" => serde_json::from_str::<serde_json::Value>(&data)
                    .ok()
                    .and_then(|value| value["dropped"].as_u64())
                    .map(Said::Dropped),
                _ => None,
            };
            event.clear();
            data.clear();
            if let Some(said) = said {
                if !heard(said) {
                    return;
                }
            }
        } else if let Some(value) = line.strip_prefix("event:") {
            event = value.trim_start().to_owned();
        } else if let Some(value) = line.strip_prefix("data:") {
            if !data.is_empty() {
                data.push('\n');
            }
            data.push_str(value.strip_prefix(' ').unwrap_or(value));
        }
    }
}

/// Prints one thing the feed said.
fn print(said: &Said, json: bool) -> Result {
    match said {
        Said::Dropped(count) => {
            eprintln!("wasmod: {count} log records were dropped: this reader fell behind");
            Ok(())
        }
        Said::Log(text) => {
            let line = if json {
                text.clone()
            } else {
                let record: Record = serde_json::from_str(text).map_err(|error| {
                    Failure::module(format!(
                        "the feed sent a record that is not one ({error}): {text}"
                    ))
                })?;
                render(&record)
            };
            let mut stdout = std::io::stdout().lock();
            writeln!(stdout, "{line}")
                .and_then(|()| stdout.flush())
                .context("writing to stdout")
        }
    }
}

/// A record as one line of text.
fn render(record: &Record) -> String {
    let message: String = record
        .message
        .chars()
        .map(|c| {
            if c.is_control() {
                c.escape_debug().to_string()
            } else {
                c.to_string()
            }
        })
        .collect();
    format!(
        "{} {:>5} {} ({}:{}): {message}",
        utc(record.time_us),
        record.level.to_uppercase(),
        record.target,
        record.file,
        record.line
    )
}

/// Microseconds since the Unix epoch as an RFC 3339 UTC time, to the millisecond.
fn utc(micros: i64) -> String {
    let seconds = micros.div_euclid(1_000_000);
    let millis = micros.rem_euclid(1_000_000) / 1000;
    let (days, of_day) = (seconds.div_euclid(86_400), seconds.rem_euclid(86_400));
    // Days to a civil date (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{millis:03}Z",
        of_day / 3600,
        of_day % 3600 / 60,
        of_day % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_are_read_and_keep_alives_skipped() {
        let stream = "event: log\nid: 1\ndata: {\"a\":1}\n\n:\n\nevent: dropped\ndata: {\"dropped\":5}\n\nevent: other\ndata: x\n\n";
        let mut heard = Vec::new();
        read_events(stream.as_bytes(), |said| {
            heard.push(said);
            true
        });
        assert_eq!(heard, [Said::Log("{\"a\":1}".into()), Said::Dropped(5)]);
    }

    #[test]
    fn a_record_is_one_line_with_its_time_in_utc() {
        let record = Record {
            time_us: 1_796_000_281_645_975,
            level: "warn".into(),
            target: "chat".into(),
            file: "src/lib.rs".into(),
            line: 65,
            message: "two\nlines".into(),
        };
        assert_eq!(
            render(&record),
            "2026-11-30T00:58:01.645Z  WARN chat (src/lib.rs:65): two\\nlines"
        );
        assert_eq!(utc(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(utc(951_782_400_000_000), "2000-02-29T00:00:00.000Z");
    }
}
