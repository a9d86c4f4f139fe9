//! What checking a client's token costs, by kind: a token of the server (HMAC-SHA256) and
//! OpenID Connect tokens of each kind of key the issuers use (RS256, ES256, EdDSA), through
//! [`Authenticator::verify`], with the issuer's keys already held (the case of every request
//! but the first): verified each time (`cache_capacity` 0), and kept verified (the default:
//! what a client sending the same token on every request pays). HTTP calls pay it on every
//! request; a WebSocket once, when it opens.
//!
//! `cargo bench -p wasmod-server --bench tokens`; results in benches/RESULTS.md.

#[allow(
    dead_code,
    reason = "the tests' issuer, of which the benchmark uses a part"
)]
#[path = "../tests/api/oidc_issuer.rs"]
mod oidc_issuer;

use criterion::{criterion_group, criterion_main, Criterion};
use jsonwebtoken::Algorithm;
use oidc_issuer::Issuer;
use std::time::Duration;
use wasmod_abi::Identity;
use wasmod_server::{Authenticator, Secret, Tokens};

fn token_checks(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("a runtime");
    let issuer = runtime.block_on(Issuer::start());
    let authenticator = |cache_capacity| {
        let mut settings = issuer.settings(Duration::from_secs(5));
        settings.cache_capacity = cache_capacity;
        runtime.block_on(async {
            Authenticator::new(
                Tokens::new(Secret::from_bytes([7; 32]), Duration::from_secs(3600)),
                Some(settings),
            )
            .expect("the issuer's settings")
        })
    };
    let (verifying, keeping) = (authenticator(0), authenticator(4096));
    let own = keeping.tokens().issue(Identity::from_bytes([1; 32])).token;
    let mut checks = vec![("server's own (HMAC-SHA256)".to_owned(), &keeping, own)];
    for algorithm in [Algorithm::RS256, Algorithm::ES256, Algorithm::EdDSA] {
        let token = issuer.key(algorithm).sign(&issuer.claims("alice", |_| {}));
        for (how, authenticator) in [("verified", &verifying), ("kept verified", &keeping)] {
            let name = format!("OpenID Connect {algorithm:?}, {how}");
            checks.push((name, authenticator, token.clone()));
        }
    }
    for (_, authenticator, token) in &checks {
        runtime
            .block_on(authenticator.verify(token))
            .expect("the token verifies, its keys fetched");
    }
    let mut group = c.benchmark_group("token check");
    for (name, authenticator, token) in &checks {
        group.bench_function(name.as_str(), |b| {
            b.iter(|| runtime.block_on(authenticator.verify(token)))
        });
    }
    group.finish();
}

criterion_group!(benches, token_checks);
criterion_main!(benches);
