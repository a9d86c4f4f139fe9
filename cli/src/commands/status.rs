//! `wasmod status <url>…`: how each server of a deployment is doing, from its `/health`.
//!
//! For a node of a replicated deployment (`docs/high-availability.md`) a line says its part
//! (standby, primary, starting, deposed), the lease's holder and term, how far it has applied
//! the replicated log and how far behind it is; the primary lists its standbys' lag. A server
//! of no deployment says only whether it is well. `/health` is public: no token is needed.
//!
//! **Exit status**: 0 when every server answered and is well, 1 when one is not (or did not
//! answer): a script's check of a deployment.

use crate::api;
use crate::failure::{Failure, Result};
use crate::output;
use serde_json::Value;

/// `wasmod status`'s arguments.
#[derive(clap::Args)]
pub struct Args {
    /// The servers' URLs: `http://10.0.0.1:3000 http://10.0.0.2:3000 …`.
    #[arg(required = true)]
    urls: Vec<String>,
    /// Print each server's `/health` as its JSON rather than as text.
    #[arg(long)]
    json: bool,
}

/// Runs `wasmod status`.
pub fn run(args: Args) -> Result {
    let mut all_well = true;
    for url in &args.urls {
        let base = url.trim_end_matches('/');
        let agent = api::agent(base);
        let answer = agent.get(&format!("{base}/health")).call();
        let line = match answer {
            Ok(mut response) => {
                let status = response.status().as_u16();
                let text = response.body_mut().read_to_string().unwrap_or_default();
                let health: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
                all_well &= status == 200;
                match args.json {
                    true => format!("{base} {health}"),
                    false => describe(base, &health),
                }
            }
            Err(error) => {
                all_well = false;
                format!("{base}: no answer ({error})")
            }
        };
        output::print(format!("{line}\n"))?;
    }
    match all_well {
        true => Ok(()),
        false => Err(Failure::module("a server is not well")),
    }
}

/// One server's `/health`, as a line (and a line per standby on a primary).
fn describe(base: &str, health: &Value) -> String {
    let status = health["status"].as_str().unwrap_or("unknown");
    let reason = health["reason"]
        .as_str()
        .map(|reason| format!(" ({reason})"))
        .unwrap_or_default();
    let cluster = &health["cluster"];
    if cluster.is_null() {
        return format!("{base}: {status}{reason}");
    }
    let holder = match (
        cluster["primary"]["node"].as_str(),
        cluster["primary"]["url"].as_str(),
    ) {
        (Some(node), Some(url)) if !url.is_empty() => format!("{node} at {url}"),
        (Some(node), _) => node.to_owned(),
        _ => "none".to_owned(),
    };
    let number = |field: &str| cluster[field].as_u64().unwrap_or(0);
    let mut line = format!(
        "{base}: {} {}, {status}{reason}; primary {holder}, term {}; applied {}, {} behind the log; \
         promoted {} times",
        cluster["node"].as_str().unwrap_or("?"),
        cluster["role"].as_str().unwrap_or("?"),
        number("term"),
        number("applied"),
        number("log_end").saturating_sub(number("applied")),
        number("promotions"),
    );
    for standby in cluster["standbys"].as_array().into_iter().flatten() {
        let applied = standby["applied"].as_u64().unwrap_or(0);
        line.push_str(&format!(
            "\n  standby {}: applied {applied}, {} behind",
            standby["node"].as_str().unwrap_or("?"),
            number("applied").saturating_sub(applied)
        ));
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_primary_says_its_term_and_its_standbys_lag() {
        let health = json!({
            "status": "ok",
            "cluster": {
                "node": "a", "role": "primary", "term": 7, "applied": 120, "log_end": 120,
                "promotions": 1, "primary": {"node": "a", "url": "http://10.0.0.1:3000"},
                "standbys": [{"node": "b", "applied": 117}],
            },
        });
        assert_eq!(
            describe("http://10.0.0.1:3000", &health),
            "http://10.0.0.1:3000: a primary, ok; primary a at http://10.0.0.1:3000, term 7; \
             applied 120, 0 behind the log; promoted 1 times\n  standby b: applied 117, 3 behind"
        );
    }

    #[test]
    fn a_server_of_no_deployment_says_how_it_is() {
        let health = json!({"status": "degraded", "reason": "the commit log failed"});
        assert_eq!(
            describe("http://h", &health),
            "http://h: degraded (the commit log failed)"
        );
    }
}
