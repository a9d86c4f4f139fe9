//! The compression of binary server messages: the tag byte that starts each one, and the two
//! algorithms behind it.
//!
//! A client chooses a compression when it connects (`docs/protocol.md`); the server then
//! compresses the frames it judges worth it (over a size threshold it chose by measurement)
//! and sends the others as they are, each frame saying which by its first byte. So a reader
//! never needs to know what was asked: [`decompress`] follows the tag, whatever it is.
//!
//! The levels are the fast ones ([`BROTLI_QUALITY`], [`GZIP_LEVEL`]): a server compresses
//! each shared frame once for every subscriber of a query set, in the middle of its fanout, so
//! speed matters more than the last few percent of size (`benches/RESULTS.md` has the
//! measurement behind the choice).
//!
//! Each message gets a new encoder. Reusing gzip's deflate state (reset between messages) was
//! measured and is no faster (`benches/RESULTS.md`): the reset clears the same match-finder
//! tables that a new state gets zeroed, which is most of the fixed cost of compressing a small
//! message. Brotli's encoder cannot be reset; its window is sized to the message.

use std::io::{self, Read, Write};

/// The first byte of a binary server message: how the rest is compressed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Compression {
    /// Not compressed (`0`).
    #[default]
    None,
    /// Brotli (`1`, RFC 7932).
    Brotli,
    /// Gzip (`2`, RFC 1952).
    Gzip,
}

/// Brotli's quality (0 to 11): 1 is the fastest that still finds repeated strings.
pub const BROTLI_QUALITY: i32 = 1;

/// Gzip's level (0 to 9): 1, the fastest.
pub const GZIP_LEVEL: u32 = 1;

/// The most bytes a message may decompress to: a frame that claims more is refused rather
/// than allowed to fill the reader's memory.
pub const MAX_DECOMPRESSED: u64 = 1 << 30;

/// Brotli's smallest and largest window (log2 of its size).
const BROTLI_WINDOW: (u32, u32) = (10, 22);

impl Compression {
    /// Every compression, by tag.
    pub const ALL: [Self; 3] = [Self::None, Self::Brotli, Self::Gzip];

    /// The byte that announces this compression.
    pub const fn tag(self) -> u8 {
        match self {
            Self::None => 0,
            Self::Brotli => 1,
            Self::Gzip => 2,
        }
    }

    /// The compression a tag announces, if any.
    pub fn from_tag(tag: u8) -> Option<Self> {
        Self::ALL
            .into_iter()
            .find(|compression| compression.tag() == tag)
    }

    /// Its name in the handshake's `compression` parameter: `none`, `brotli` or `gzip`.
    pub const fn name(self) -> &'static str {
        match self {
            Self::None => "none",
            Self::Brotli => "brotli",
            Self::Gzip => "gzip",
        }
    }

    /// The compression named `name` (as [`Compression::name`] writes it), if any.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL
            .into_iter()
            .find(|compression| compression.name() == name)
    }
}

/// Appends `input` compressed with `compression` to `out` (copied as is for
/// [`Compression::None`]).
pub fn compress(compression: Compression, input: &[u8], out: &mut Vec<u8>) {
    match compression {
        Compression::None => out.extend_from_slice(input),
        Compression::Brotli => brotli(input, BROTLI_QUALITY, out),
        Compression::Gzip => gzip(input, GZIP_LEVEL, out),
    }
}

/// Appends `input` compressed by brotli at `quality` to `out`, with a window no larger than
/// the input needs.
pub fn brotli(input: &[u8], quality: i32, out: &mut Vec<u8>) {
    let needed = usize::BITS - input.len().saturating_sub(1).leading_zeros();
    let params = brotli::enc::BrotliEncoderParams {
        quality,
        lgwin: needed.clamp(BROTLI_WINDOW.0, BROTLI_WINDOW.1) as i32,
        size_hint: input.len(),
        ..Default::default()
    };
    // Reading a slice and writing a `Vec` cannot fail.
    let _ = brotli::BrotliCompress(&mut &input[..], out, &params);
}

