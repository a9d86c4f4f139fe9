//! The client's decode and cache apply, timed in the browser by its own clock
//! (`performance.now()`): the scenarios of the native benches (`protocol/benches/decode.rs`,
//! `client/benches/cache.rs`, whose scenario files this module includes, so both measure the
//! same bytes), built into the wasm only with the `bench` feature, for
//! `client/npm/bench/browser.test.ts` (`npm run bench:browser`).
//!
//! The page asks for the scenarios (`Bench::names`), then times each with
//! [`Bench::time`]`(index, iterations)`: the milliseconds `iterations` runs took, measured
//! around the loop (the browser's clock is coarse, so one run is never timed alone), with what
//! a run needs made beforehand (the cache a transaction is applied to) outside the timing, as
//! criterion's `iter_batched` does natively. Gzip stands in for the native benches' brotli:
//! the browser build reads no brotli. This build inflates gzip in wasm (flate2, the feature
//! turned on for the bench), so that it can be timed beside the platform's
//! `DecompressionStream`, which the package uses: the page times that one itself
//! (`inflateFrame` on [`Bench::frame`]'s bytes), as it is asynchronous.

#[path = "../../../protocol/benches/support/mod.rs"]
mod support;

#[path = "../../../protocol/benches/support/scenarios.rs"]
mod scenarios;

#[path = "../../benches/support/cache.rs"]
mod cache;

use bytes::Bytes;
use std::hint::black_box;
use wasm_bindgen::prelude::*;
use wasmod_abi::encoding::{from_shared, to_vec};
use wasmod_client::cache::Cache;
use wasmod_protocol::ws::compression::{Compression, Decompressor};
use wasmod_protocol::ws::{BinaryServerMessage, RowList};

#[wasm_bindgen]
extern "C" {
    /// The browser's clock, in milliseconds.
    #[wasm_bindgen(js_namespace = performance, js_name = now)]
    fn performance_now() -> f64;
}

/// What one run of a scenario does.
enum Work {
    /// Decode a frame, as the client does (`BinaryServerMessage::from_frame`).
    Frame(Bytes),
    /// Read a row list alone.
    RowList(Bytes),
    /// Apply a transaction inserting these rows to an empty cache.
    Insert(Vec<Vec<u8>>),
    /// Apply a transaction replacing every row of a cache holding `old` with `new`.
    Update {
        old: Vec<Vec<u8>>,
        new: Vec<Vec<u8>>,
    },
}

/// A named scenario.
struct Scenario {
    name: String,
    rows: usize,
    work: Work,
}

/// The scenarios, and the decompressor kept across the decodes (as a connection keeps it).
#[wasm_bindgen]
pub struct Bench {
    scenarios: Vec<Scenario>,
    decompressor: Decompressor,
}

#[wasm_bindgen]
impl Bench {
    /// Every scenario, its bytes made now.
    #[wasm_bindgen(constructor)]
    pub fn new() -> Bench {
        let frame = |name: String, rows: usize, message: BinaryServerMessage, compression| {
            let frame = Bytes::from(message.to_frame(compression, 0));
            Scenario {
                name,
                rows,
                work: Work::Frame(frame),
            }
        };
        let mut scenarios = vec![frame(
            "decode identity_token".into(),
            0,
            scenarios::identity_token(),
            Compression::None,
        )];
        for count in scenarios::ROWS {
            for compression in [Compression::None, Compression::Gzip] {
                let name = format!("decode transaction_update {}", compression.name());
                scenarios.push(frame(name, count, scenarios::update(count), compression));
            }
            let name = "decode subscribe_applied none".to_owned();
            scenarios.push(frame(
                name,
                count,
                scenarios::applied(count),
                Compression::None,
            ));
            scenarios.push(Scenario {
                name: "decode row_list".into(),
                rows: count,
                work: Work::RowList(to_vec(&scenarios::rows(count)).into()),
            });
        }
        for count in cache::SIZES {
            scenarios.push(Scenario {
                name: "cache insert".into(),
                rows: count,
                work: Work::Insert(cache::rows(count, "hello")),
            });
            scenarios.push(Scenario {
                name: "cache update".into(),
                rows: count,
                work: Work::Update {
                    old: cache::rows(count, "hello"),
                    new: cache::rows(count, "edited"),
                },
            });
        }
        Bench {
            scenarios,
            decompressor: Decompressor::default(),
        }
    }

    /// The scenarios' names, in order (each with its row count: [`Bench::rows`]).
    pub fn names(&self) -> Vec<String> {
        self.scenarios.iter().map(|s| s.name.clone()).collect()
    }

    /// Scenario `index`'s frame, if it decodes one (for the page to inflate a gzip frame with
    /// the platform).
    pub fn frame(&self, index: usize) -> Option<Vec<u8>> {
        match &self.scenarios.get(index)?.work {
            Work::Frame(frame) => Some(frame.to_vec()),
            _ => None,
        }
    }

    /// Scenario `index`'s row count (`0` for the connection's first message).
    pub fn rows(&self, index: usize) -> usize {
        self.scenarios
            .get(index)
            .map_or(0, |scenario| scenario.rows)
    }

    /// Runs scenario `index` `iterations` times; the milliseconds the runs took together by
    /// `performance.now()`, what they need made beforehand not counted. Throws for an index
    /// out of range, or a frame that does not decode.
    pub fn time(&mut self, index: usize, iterations: u32) -> Result<f64, JsError> {
        let scenario = self
            .scenarios
            .get(index)
            .ok_or_else(|| JsError::new(&format!("no scenario {index}")))?;
        let decompressor = &mut self.decompressor;
        let runs = 0..iterations;
        let elapsed = match &scenario.work {
            Work::Frame(frame) => {
                let start = performance_now();
                for _ in runs {
                    black_box(BinaryServerMessage::from_frame(frame, decompressor))
                        .map_err(|error| JsError::new(&error.to_string()))?;
                }
                performance_now() - start
            }
            Work::RowList(list) => {
                let start = performance_now();
                for _ in runs {
                    black_box(from_shared::<RowList, _>(list))
                        .map_err(|error| JsError::new(&error.to_string()))?;
                }
                performance_now() - start
            }
            Work::Insert(rows) => timed(runs.map(|_| cache::keyed_cache()).collect(), &[], rows),
            Work::Update { old, new } => {
                timed(runs.map(|_| cache::filled(old)).collect(), old, new)
            }
        };
        Ok(elapsed)
    }
}

impl Default for Bench {
    fn default() -> Self {
        Self::new()
    }
}

/// The milliseconds applying a transaction (`deletes`, then `inserts`) to each of `caches`
/// took; the caches are dropped after the clock stops.
fn timed(mut caches: Vec<Cache>, deletes: &[Vec<u8>], inserts: &[Vec<u8>]) -> f64 {
    let start = performance_now();
    for cache in &mut caches {
        black_box(cache::apply_one(cache, deletes, inserts));
    }
    let elapsed = performance_now() - start;
    drop(caches);
    elapsed
}
