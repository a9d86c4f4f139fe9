//! Reading committed transactions back from the log by offset, while it is being written:
//! for a publisher that fell behind and refills a replication stream from the log rather than
//! from memory.
//!
//! The reader never changes the files. It reads what is written: a record the flusher has
//! not written yet, or one cut short mid-write, ends the run (the caller asks again later);
//! a segment removed by a snapshot while it is read means the transactions asked for are no
//! longer in the log, as does a `from` before the first segment.

use super::frame::{self, Frame};
use super::segment::{self, Header, HEADER_LEN};
use super::DurabilityError;
use crate::tx::TxData;
use std::fs;
use std::io;
use std::path::Path;

/// The transactions at offsets `from..until` in the log in `dir` (written for tables hashing
/// to `schema`), oldest first: an unbroken run that starts at `from` and may stop early where
/// the files end; empty if `from` is not written yet. `None` if the log no longer holds
/// `from` (a snapshot covered it and its segment was removed).
pub(crate) fn read(
    dir: &Path,
    schema: [u8; 32],
    from: u64,
    until: u64,
) -> Result<Option<Vec<(u64, TxData)>>, DurabilityError> {
    let segments = segment::list(dir)?;
    let Some(first) = segments.iter().rposition(|(start, _)| *start <= from) else {
        return Ok(None);
    };
    let mut run = Vec::new();
    let mut next = from;
    for (_, path) in &segments[first..] {
        if next >= until {
            break;
        }
        let bytes = match fs::read(path) {
            Ok(bytes) => bytes,
            Err(error) if error.kind() == io::ErrorKind::NotFound && run.is_empty() => {
                return Ok(None)
            }
            Err(error) if error.kind() == io::ErrorKind::NotFound => break,
            Err(error) => return Err(DurabilityError::io(path, "reading the log", error)),
        };
        if bytes.len() < HEADER_LEN {
            break;
        }
        let header = Header::parse(path, &bytes)?;
        if header.schema != schema {
            return Err(DurabilityError::SchemaMismatch { file: path.clone() });
        }
        let mut at = HEADER_LEN;
        while next < until {
            let Frame::Record { payload, end } = frame::read(&bytes, at) else {
                break;
            };
            let (offset, changes) =
                super::record::decode(payload).map_err(|reason| DurabilityError::Corrupt {
                    file: path.clone(),
                    offset: at as u64,
                    reason: reason.into(),
                })?;
            if offset == next {
                run.push((offset, changes));
                next += 1;
            } else if offset > next {
                // A hole: the segment holding `next` went between the listing and the read.
                return Ok((!run.is_empty()).then_some(run));
            }
            at = end;
        }
    }
    Ok(Some(run))
}
