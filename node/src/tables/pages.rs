//! Table reads in pages: bounded in rows, in bytes, and in how many run at once.
//!
//! Serving a whole table in one answer made the answer as large as the table, and its
//! memory a few times that (issue 15: a 20 MB table of byte rows took 1.34 GB to serve).
//! Here a read is one **page**:
//!
//! - **Rows**: at most `limit` rows ([`NodeConfig::table_page_rows`] when the query names
//!   none, never more than [`NodeConfig::max_table_page_rows`]).
//! - **Bytes**: the page stops before the row that would take its rows past
//!   [`NodeConfig::max_table_page_bytes`] in their binary encoding (a short page, with a cursor); a first
//!   row larger than that on its own is still sent, alone, so that no row is unreadable. The
//!   cap counts what the page holds in memory (the rows), and is known before any JSON is
//!   written, so the cursor can lead the answer; the JSON is larger by a factor bounded by
//!   the encoding (about 1 for text, up to 6 for control characters and 4 for byte arrays),
//!   and is bounded by it.
//! - **Position**: rows come oldest first, by position ([`Tables::rows_from`]), and the page
//!   hands back an opaque `next_cursor` that resumes right after its last row. Positions are
//!   never reused, so paging through a table sees every row that was there all along exactly
//!   once, whatever is inserted or deleted meanwhile; a row inserted (or updated) meanwhile
//!   comes at the end.
//! - **Visibility**: a client's page holds only the rows its table's visibility filter lets it
//!   see ([`super::Reader`]); rows it may not see are skipped, not counted, so a page of a
//!   filtered table may scan past many rows to fill itself (at most the table, as a
//!   subscription's initial rows do).
//! - **At once**: each read holds a permit of [`TableReads`] from before it waits for the
//!   tables until its page is rendered; past the bound ([`NodeConfig::max_table_reads`]) a
//!   read is refused at once (`busy`, 503) rather than queued on the blocking pool that
//!   durability waits share.
//!
//! The rows of a page are taken under the read lock as pointers to the stored rows (no copy),
//! and the lock is released before any JSON is written. The JSON is then rendered from the
//! encoded rows, on the blocking pool, into chunks of about `CHUNK_BYTES` (`PageBody`),
//! never as a tree of values; the permit is released, and the chunks are sent. The permit is
//! not held while the page is sent: a client that never reads its answer would otherwise
//! hold a permit for as long as its connection lasts, and as many such clients as there are
//! permits made every other table read answer `busy` (issue 27, item 6: four of them did, for
//! over a minute). What such a client holds instead is its page's memory, which the page's
//! bounds bound and which is charged to it ([`crate::memory`]), for as long as its connection
//! lasts: until the transport's write timeout closes it. A row that does not match its type is
//! found while rendering, so its read is answered `internal` (500) rather than cut short.
//!
//! [`Tables::rows_from`]: wasmod_host::datastore::Tables::rows_from
//! [`NodeConfig::table_page_rows`]: crate::NodeConfig::table_page_rows
//! [`NodeConfig::max_table_page_rows`]: crate::NodeConfig::max_table_page_rows
//! [`NodeConfig::max_table_page_bytes`]: crate::NodeConfig::max_table_page_bytes
//! [`NodeConfig::max_table_reads`]: crate::NodeConfig::max_table_reads

use super::TableRead;
use crate::memory::{Charge, ClientMemory, Holder};
use crate::JSON_EXPANSION;
use bytes::Bytes;
use std::sync::Arc;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use wasmod_abi::ModuleDef;
use wasmod_host::datastore::Row;
use wasmod_protocol::errors::{ApiError, ErrorCode};
use wasmod_protocol::json::write_value;

/// The JSON of a page's rows is handed to the connection in chunks of about this many bytes.
pub(crate) const CHUNK_BYTES: usize = 64 << 10;

/// The bounds of one page (the node's configuration's).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct PageLimits {
    /// The rows of a page when the request names no `limit`.
    pub default_rows: usize,
    /// The most rows of a page; a larger `limit` is taken as this.
    pub max_rows: usize,
    /// The most bytes of a page's rows, in their binary encoding (but for a first row larger
    /// than that on its own).
    pub max_bytes: usize,
}

