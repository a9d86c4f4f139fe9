//! What index lookups accept, and how it is encoded for the host.
//!
//! An index scan fixes the first `k` columns of an index by equality and may bound column `k`
//! by a range (see `docs/abi.md`). [`IndexScan`] is implemented for the argument shapes that
//! make sense for an index's column types:
//!
//! - one-column index on `K`: a key (`K`, `&K`, and `&str` for `String`) or a range of `K`
//!   (`a..b`, `a..=b`, `a..`, `..b`, `..=b`);
//! - index on `(K1, K2, ..)`: a tuple fixing a prefix (`(k1,)`, `(k1, k2)`, ..), or a range
//!   of `K1`;
//! - any index: `..`, every row in index order.
//!
//! Keys are the types that can be compared exactly: integers, `bool`, `String`, [`Identity`],
//! [`ConnectionId`] and [`Timestamp`].
//!
//! [`Identity`]: crate::Identity
//! [`ConnectionId`]: crate::ConnectionId
//! [`Timestamp`]: crate::Timestamp

use core::ops::{Bound, Range, RangeFrom, RangeFull, RangeInclusive, RangeTo, RangeToInclusive};
use wasmod_abi::Encode;

/// A value that can stand for a key of type `K` in a lookup: `K` itself, `&K`, or `&str` for
/// `String`.
pub trait KeyArg<K> {
    /// Appends the value in `K`'s encoding.
    fn encode_key(&self, out: &mut Vec<u8>);
}

/// An argument of [`BTreeIndex::filter`](super::BTreeIndex::filter) for an index over the
/// columns `Cols` (a tuple of their types).
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot scan an index over columns `{Cols}`",
    note = "pass a key of the first column, a range of it, a tuple fixing a prefix of the columns, or `..`"
)]
pub trait IndexScan<Cols> {
    /// Appends the scan in the ABI's index-scan encoding.
    fn encode_scan(&self, out: &mut Vec<u8>);
}

fn encode_bound<K, V: KeyArg<K>>(bound: Bound<&V>, out: &mut Vec<u8>) {
    match bound {
        Bound::Unbounded => out.push(0),
        Bound::Included(value) => {
            out.push(1);
            value.encode_key(out);
        }
        Bound::Excluded(value) => {
            out.push(2);
            value.encode_key(out);
        }
    }
}

/// Encodes a scan fixing `prefix_len` columns (already encoded by `prefix`) with bounds on the
/// next one.
fn encode_scan_parts(
    out: &mut Vec<u8>,
    prefix_len: u32,
    prefix: impl FnOnce(&mut Vec<u8>),
    bounds: impl FnOnce(&mut Vec<u8>),
) {
    prefix_len.encode(out);
    prefix(out);
    bounds(out);
}

const UNBOUNDED: [u8; 2] = [0, 0];

/// The scan fixing the first column to `key`: a point lookup on a one-column index.
pub(crate) fn encode_key_scan<K>(key: &impl KeyArg<K>, out: &mut Vec<u8>) {
    encode_scan_parts(
        out,
        1,
        |out| key.encode_key(out),
        |out| out.extend_from_slice(&UNBOUNDED),
    );
}

impl<Cols> IndexScan<Cols> for RangeFull {
    fn encode_scan(&self, out: &mut Vec<u8>) {
        encode_scan_parts(out, 0, |_| {}, |out| out.extend_from_slice(&UNBOUNDED));
    }
}

/// The scan for a range of the first column.
fn encode_first_column_range<K, V: KeyArg<K>>(start: Bound<&V>, end: Bound<&V>, out: &mut Vec<u8>) {
    encode_scan_parts(
        out,
        0,
        |_| {},
        |out| {
            encode_bound(start, out);
            encode_bound(end, out);
        },
    );
}