/// Appends `input` as one gzip member to `out`, deflated at `level`.
pub fn gzip(input: &[u8], level: u32, out: &mut Vec<u8>) {
    let mut encoder = flate2::write::GzEncoder::new(out, flate2::Compression::new(level));
    // Writing into a `Vec` cannot fail.
    let _ = encoder.write_all(input);
    let _ = encoder.finish();
}

/// `input` decompressed as `compression` says, or why it is not: not a stream of that
/// format, or more than [`MAX_DECOMPRESSED`] bytes once decompressed.
pub fn decompress(compression: Compression, input: &[u8]) -> io::Result<Vec<u8>> {
    decompress_at_most(compression, input, MAX_DECOMPRESSED)
}

/// [`decompress`], refusing more than `max` bytes.
fn decompress_at_most(compression: Compression, input: &[u8], max: u64) -> io::Result<Vec<u8>> {
    let mut out = Vec::new();
    match compression {
        Compression::None => out.extend_from_slice(input),
        Compression::Brotli => read_at_most(brotli::Decompressor::new(input, 4096), max, &mut out)?,
        Compression::Gzip => read_at_most(flate2::read::GzDecoder::new(input), max, &mut out)?,
    }
    if out.len() as u64 > max {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("the message decompresses to more than {max} bytes"),
        ));
    }
    Ok(out)
}

/// Appends what `reader` gives to `out`, stopping one byte past `max`.
fn read_at_most(reader: impl Read, max: u64, out: &mut Vec<u8>) -> io::Result<()> {
    reader
        .take(max.saturating_add(1))
        .read_to_end(out)
        .map(drop)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Text that compresses, of `len` bytes.
    fn text(len: usize) -> Vec<u8> {
        b"the quick brown fox jumps over the lazy dog 0123456789 "
            .iter()
            .copied()
            .cycle()
            .take(len)
            .collect()
    }

    #[test]
    fn every_compression_round_trips_small_and_large_inputs() {
        for compression in Compression::ALL {
            for len in [0, 1, 100, 5_000, 300_000] {
                let input = text(len);
                let mut out = Vec::new();
                compress(compression, &input, &mut out);
                let back = decompress(compression, &out).expect("decompresses");
                assert_eq!(back, input, "{compression:?}, {len} bytes");
            }
        }
    }

    #[test]
    fn gzip_output_is_a_standard_gzip_member() {
        let mut out = Vec::new();
        gzip(b"hello hello hello", GZIP_LEVEL, &mut out);
        let mut back = String::new();
        flate2::read::GzDecoder::new(&out[..])
            .read_to_string(&mut back)
            .expect("flate2 reads it");
        assert_eq!(back, "hello hello hello");
        assert_eq!(&out[..2], [0x1f, 0x8b], "gzip's magic");
    }

    #[test]
    fn garbage_is_an_error_not_a_panic() {
        for compression in [Compression::Brotli, Compression::Gzip] {
            for garbage in [&b""[..], b"\x1f\x8b", b"not compressed at all", &[0xff; 64]] {
                assert!(
                    decompress(compression, garbage).is_err(),
                    "{compression:?} {garbage:?}"
                );
            }
        }
    }

    #[test]
    fn a_bomb_is_refused_past_the_bound() {
        let zeros = vec![0u8; 1 << 20];
        for compression in [Compression::Brotli, Compression::Gzip] {
            let mut bomb = Vec::new();
            compress(compression, &zeros, &mut bomb);
            assert!(bomb.len() < 10_000, "{compression:?}: {}", bomb.len());
            let error = decompress_at_most(compression, &bomb, 100_000).expect_err("too large");
            assert!(error.to_string().contains("more than 100000"), "{error}");
            let whole = decompress_at_most(compression, &bomb, 1 << 20).expect("within");
            assert_eq!(whole.len(), 1 << 20);
        }
    }

    #[test]
    fn names_and_tags_map_back() {
        for compression in Compression::ALL {
            assert_eq!(Compression::from_tag(compression.tag()), Some(compression));
            assert_eq!(
                Compression::from_name(compression.name()),
                Some(compression)
            );
        }
        assert_eq!(Compression::from_tag(3), None);
        assert_eq!(Compression::from_name("zstd"), None);
    }
}
