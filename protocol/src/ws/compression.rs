//! The compression of binary server messages: the tag byte that starts each one, and the two
//! algorithms behind it.
//!
//! A client chooses a compression when it connects (`docs/protocol.md`); the server then
//! compresses the frames it judges worth it (over a size threshold it chose by measurement)
//! and sends the others as they are, each frame saying which by its first byte. So a reader
//! never needs to know what was asked: a [`Decompressor`] follows the tag, whatever it is.
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
//!
//! A reader is the other way round: it keeps a [`Decompressor`], whose gzip state is made once
//! and reset per message (about 40 KiB not allocated again), and whose brotli decoder reads
//! the input in place and sizes its ring buffer to the message, so that a small message costs
//! no window whatever the window its stream declares.
//!
//! Brotli and gzip are the crate's `brotli` and `gzip` features (both on by default). A build
//! without one (the browser client's, for size, has neither) neither compresses nor reads it:
//! [`Compression::is_supported`] says so, a frame is then never compressed with it, and such a
//! frame read is an error.

use std::io;
#[cfg(feature = "gzip")]
use std::io::Write;

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
#[cfg(feature = "brotli")]
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

    /// Whether this build compresses and reads it: no compression always, brotli and gzip
    /// with the crate's features of their names.
    pub const fn is_supported(self) -> bool {
        match self {
            Self::None => true,
            Self::Brotli => cfg!(feature = "brotli"),
            Self::Gzip => cfg!(feature = "gzip"),
        }
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
/// [`Compression::None`]) and returns `true`; for a compression this build does not support
/// ([`Compression::is_supported`]), appends nothing and returns `false`.
pub fn compress(compression: Compression, input: &[u8], out: &mut Vec<u8>) -> bool {
    match compression {
        Compression::None => out.extend_from_slice(input),
        #[cfg(feature = "brotli")]
        Compression::Brotli => brotli(input, BROTLI_QUALITY, out),
        #[cfg(not(feature = "brotli"))]
        Compression::Brotli => return false,
        #[cfg(feature = "gzip")]
        Compression::Gzip => gzip(input, GZIP_LEVEL, out),
        #[cfg(not(feature = "gzip"))]
        Compression::Gzip => return false,
    }
    true
}

/// Appends `input` compressed by brotli at `quality` to `out`, with a window no larger than
/// the input needs.
#[cfg(feature = "brotli")]
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
#[cfg(feature = "gzip")]
pub fn gzip(input: &[u8], level: u32, out: &mut Vec<u8>) {
    let mut encoder = flate2::write::GzEncoder::new(out, flate2::Compression::new(level));
    // Writing into a `Vec` cannot fail.
    let _ = encoder.write_all(input);
    let _ = encoder.finish();
}

/// Decompresses messages one after the other, keeping what can be kept between them.
///
/// Gzip's inflate state (about 40 KiB with its 32 KiB window) is made on the first gzip
/// message and reset for each next one. Brotli's decoder state cannot be reset, so each
/// message gets a new one; what makes that cheap is the decoder sizing its ring buffer to the
/// message rather than to the window the stream declares (a one-row message's is 32 bytes,
/// not the 64 KiB of a 16-bit window), and reading the input in place instead of through a
/// copy buffer. `protocol/tests/decompression_allocations.rs` counts both.
///
/// The output is one new vector per message, allocated at the message's size: it becomes the
/// message's own buffer, whose rows borrow it ([`super::BinaryServerMessage::from_frame`]).
/// Gzip's trailer gives the size up front; brotli does not, so brotli writes into a kept
/// scratch buffer, grown by doubling, which is then copied out at the size.
pub struct Decompressor {
    /// Gzip's raw-deflate state, once a gzip message came.
    #[cfg(feature = "gzip")]
    inflate: Option<flate2::Decompress>,
    /// Where brotli writes a message before it is copied out at its size: kept up to
    /// [`SCRATCH_KEPT`] bytes.
    scratch: Vec<u8>,
    /// The most bytes a message may decompress to.
    max: usize,
}

/// The largest brotli output buffer a [`Decompressor`] keeps for the next message (brotli
/// does not say how long its output is, so the buffer grows by doubling while it decodes).
#[cfg(feature = "brotli")]
const SCRATCH_KEPT: usize = 4 << 20;

impl Default for Decompressor {
    /// Refusing more than [`MAX_DECOMPRESSED`] bytes.
    fn default() -> Self {
        Self::new(MAX_DECOMPRESSED)
    }
}

impl std::fmt::Debug for Decompressor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Decompressor")
            .field("scratch", &self.scratch.len())
            .field("max", &self.max)
            .finish()
    }
}