/// What a request asks of a page (`?limit=` and `?cursor=` of `GET /v1/tables/{name}`), as
/// sent: checked when the page is read.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Deserialize)]
pub struct PageQuery {
    /// How many rows, at most.
    pub limit: Option<String>,
    /// Where to resume: a `next_cursor` handed back by an earlier page.
    pub cursor: Option<String>,
}

/// A page read, its JSON rendered: `{"next_cursor": "…" | null, "rows": [..]}` in chunks, its
/// bytes charged to its reader (`crate::memory`) until the last chunk is taken or the page
/// is dropped.
#[derive(Debug)]
pub struct TablePage {
    chunks: Vec<Bytes>,
    charge: Charge,
}

impl TablePage {
    /// The JSON's chunks, in order: the charge is given back once the last is taken, or when
    /// the iterator is dropped (a connection that ended before it took them all).
    pub fn into_chunks(self) -> impl Iterator<Item = Bytes> + Send + 'static {
        let Self { chunks, charge } = self;
        // The closure owns the charge: it goes with the iterator.
        chunks.into_iter().inspect(move |_| {
            let _held = &charge;
        })
    }
}

/// Where a page starts and how many rows it may hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct PageStart {
    position: u64,
    rows: usize,
}

impl PageQuery {
    /// The query checked against `limits`: `bad_request` for a limit that is not a positive
    /// number, or a cursor this server did not hand out.
    fn start(&self, limits: PageLimits) -> Result<PageStart, ApiError> {
        let rows = match &self.limit {
            None => limits.default_rows,
            Some(text) => match text.parse::<usize>() {
                Ok(rows) if rows > 0 => rows.min(limits.max_rows),
                _ => {
                    return Err(ApiError::new(
                        ErrorCode::BadRequest,
                        format!(
                            "`limit` must be a positive number of rows (at most {} are sent), \
                             not `{text}`",
                            limits.max_rows
                        ),
                    ))
                }
            },
        };
        let position = match &self.cursor {
            None => 0,
            Some(cursor) => decode_cursor(cursor).ok_or_else(|| {
                ApiError::new(
                    ErrorCode::BadRequest,
                    format!("`cursor` must be a `next_cursor` of an earlier page, not `{cursor}`"),
                )
            })?,
        };
        Ok(PageStart {
            position,
            rows: rows.max(1),
        })
    }
}

/// The prefix of every cursor, so that a number passed by hand is not taken for one.
const CURSOR_PREFIX: &str = "p";

/// The cursor that resumes at `position`.
fn encode_cursor(position: u64) -> String {
    format!("{CURSOR_PREFIX}{position:x}")
}

/// The position a cursor resumes at, if it is one.
fn decode_cursor(cursor: &str) -> Option<u64> {
    let digits = cursor.strip_prefix(CURSOR_PREFIX)?;
    let valid = !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_hexdigit());
    valid.then(|| u64::from_str_radix(digits, 16).ok())?
}

/// How many table reads may be in progress at once, and what their pages on their way out
/// may hold.
#[derive(Clone, Debug)]
pub(crate) struct TableReads {
    permits: Arc<Semaphore>,
    max: usize,
    memory: Arc<ClientMemory>,
}

impl TableReads {
    /// At most `max` reads at once (at least one), their pages charged to `memory` until
    /// they are sent.
    pub(crate) fn new(max: usize, memory: Arc<ClientMemory>) -> Self {
        let max = max.max(1);
        Self {
            permits: Arc::new(Semaphore::new(max)),
            max,
            memory,
        }
    }

    /// A permit for one read, or `busy` when `max` are in progress.
    fn acquire(&self) -> Result<OwnedSemaphorePermit, ApiError> {
        self.permits.clone().try_acquire_owned().map_err(|_| {
            ApiError::new(
                ErrorCode::Busy,
                format!(
                    "{} table reads are in progress, the most the server runs at once: retry later",
                    self.max
                ),
            )
        })
    }
}