macro_rules! key_types {
    ($($key:ty),*) => {$(
        impl KeyArg<$key> for $key {
            fn encode_key(&self, out: &mut Vec<u8>) {
                self.encode(out);
            }
        }

        impl KeyArg<$key> for &$key {
            fn encode_key(&self, out: &mut Vec<u8>) {
                (**self).encode(out);
            }
        }

        impl IndexScan<($key,)> for $key {
            fn encode_scan(&self, out: &mut Vec<u8>) {
                encode_key_scan::<$key>(self, out);
            }
        }

        impl IndexScan<($key,)> for &$key {
            fn encode_scan(&self, out: &mut Vec<u8>) {
                encode_key_scan::<$key>(self, out);
            }
        }

        first_column_ranges!($key; []);
        first_column_ranges!($key; [K2]);
        first_column_ranges!($key; [K2, K3]);
        first_column_ranges!($key; [K2, K3, K4]);
    )*};
}

/// Ranges of the first column, for an index whose first column is `$key` and whose other
/// columns are `$rest`.
macro_rules! first_column_ranges {
    ($key:ty; [$($rest:ident),*]) => {
        first_column_ranges!(@one $key; [$($rest),*]; Range<$key>; r => (Bound::Included(&r.start), Bound::Excluded(&r.end)));
        first_column_ranges!(@one $key; [$($rest),*]; RangeInclusive<$key>; r => (Bound::Included(r.start()), Bound::Included(r.end())));
        first_column_ranges!(@one $key; [$($rest),*]; RangeFrom<$key>; r => (Bound::Included(&r.start), Bound::Unbounded));
        first_column_ranges!(@one $key; [$($rest),*]; RangeTo<$key>; r => (Bound::Unbounded, Bound::Excluded(&r.end)));
        first_column_ranges!(@one $key; [$($rest),*]; RangeToInclusive<$key>; r => (Bound::Unbounded, Bound::Included(&r.end)));
    };
    (@one $key:ty; [$($rest:ident),*]; $range:ty; $r:ident => $bounds:expr) => {
        impl<$($rest),*> IndexScan<($key, $($rest,)*)> for $range {
            fn encode_scan(&self, out: &mut Vec<u8>) {
                let $r = self;
                let (start, end) = $bounds;
                encode_first_column_range::<$key, $key>(start, end, out);
            }
        }
    };
}

key_types!(u8, i8, u16, i16, u32, i32, u64, i64, u128, i128, bool, String);
key_types!(crate::Identity, crate::ConnectionId, crate::Timestamp);

impl KeyArg<String> for &str {
    fn encode_key(&self, out: &mut Vec<u8>) {
        self.encode(out);
    }
}

impl IndexScan<(String,)> for &str {
    fn encode_scan(&self, out: &mut Vec<u8>) {
        encode_key_scan::<String>(self, out);
    }
}

/// Prefixes of multi-column indexes: a tuple fixing the first columns by equality.
macro_rules! prefix {
    (($($key:ident),+) fixed by ($($value:ident: $fixed:ident . $index:tt),+)) => {
        impl<$($key,)+ $($value: KeyArg<$fixed>),+> IndexScan<($($key,)+)> for ($($value,)+) {
            fn encode_scan(&self, out: &mut Vec<u8>) {
                let fixed = [$($index),+].len() as u32;
                encode_scan_parts(
                    out,
                    fixed,
                    |out| { $(self.$index.encode_key(out);)+ },
                    |out| out.extend_from_slice(&UNBOUNDED),
                );
            }
        }
    };
}

prefix!((K1, K2) fixed by (V1: K1 . 0));
prefix!((K1, K2) fixed by (V1: K1 . 0, V2: K2 . 1));
prefix!((K1, K2, K3) fixed by (V1: K1 . 0));
prefix!((K1, K2, K3) fixed by (V1: K1 . 0, V2: K2 . 1));
prefix!((K1, K2, K3) fixed by (V1: K1 . 0, V2: K2 . 1, V3: K3 . 2));
prefix!((K1, K2, K3, K4) fixed by (V1: K1 . 0));
prefix!((K1, K2, K3, K4) fixed by (V1: K1 . 0, V2: K2 . 1));
prefix!((K1, K2, K3, K4) fixed by (V1: K1 . 0, V2: K2 . 1, V3: K3 . 2));
prefix!((K1, K2, K3, K4) fixed by (V1: K1 . 0, V2: K2 . 1, V3: K3 . 2, V4: K4 . 3));
