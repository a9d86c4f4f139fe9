//! Byte sources (host to module: arguments, requests, HTTP responses) and byte sinks (module
//! to host: results, error messages, the description).
//!
//! Both count against the call's budget of host memory (`budget`): a source its buffer until
//! it is read to the end, a sink what was written to it until the host takes it.

use super::InstanceEnv;
use wasmod_abi::names::EMPTY_SOURCE;
use wasmod_abi::Errno;

/// Bytes the module reads, front to back.
#[derive(Debug)]
pub(crate) struct ByteSource {
    bytes: Vec<u8>,
    read: usize,
}

/// Bytes the module writes.
#[derive(Debug, Default)]
pub(crate) struct ByteSink {
    bytes: Vec<u8>,
}

impl InstanceEnv {
    /// Host side: a byte source holding `bytes`, valid until the call ends or the module
    /// reads it to the end. No bytes make no source: the handle is then
    /// [`EMPTY_SOURCE`], which reads as empty.
    pub fn create_source(&mut self, bytes: Vec<u8>) -> u32 {
        if bytes.is_empty() {
            return EMPTY_SOURCE;
        }
        self.hold_for_host(bytes.capacity());
        self.sources.insert(ByteSource { bytes, read: 0 })
    }

    /// A byte source holding `bytes` for the module, if the call's budget has room for one
    /// more handle and for its bytes; `TOO_LARGE` otherwise, and `bytes` are dropped.
    pub(super) fn open_source(&mut self, bytes: Vec<u8>) -> Result<u32, Errno> {
        if bytes.is_empty() {
            return Ok(EMPTY_SOURCE);
        }
        self.room_for_handle()?;
        self.hold(bytes.capacity())?;
        Ok(self.sources.insert(ByteSource { bytes, read: 0 }))
    }

    /// Host side: an empty byte sink, valid until the call ends or [`InstanceEnv::take_sink`].
    pub fn create_sink(&mut self) -> u32 {
        self.sinks.insert(ByteSink::default())
    }

    /// Host side: removes sink `sink` and returns what was written to it.
    pub fn take_sink(&mut self, sink: u32) -> Option<Vec<u8>> {
        let sink = self.sinks.remove(sink)?;
        self.release(sink.bytes.len());
        Some(sink.bytes)
    }

    /// `bytes_source_remaining`: how many bytes are left to read. Errors: `NO_SUCH_SOURCE`.
    pub fn bytes_source_remaining(&mut self, source: u32) -> Result<u32, Errno> {
        if source == EMPTY_SOURCE {
            return Ok(0);
        }
        let source = self.sources.get_mut(source).ok_or(Errno::NO_SUCH_SOURCE)?;
        Ok(u32::try_from(source.bytes.len() - source.read).unwrap_or(u32::MAX))
    }

    /// `bytes_source_read`: fills `buf` from the source, and returns the count read and
    /// whether the source is now empty (it is then closed). Errors: `NO_SUCH_SOURCE`.
    pub fn bytes_source_read(
        &mut self,
        source: u32,
        buf: &mut [u8],
    ) -> Result<(usize, bool), Errno> {
        if source == EMPTY_SOURCE {
            return Ok((0, true));
        }
        let handle = source;
        let source = self.sources.get_mut(handle).ok_or(Errno::NO_SUCH_SOURCE)?;
        let rest = &source.bytes[source.read..];
        let count = rest.len().min(buf.len());
        buf[..count].copy_from_slice(&rest[..count]);
        source.read += count;
        let exhausted = source.read == source.bytes.len();
        if exhausted {
            if let Some(source) = self.sources.remove(handle) {
                self.release(source.bytes.capacity());
            }
        }
        Ok((count, exhausted))
    }

    /// `bytes_sink_write`: appends `bytes` to the sink, all or nothing. Errors:
    /// `NO_SUCH_SINK`, `TOO_LARGE` (past [`Limits::max_sink_bytes`](super::Limits), or past
    /// the call's budget, [`Limits::max_held_bytes`](super::Limits)).
    pub fn bytes_sink_write(&mut self, sink: u32, bytes: &[u8]) -> Result<(), Errno> {
        let cap = self.limits.max_sink_bytes;
        let written = self
            .sinks
            .get_mut(sink)
            .ok_or(Errno::NO_SUCH_SINK)?
            .bytes
            .len();
        if bytes.len() > cap.saturating_sub(written) {
            return Err(Errno::TOO_LARGE);
        }
        self.hold(bytes.len())?;
        if let Some(sink) = self.sinks.get_mut(sink) {
            sink.bytes.extend_from_slice(bytes);
        }
        Ok(())
    }
}