/// One page of the rows of `source` (a table, and the rows its reader may see), read as
/// `query` asks, its JSON rendered on the blocking pool and charged to `holder` until it is
/// sent or dropped ([`ClientMemory`]).
pub(crate) async fn read_page(
    reads: &TableReads,
    limits: PageLimits,
    source: TableRead,
    query: &PageQuery,
    holder: Holder,
) -> Result<TablePage, ApiError> {
    let start = query.start(limits)?;
    let permit = reads.acquire()?;
    let TableRead {
        module,
        datastore,
        table,
        rows: visible,
    } = source;
    let memory = reads.memory.clone();
    let (chunks, charge) = tokio::task::spawn_blocking(move || {
        let page = {
            let read = datastore.begin_read();
            let rows = read.rows_from(table, start.position).map_err(|error| {
                ApiError::new(ErrorCode::Internal, format!("reading the table: {error:?}"))
            })?;
            let rows =
                rows.filter(|(_, row)| visible.as_ref().is_none_or(|visible| visible.admits(row)));
            Page::take(rows, start.rows, limits.max_bytes)
        };
        // What its JSON may take, charged before it is written: then what it took.
        let refused = |refused| {
            ApiError::new(
                ErrorCode::TooManyCalls,
                format!("the page is not read: {refused}: read the pages you asked for first"),
            )
        };
        let binary = page.rows.iter().map(|row| row.len()).sum::<usize>();
        let expected = JSON_EXPANSION.saturating_mul(binary + CHUNK_BYTES);
        let mut charge = memory.charge(holder, expected).map_err(refused)?;
        let body = PageBody {
            module,
            table: table as usize,
            next: page.next,
            rows: page.rows.into_iter(),
            written: 0,
            stage: Stage::Opening,
        };
        let chunks = body
            .collect::<Result<Vec<Bytes>, String>>()
            .map_err(|message| ApiError::new(ErrorCode::Internal, message))?;
        charge
            .settle(chunks.iter().map(Bytes::len).sum())
            .map_err(refused)?;
        Ok::<_, ApiError>((chunks, charge))
    })
    .await
    .map_err(|error| ApiError::new(ErrorCode::Internal, format!("the read failed: {error}")))??;
    drop(permit);
    Ok(TablePage { chunks, charge })
}

/// The rows of a page, and where the next one starts.
#[derive(Debug)]
struct Page {
    rows: Vec<Row>,
    next: Option<u64>,
}

impl Page {
    /// The first rows of `rows` (with their positions), at most `limit` of them and
    /// `max_bytes` of their encoded bytes (but always the first): pointers to the stored rows.
    fn take<'r>(
        rows: impl Iterator<Item = (u64, &'r Row)>,
        limit: usize,
        max_bytes: usize,
    ) -> Self {
        let mut taken = Vec::new();
        let mut bytes = 0usize;
        for (position, row) in rows {
            bytes = bytes.saturating_add(row.len());
            let full = taken.len() == limit || (bytes > max_bytes && !taken.is_empty());
            if full {
                return Self {
                    rows: taken,
                    next: Some(position),
                };
            }
            taken.push(row.clone());
        }
        Self {
            rows: taken,
            next: None,
        }
    }
}

/// Where a [`PageBody`] stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stage {
    /// Nothing written yet.
    Opening,
    /// Writing rows.
    Rows,
    /// Everything written.
    Done,
}

/// A page's JSON, rendered from its encoded rows chunk by chunk.
struct PageBody {
    module: Arc<ModuleDef>,
    table: usize,
    next: Option<u64>,
    rows: std::vec::IntoIter<Row>,
    /// Rows written so far.
    written: usize,
    stage: Stage,
}

impl PageBody {
    /// The page's opening, cursor first (the keys of the API's objects come in sorted order).
    fn open(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(b"{\"next_cursor\":");
        match self.next {
            Some(position) => {
                out.push(b'"');
                out.extend_from_slice(encode_cursor(position).as_bytes());
                out.push(b'"');
            }
            None => out.extend_from_slice(b"null"),
        }
        out.extend_from_slice(b",\"rows\":[");
    }

    /// Writes rows into `out` until it holds [`CHUNK_BYTES`] or the rows run out, and then
    /// the page's end. Errors if a stored row does not match its type.
    fn write_rows(&mut self, out: &mut Vec<u8>) -> Result<(), String> {
        let Some(table) = self.module.tables.get(self.table) else {
            return Err(format!("the module has no table {}", self.table));
        };
        while out.len() < CHUNK_BYTES {
            let Some(row) = self.rows.next() else {
                out.extend_from_slice(b"]}");
                self.stage = Stage::Done;
                return Ok(());
            };
            if self.written > 0 {
                out.push(b',');
            }
            write_value(out, &table.row_type, &self.module.typespace, &row).map_err(|error| {
                format!("a row of `{}` does not match its type: {error}", table.name)
            })?;
            self.written += 1;
        }
        Ok(())
    }
}

