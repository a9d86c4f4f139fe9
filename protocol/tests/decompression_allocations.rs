//! What decompressing a message allocates, counted by this binary's global allocator: a
//! reader of many small messages must not pay for a decoder's window on each (issue 12: "a
//! brotli message of one row must not allocate the decoder's 64 KiB window each time").
//!
//! The counts are per thread, so that tests running in parallel do not see each other's
//! allocations.

use wasmod_fuzzing::alloc::{Allocations, Counting};
use wasmod_protocol::ws::compression::{self, Compression, Decompressor};

#[global_allocator]
static GLOBAL: Counting = Counting;

/// What `run` allocated on this thread: calls, bytes, and the largest allocation.
fn allocations(run: impl FnOnce()) -> (usize, usize, usize) {
    let (
        (),
        Allocations {
            calls,
            bytes,
            largest,
        },
    ) = wasmod_fuzzing::alloc::allocations(run);
    (calls, bytes, largest)
}

/// An encoded row of a chat table: an id, a sender, a short text.
fn one_row() -> Vec<u8> {
    let mut row = 7u64.to_le_bytes().to_vec();
    row.extend_from_slice(&[3; 32]);
    let text = b"hello world, the dragon is near the castle";
    row.extend_from_slice(&(text.len() as u32).to_le_bytes());
    row.extend_from_slice(text);
    row
}

/// `input` compressed by brotli declaring a window of 2^`lgwin` bytes.
fn brotli_with_window(input: &[u8], lgwin: i32) -> Vec<u8> {
    let params = brotli::enc::BrotliEncoderParams {
        quality: compression::BROTLI_QUALITY,
        lgwin,
        ..Default::default()
    };
    let mut out = Vec::new();
    brotli::BrotliCompress(&mut &input[..], &mut out, &params).expect("in memory");
    out
}

#[test]
fn a_one_row_brotli_message_never_allocates_a_window() {
    let row = one_row();
    // As the server writes it (a window fitted to the message), and as an encoder that
    // declares a 64 KiB (16-bit) or 4 MiB window would.
    for lgwin in [10, 16, 22] {
        let frame = brotli_with_window(&row, lgwin);
        let mut decompressor = Decompressor::default();
        for message in 0..100 {
            let (calls, bytes, largest) = allocations(|| {
                let back = decompressor
                    .decompress(Compression::Brotli, &frame)
                    .expect("decompresses");
                assert_eq!(back, row);
            });
            // Measured: 11 allocations, 10,571 bytes, the largest 4,320 (Huffman tables),
            // whatever the declared window.
            assert!(
                largest < 8 * 1024 && bytes < 16 * 1024 && calls < 16,
                "lgwin {lgwin}, message {message}: {calls} allocations, {bytes} bytes, \
                 the largest {largest}"
            );
        }
    }
}

#[test]
fn gzip_allocates_its_state_once_then_only_each_output() {
    let row = one_row();
    let mut frame = Vec::new();
    compression::gzip(&row, compression::GZIP_LEVEL, &mut frame);
    let mut decompressor = Decompressor::default();
    let decompress = |decompressor: &mut Decompressor| {
        let back = decompressor
            .decompress(Compression::Gzip, &frame)
            .expect("decompresses");
        assert_eq!(back, row);
    };
    let (_, first, _) = allocations(|| decompress(&mut decompressor));
    assert!(
        first > 30_000,
        "the inflate state and its window: {first} bytes"
    );
    for message in 1..100 {
        let (calls, bytes, _) = allocations(|| decompress(&mut decompressor));
        assert_eq!(
            (calls, bytes),
            (1, row.len() + 1),
            "message {message}: only its output"
        );
    }
}
