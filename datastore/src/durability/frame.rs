//! Framing: how one record sits in a segment, and how a reader tells a whole record from a
//! torn or damaged one.
//!
//! A frame is `[len u32 LE][crc32 u32 LE][payload: len bytes]`, the checksum (CRC-32, IEEE,
//! via `crc32fast`) covering the payload. The length comes first so a reader knows how much to
//! check; the checksum catches both a write the crash cut short and bytes damaged at rest.
//! Payloads are never shorter than [`MIN_PAYLOAD`], which also makes a run of zero bytes (a
//! file system may leave them after a crash) read as damage rather than as empty records.

/// The bytes before a frame's payload.
pub(crate) const FRAME_OVERHEAD: usize = 8;

/// The shortest payload a record can have (its transaction offset and table count).
pub(crate) const MIN_PAYLOAD: usize = 12;

/// The largest payload a frame holds: what its length field can say (4 GiB less a byte).
/// [`Options::max_frame_bytes`](super::Options::max_frame_bytes) may lower it.
pub(crate) const MAX_PAYLOAD: u64 = u32::MAX as u64;

/// The header of the frame of `payload`: its length and checksum. `None` if the payload is
/// longer than a frame holds (the callers refuse such payloads before they are made).
pub(crate) fn header(payload: &[u8]) -> Option<[u8; FRAME_OVERHEAD]> {
    let len = u32::try_from(payload.len()).ok()?;
    let mut header = [0; FRAME_OVERHEAD];
    header[..4].copy_from_slice(&len.to_le_bytes());
    header[4..].copy_from_slice(&crc32fast::hash(payload).to_le_bytes());
    Some(header)
}

/// Appends the frame of `payload` to `out`; `false`, with nothing appended, if the payload is
/// longer than a frame holds.
#[must_use = "a payload too long for a frame is not appended"]
pub(crate) fn write(out: &mut Vec<u8>, payload: &[u8]) -> bool {
    let Some(header) = header(payload) else {
        return false;
    };
    out.extend_from_slice(&header);
    out.extend_from_slice(payload);
    true
}

/// What [`read`] found at an offset.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Frame<'a> {
    /// A whole record with a matching checksum, and the offset just past it.
    Record {
        /// The record's payload.
        payload: &'a [u8],
        /// Where the next frame starts.
        end: usize,
    },
    /// The bytes end exactly here.
    End,
    /// Not a whole, intact record; why.
    Bad(&'static str),
}

/// Reads the frame starting at `at` in `bytes`.
pub(crate) fn read(bytes: &[u8], at: usize) -> Frame<'_> {
    let Some(rest) = bytes.get(at..) else {
        return Frame::Bad("the offset is past the end");
    };
    if rest.is_empty() {
        return Frame::End;
    }
    let (Some(len), Some(crc)) = (word(rest, 0), word(rest, 4)) else {
        return Frame::Bad("the frame header is cut short");
    };
    let len = len as usize;
    if len < MIN_PAYLOAD {
        return Frame::Bad("the length is too small for a record");
    }
    let Some(payload) = rest.get(FRAME_OVERHEAD..FRAME_OVERHEAD + len) else {
        return Frame::Bad("the record is cut short");
    };
    if crc32fast::hash(payload) != crc {
        return Frame::Bad("the checksum does not match");
    }
    Frame::Record {
        payload,
        end: at + FRAME_OVERHEAD + len,
    }
}

/// The first offset after `from` where an intact record starts, if any: a damaged record
/// followed by intact ones is damage in the middle of the log, not a torn tail.
pub(crate) fn next_intact(bytes: &[u8], from: usize) -> Option<usize> {
    (from..bytes.len()).find(|&at| matches!(read(bytes, at), Frame::Record { .. }))
}

fn word(bytes: &[u8], at: usize) -> Option<u32> {
    let word: [u8; 4] = bytes.get(at..at + 4)?.try_into().ok()?;
    Some(u32::from_le_bytes(word))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn framed(payloads: &[&[u8]]) -> Vec<u8> {
        let mut out = Vec::new();
        for payload in payloads {
            assert!(write(&mut out, payload));
        }
        out
    }

    #[test]
    fn frames_read_back_in_order() {
        let bytes = framed(&[&[1; 12], &[2; 20]]);
        let Frame::Record { payload, end } = read(&bytes, 0) else {
            panic!("a record")
        };
        assert_eq!(payload, &[1; 12]);
        let Frame::Record { payload, end } = read(&bytes, end) else {
            panic!("a record")
        };
        assert_eq!(payload, &[2; 20]);
        assert_eq!(read(&bytes, end), Frame::End);
    }

    #[test]
    fn every_cut_and_every_flipped_byte_is_bad() {
        let bytes = framed(&[&[7; 16]]);
        for cut in 1..bytes.len() {
            assert!(
                matches!(read(&bytes[..cut], 0), Frame::Bad(_)),
                "cut at {cut}"
            );
        }
        for at in 0..bytes.len() {
            let mut damaged = bytes.clone();
            damaged[at] ^= 0x40;
            assert!(matches!(read(&damaged, 0), Frame::Bad(_)), "flip at {at}");
        }
    }

    #[test]
    fn zeros_are_not_records() {
        assert!(matches!(read(&[0; 64], 0), Frame::Bad(_)));
        assert_eq!(next_intact(&[0; 64], 0), None);
    }

    #[test]
    fn an_intact_record_after_damage_is_found() {
        let mut bytes = framed(&[&[1; 12], &[2; 12]]);
        bytes[10] ^= 1;
        assert!(matches!(read(&bytes, 0), Frame::Bad(_)));
        assert_eq!(next_intact(&bytes, 1), Some(20));
    }
}