impl Iterator for PageBody {
    type Item = Result<Bytes, String>;

    fn next(&mut self) -> Option<Result<Bytes, String>> {
        let mut out = Vec::with_capacity(CHUNK_BYTES + CHUNK_BYTES / 4);
        match self.stage {
            Stage::Done => return None,
            Stage::Opening => {
                self.open(&mut out);
                self.stage = Stage::Rows;
            }
            Stage::Rows => {}
        }
        if let Err(message) = self.write_rows(&mut out) {
            tracing::error!("a table read failed: {message}");
            self.stage = Stage::Done;
            return Some(Err(message));
        }
        Some(Ok(Bytes::from(out)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits() -> PageLimits {
        PageLimits {
            default_rows: 10,
            max_rows: 100,
            max_bytes: 1000,
        }
    }

    fn query(limit: Option<&str>, cursor: Option<&str>) -> PageQuery {
        PageQuery {
            limit: limit.map(str::to_owned),
            cursor: cursor.map(str::to_owned),
        }
    }

    #[test]
    fn cursors_round_trip_and_nothing_else_is_one() {
        for position in [0, 1, 255, u64::MAX] {
            assert_eq!(decode_cursor(&encode_cursor(position)), Some(position));
        }
        for bad in ["", "p", "12", "p-1", "pzz", "p+1", "p1ffffffffffffffff"] {
            assert_eq!(decode_cursor(bad), None, "{bad}");
        }
    }

    #[test]
    fn the_limit_has_a_default_and_a_maximum_and_must_be_positive() {
        let start = |limit| query(limit, None).start(limits());
        assert_eq!(start(None).unwrap().rows, 10);
        assert_eq!(start(Some("5")).unwrap().rows, 5);
        assert_eq!(start(Some("100000")).unwrap().rows, 100);
        for bad in ["0", "-1", "ten", ""] {
            let error = start(Some(bad)).expect_err(bad);
            assert_eq!(error.code, ErrorCode::BadRequest);
        }
        let resumed = query(None, Some(&encode_cursor(42))).start(limits());
        assert_eq!(resumed.unwrap().position, 42);
        let forged = query(None, Some("42")).start(limits()).unwrap_err();
        assert!(forged.message.contains("next_cursor"), "{}", forged.message);
    }

    fn rows(sizes: &[usize]) -> Vec<(u64, Row)> {
        (10..)
            .zip(sizes)
            .map(|(position, &size)| (position, Row::from(vec![0u8; size])))
            .collect()
    }

    fn take(sizes: &[usize], limit: usize, max_bytes: usize) -> (Vec<usize>, Option<u64>) {
        let rows = rows(sizes);
        let page = Page::take(rows.iter().map(|(p, row)| (*p, row)), limit, max_bytes);
        (page.rows.iter().map(|row| row.len()).collect(), page.next)
    }

    #[test]
    fn a_page_stops_at_its_limit_or_before_its_bytes_but_holds_one_row() {
        assert_eq!(take(&[1, 2, 3], 5, 100), (vec![1, 2, 3], None));
        assert_eq!(take(&[1, 2, 3], 2, 100), (vec![1, 2], Some(12)));
        assert_eq!(take(&[4, 4, 4], 5, 8), (vec![4, 4], Some(12)));
        assert_eq!(
            take(&[50, 1], 5, 8),
            (vec![50], Some(11)),
            "a large row comes alone"
        );
        assert_eq!(take(&[], 5, 8), (vec![], None));
    }

    #[test]
    fn reads_past_the_bound_are_refused_until_one_ends() {
        let reads = TableReads::new(2, ClientMemory::new(usize::MAX));
        let first = reads.acquire().expect("one");
        let _second = reads.acquire().expect("two");
        let refused = reads.acquire().expect_err("three");
        assert_eq!(refused.code, ErrorCode::Busy);
        drop(first);
        let _third = reads.acquire().expect("a permit was freed");
    }
}