impl Decompressor {
    /// A decompressor refusing messages of more than `max` bytes once decompressed: a frame
    /// that claims more is an error rather than allowed to fill the reader's memory.
    pub fn new(max: u64) -> Self {
        Self {
            #[cfg(feature = "gzip")]
            inflate: None,
            scratch: Vec::new(),
            max: usize::try_from(max).unwrap_or(usize::MAX),
        }
    }

    /// `input` decompressed as `compression` says, or why it is not: not one stream of that
    /// format (one gzip member; trailing bytes are an error), or more bytes than the bound
    /// once decompressed.
    pub fn decompress(&mut self, compression: Compression, input: &[u8]) -> io::Result<Vec<u8>> {
        let max = self.max;
        let out = match compression {
            Compression::None => input.to_vec(),
            #[cfg(feature = "brotli")]
            Compression::Brotli => self.unbrotli(input)?,
            #[cfg(not(feature = "brotli"))]
            Compression::Brotli => return Err(unsupported("brotli")),
            #[cfg(feature = "gzip")]
            Compression::Gzip => self.gunzip(input)?,
            #[cfg(not(feature = "gzip"))]
            Compression::Gzip => return Err(unsupported("gzip")),
        };
        if out.len() > max {
            return Err(too_large(max));
        }
        Ok(out)
    }

    /// One gzip member: its header (RFC 1952), its raw deflate data through the kept
    /// state, and its trailer checked (the CRC-32 and the length).
    #[cfg(feature = "gzip")]
    fn gunzip(&mut self, input: &[u8]) -> io::Result<Vec<u8>> {
        let max = self.max;
        let deflated = input
            .get(gzip_header_len(input)?..)
            .ok_or_else(|| invalid("a truncated gzip header"))?;
        let data_len = deflated
            .len()
            .checked_sub(GZIP_TRAILER)
            .ok_or_else(|| invalid("no gzip trailer"))?;
        let (data, trailer) = deflated.split_at(data_len);
        let crc = u32::from_le_bytes([trailer[0], trailer[1], trailer[2], trailer[3]]);
        let size = u32::from_le_bytes([trailer[4], trailer[5], trailer[6], trailer[7]]);
        let inflate = match &mut self.inflate {
            Some(inflate) => {
                inflate.reset(false);
                inflate
            }
            None => self.inflate.insert(flate2::Decompress::new(false)),
        };
        // The trailer's length is the output's modulo 4 GiB: a hint, bounded by `max` and by
        // deflate's largest ratio, so that a forged one cannot reserve more.
        let hint = (size as usize)
            .min(max)
            .min(data.len().saturating_mul(DEFLATE_MAX_RATIO));
        let mut out = Vec::with_capacity(hint.saturating_add(1));
        loop {
            let read = inflate.total_in() as usize;
            let rest = data.get(read..).unwrap_or_default();
            if out.len() == out.capacity() {
                if out.len() > max {
                    return Err(too_large(max));
                }
                out.reserve(out.len().max(1024).min(max + 1 - out.len()));
            }
            let before = (inflate.total_in(), inflate.total_out());
            let status = inflate
                .decompress_vec(rest, &mut out, flate2::FlushDecompress::Finish)
                .map_err(|error| invalid(&format!("not deflate data: {error}")))?;
            if status == flate2::Status::StreamEnd {
                break;
            }
            if before == (inflate.total_in(), inflate.total_out()) {
                return Err(invalid("the deflate data ends early"));
            }
        }
        if inflate.total_in() as usize != data.len() {
            return Err(invalid("bytes after the gzip member's deflate data"));
        }
        let mut check = flate2::Crc::new();
        check.update(&out);
        if check.sum() != crc || check.amount() != size {
            return Err(invalid("the gzip trailer does not match the data"));
        }
        Ok(out)
    }
}

#[cfg(feature = "brotli")]
impl Decompressor {
    /// `input` decompressed by brotli, with a new decoder state reading `input` in place,
    /// into the kept scratch buffer (doubled while the output needs it), then copied out at
    /// its size.
    fn unbrotli(&mut self, input: &[u8]) -> io::Result<Vec<u8>> {
        let max = self.max;
        let alloc = brotli::enc::StandardAlloc::default;
        let mut state = brotli::BrotliState::new(alloc(), alloc(), alloc());
        let out = &mut self.scratch;
        let first = input
            .len()
            .saturating_mul(4)
            .max(256)
            .min(max.saturating_add(1));
        if out.len() < first {
            out.resize(first, 0);
        }
        let (mut available_in, mut input_offset) = (input.len(), 0);
        let (mut output_offset, mut total_out) = (0, 0);
        loop {
            let mut available_out = out.len() - output_offset;
            let result = brotli::BrotliDecompressStream(
                &mut available_in,
                &mut input_offset,
                input,
                &mut available_out,
                &mut output_offset,
                out,
                &mut total_out,
                &mut state,
            );
            match result {
                brotli::BrotliResult::ResultSuccess if available_in == 0 => break,
                brotli::BrotliResult::ResultSuccess => {
                    return Err(invalid("bytes after the brotli stream"))
                }
                brotli::BrotliResult::NeedsMoreOutput if out.len() > max => {
                    return Err(too_large(max))
                }
                brotli::BrotliResult::NeedsMoreOutput => {
                    let grown = out.len().saturating_mul(2).min(max.saturating_add(1));
                    out.resize(grown, 0);
                }
                brotli::BrotliResult::NeedsMoreInput => {
                    return Err(invalid("the brotli stream ends early"))
                }
                brotli::BrotliResult::ResultFailure => return Err(invalid("not a brotli stream")),
            }
        }
        let message = out.get(..output_offset).unwrap_or_default().to_vec();
        if out.len() > SCRATCH_KEPT {
            *out = Vec::new();
        }
        Ok(message)
    }
}

/// The most bytes one byte of deflate data can inflate to (258 bytes per 2-bit match).
#[cfg(feature = "gzip")]
const DEFLATE_MAX_RATIO: usize = 1032;

/// A gzip member's trailer: the CRC-32 of the data, then its length modulo 4 GiB.
#[cfg(feature = "gzip")]
const GZIP_TRAILER: usize = 8;

/// How long the gzip header at the start of `input` is: the fixed ten bytes, then the
/// optional extra field, name, comment and header CRC its flags announce.
#[cfg(feature = "gzip")]
fn gzip_header_len(input: &[u8]) -> io::Result<usize> {
    const TEXT_AND_KNOWN: u8 = 0b1_1111;
    let Some(&[0x1f, 0x8b, 8, flags]) = input.first_chunk::<4>() else {
        return Err(invalid("not a gzip member of deflate data"));
    };
    if flags & !TEXT_AND_KNOWN != 0 {
        return Err(invalid("reserved gzip flags set"));
    }
    let mut at = 10;
    if flags & 0b100 != 0 {
        let extra = input
            .get(at..at + 2)
            .ok_or_else(|| invalid("a truncated gzip header"))?;
        at += 2 + usize::from(u16::from_le_bytes([extra[0], extra[1]]));
    }
    for flag in [0b1000, 0b1_0000] {
        if flags & flag != 0 {
            let field = input
                .get(at..)
                .ok_or_else(|| invalid("a truncated gzip header"))?;
            let end = field
                .iter()
                .position(|&byte| byte == 0)
                .ok_or_else(|| invalid("a truncated gzip header"))?;
            at += end + 1;
        }
    }
    if flags & 0b10 != 0 {
        at += 2;
    }
    if at > input.len() {
        return Err(invalid("a truncated gzip header"));
    }
    Ok(at)
}

/// The error of a stream that is not what its tag says.
fn invalid(why: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, why.to_owned())
}

/// The error of a frame compressed as this build does not read (`name`, a feature left out).
#[cfg(not(all(feature = "brotli", feature = "gzip")))]
fn unsupported(name: &str) -> io::Error {
    invalid(&format!(
        "a {name} frame, which this build does not read (wasmod-protocol without its `{name}` \
         feature): connect asking for another compression, or decompress it first"
    ))
}

/// The error of a message past the bound.
fn too_large(max: usize) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!("the message decompresses to more than {max} bytes"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The compressions that compress, of those this build supports.
    fn compressing() -> impl Iterator<Item = Compression> {
        supported().filter(|&compression| compression != Compression::None)
    }

    /// The compressions this build supports (brotli only with the `brotli` feature).
    fn supported() -> impl Iterator<Item = Compression> {
        Compression::ALL.into_iter().filter(|c| c.is_supported())
    }

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
        for compression in supported() {
            for len in [0, 1, 100, 5_000, 300_000] {
                let input = text(len);
                let mut out = Vec::new();
                compress(compression, &input, &mut out);
                let back = Decompressor::default()
                    .decompress(compression, &out)
                    .expect("decompresses");
                assert_eq!(back, input, "{compression:?}, {len} bytes");
            }
        }
    }

    #[test]
    #[cfg(feature = "gzip")]
    fn gzip_output_is_a_standard_gzip_member() {
        use std::io::Read;
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
                    Decompressor::default()
                        .decompress(compression, garbage)
                        .is_err(),
                    "{compression:?} {garbage:?}"
                );
            }
        }
    }

    #[test]
    fn a_bomb_is_refused_past_the_bound() {
        let zeros = vec![0u8; 1 << 20];
        for compression in compressing() {
            let mut bomb = Vec::new();
            compress(compression, &zeros, &mut bomb);
            assert!(bomb.len() < 10_000, "{compression:?}: {}", bomb.len());
            let error = Decompressor::new(100_000)
                .decompress(compression, &bomb)
                .expect_err("too large");
            assert!(error.to_string().contains("more than 100000"), "{error}");
            let whole = Decompressor::new(1 << 20)
                .decompress(compression, &bomb)
                .expect("within");
            assert_eq!(whole.len(), 1 << 20);
        }
    }

    #[test]
    fn one_decompressor_reads_many_messages_of_both_kinds_in_turn() {
        let mut decompressor = Decompressor::default();
        // Growing then shrinking: a kept buffer must not leak a longer message's tail.
        for round in (0..20).chain((0..20).rev()) {
            for compression in supported() {
                let input = text(1 + round * 997);
                let mut out = Vec::new();
                compress(compression, &input, &mut out);
                let back = decompressor
                    .decompress(compression, &out)
                    .expect("decompresses");
                assert_eq!(back, input, "{compression:?}, round {round}");
            }
        }
    }

    #[test]
    #[cfg(feature = "gzip")]
    fn gzip_headers_with_every_optional_field_are_read() {
        let input = text(3_000);
        let mut encoder = flate2::GzBuilder::new()
            .extra(&b"extra field"[..])
            .filename("rows.bin")
            .comment("a comment")
            .write(Vec::new(), flate2::Compression::new(6));
        encoder.write_all(&input).expect("in memory");
        let member = encoder.finish().expect("in memory");
        let back = Decompressor::default()
            .decompress(Compression::Gzip, &member)
            .expect("decompresses");
        assert_eq!(back, input);
    }

    #[test]
    #[cfg(feature = "brotli")]
    fn a_brotli_stream_with_the_largest_window_decodes() {
        let input = text(70_000);
        let params = brotli::enc::BrotliEncoderParams {
            quality: 5,
            lgwin: 24,
            ..Default::default()
        };
        let mut out = Vec::new();
        brotli::BrotliCompress(&mut &input[..], &mut out, &params).expect("in memory");
        let back = Decompressor::default()
            .decompress(Compression::Brotli, &out)
            .expect("decompresses");
        assert_eq!(back, input);
    }

    #[test]
    fn truncated_corrupted_or_extended_streams_are_errors() {
        let input = text(5_000);
        let mut decompressor = Decompressor::default();
        for compression in compressing() {
            let mut whole = Vec::new();
            compress(compression, &input, &mut whole);
            for len in [0, 1, 5, 10, whole.len() / 2, whole.len() - 1] {
                assert!(
                    decompressor.decompress(compression, &whole[..len]).is_err(),
                    "{compression:?} cut at {len} of {}",
                    whole.len()
                );
            }
            let mut extended = whole.clone();
            extended.push(0);
            assert!(decompressor.decompress(compression, &extended).is_err());
            let last = whole.len() - 1;
            whole[last] ^= 0x55;
            assert!(
                decompressor.decompress(compression, &whole).is_err(),
                "{compression:?}: its last byte changed"
            );
        }
        #[cfg(feature = "gzip")]
        {
            let mut member = Vec::new();
            gzip(&input, GZIP_LEVEL, &mut member);
            let back = decompressor
                .decompress(Compression::Gzip, &member)
                .expect("the state is still usable after errors");
            assert_eq!(back, input);
        }
    }

    #[test]
    fn brotli_and_gzip_are_supported_with_their_features_only() {
        assert!(Compression::None.is_supported());
        assert_eq!(Compression::Gzip.is_supported(), cfg!(feature = "gzip"));
        assert_eq!(Compression::Brotli.is_supported(), cfg!(feature = "brotli"));
        let mut out = Vec::new();
        assert_eq!(
            compress(Compression::Brotli, &text(5_000), &mut out),
            cfg!(feature = "brotli")
        );
        let message = super::super::BinaryServerMessage::IdentityToken {
            identity: wasmod_abi::Identity::ZERO,
            token: String::from_utf8(text(3_000)).expect("text"),
            connection_id: wasmod_abi::ConnectionId::ZERO,
        };
        let frame = message.to_frame(Compression::Brotli, 0);
        let expected = if cfg!(feature = "brotli") {
            Compression::Brotli
        } else {
            Compression::None
        };
        assert_eq!(
            frame[0],
            expected.tag(),
            "a build without brotli sends it plain"
        );
    }

    #[test]
    #[cfg(not(feature = "brotli"))]
    fn without_its_feature_a_brotli_frame_is_an_error_naming_brotli() {
        let error = Decompressor::default()
            .decompress(Compression::Brotli, b"\x0b\x02\x80hello\x03")
            .expect_err("no brotli");
        assert!(error.to_string().contains("brotli frame"), "{error}");
        assert!(error.to_string().contains("another compression"), "{error}");
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
