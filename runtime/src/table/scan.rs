//! What index lookups accept, and how it is encoded for the host.
//!
//! An index scan fixes the first `k` columns of an index by equality and may bound column `k`
//! by a range (see `docs/abi.md`). [`IndexScan`] is implemented for the argument shapes that
//! make sense for an index's column types:
//!
//! - one-column index on `K`: a key (`K`, `&K`, and `&str` for `String`) or a range of `K`
//!   (`a..b`, `a..=b`, `a..`, `..b`, `..=b`);
//! - index on `(K1, K2, ..)`: a range of `K1`, or a tuple fixing a prefix of the columns whose
//!   last element is either a key of its column or a range of it (`(k1,)`, `(k1, k2)`,
//!   `(k1, lo..hi)`, `(k1, k2, ..=hi)`, ..; see [`ColumnScan`]);
//! - any index: `..`, every row in index order.
//!
//! Keys are the types that can be compared exactly, the [`IndexKey`]s. The impls are generic
//! over them (rather than one set per key type), so that a user's enum becomes a key with a
//! single `impl IndexKey`, which `#[derive(SchemaType)]` writes for enums without fields.
//! Coherence holds because `IndexKey` is this crate's: no other crate can make a range, a
//! tuple or `..` an `IndexKey`, so the compiler knows the impls below never overlap.
//!
//! [`Identity`]: crate::Identity
//! [`ConnectionId`]: crate::ConnectionId
//! [`Timestamp`]: crate::Timestamp

use core::ops::{Bound, Range, RangeFrom, RangeFull, RangeInclusive, RangeTo, RangeToInclusive};
use wasmod_abi::Encode;

/// A column type whose values index lookups take as keys: integers, `bool`, `String`,
/// [`Identity`], [`ConnectionId`], [`Timestamp`], and enums without fields deriving
/// `SchemaType` (the derive implements this for them).
///
/// The host orders an index by its keys' values; an enum's values are ordered by variant, in
/// declaration order, so a range of an enum (`Kind::Checking..=Kind::Savings`) selects the
/// variants declared between its ends.
///
/// ```
/// use wasmod::prelude::*;
///
/// #[derive(SchemaType, Clone, Copy, Debug, PartialEq)]
/// pub enum Kind {
///     Checking,
///     Savings,
/// }
///
/// fn assert_key<K: wasmod::table::IndexKey>() {}
/// assert_key::<Kind>();
/// ```
///
/// [`Identity`]: crate::Identity
/// [`ConnectionId`]: crate::ConnectionId
/// [`Timestamp`]: crate::Timestamp
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be an index key",
    note = "keys are integers, `bool`, `String`, `Identity`, `ConnectionId`, `Timestamp` and enums without fields deriving `SchemaType`"
)]
pub trait IndexKey: Encode {}

/// A value that can stand for a key of type `K` in a lookup: `K` itself, `&K`, or `&str` for
/// `String`.
pub trait KeyArg<K> {
    /// Appends the value in `K`'s encoding.
    fn encode_key(&self, out: &mut Vec<u8>);
}

impl<K: IndexKey> KeyArg<K> for K {
    fn encode_key(&self, out: &mut Vec<u8>) {
        self.encode(out);
    }
}

impl<K: IndexKey> KeyArg<K> for &K {
    fn encode_key(&self, out: &mut Vec<u8>) {
        (**self).encode(out);
    }
}

impl KeyArg<String> for &str {
    fn encode_key(&self, out: &mut Vec<u8>) {
        self.encode(out);
    }
}

/// The last element of a scan tuple, which decides what the scan does to its column: a key
/// fixes it (`(a, b)`), a range bounds it (`(a, b_lo..b_hi)`, `(a, b..)`, `(a, ..=b)`), and
/// `..` leaves it free (`(a, ..)`, the same rows as `(a,)`).
pub trait ColumnScan<K> {
    /// Whether this fixes the column (a key) rather than bounding it (a range).
    const FIXES: bool;

    /// Appends the key, if this [fixes](Self::FIXES) the column, or else the start and end
    /// bounds, in the ABI's index-scan encoding.
    fn encode_column(&self, out: &mut Vec<u8>);
}

impl<K: IndexKey> ColumnScan<K> for K {
    const FIXES: bool = true;

    fn encode_column(&self, out: &mut Vec<u8>) {
        self.encode_key(out);
    }
}

impl<K: IndexKey> ColumnScan<K> for &K {
    const FIXES: bool = true;

    fn encode_column(&self, out: &mut Vec<u8>) {
        self.encode_key(out);
    }
}

impl ColumnScan<String> for &str {
    const FIXES: bool = true;

    fn encode_column(&self, out: &mut Vec<u8>) {
        self.encode_key(out);
    }
}

impl<K> ColumnScan<K> for RangeFull {
    const FIXES: bool = false;

    fn encode_column(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&UNBOUNDED);
    }
}

/// An argument of [`BTreeIndex::filter`](super::BTreeIndex::filter) for an index over the
/// columns `Cols` (a tuple of their types).
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot scan an index over columns `{Cols}`",
    note = "pass a key of the first column, a range of it, a tuple fixing a prefix of the columns (its last element may be a range), or `..`",
    note = "keys are integers, `bool`, `String`, `Identity`, `ConnectionId`, `Timestamp` and enums without fields deriving `SchemaType`"
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

impl<K: IndexKey> IndexScan<(K,)> for K {
    fn encode_scan(&self, out: &mut Vec<u8>) {
        encode_key_scan::<K>(self, out);
    }
}

impl<K: IndexKey> IndexScan<(K,)> for &K {
    fn encode_scan(&self, out: &mut Vec<u8>) {
        encode_key_scan::<K>(self, out);
    }
}

impl IndexScan<(String,)> for &str {
    fn encode_scan(&self, out: &mut Vec<u8>) {
        encode_key_scan::<String>(self, out);
    }
}

/// The bounds of a range of keys `K`, as [`ColumnScan`] and first-column scans encode them.
macro_rules! ranges {
    ($($range:ident: $r:ident => $bounds:expr;)*) => {$(
        impl<K: IndexKey> ColumnScan<K> for $range<K> {
            const FIXES: bool = false;

            fn encode_column(&self, out: &mut Vec<u8>) {
                let $r = self;
                let (start, end): (Bound<&K>, Bound<&K>) = $bounds;
                encode_bound(start, out);
                encode_bound(end, out);
            }
        }

        first_column_range!($range; []);
        first_column_range!($range; [K2]);
        first_column_range!($range; [K2, K3]);
        first_column_range!($range; [K2, K3, K4]);
    )*};
}

/// A range of the first column of an index whose other columns are `$rest`.
macro_rules! first_column_range {
    ($range:ident; [$($rest:ident),*]) => {
        impl<K: IndexKey, $($rest),*> IndexScan<(K, $($rest,)*)> for $range<K> {
            fn encode_scan(&self, out: &mut Vec<u8>) {
                encode_scan_parts(out, 0, |_| {}, |out| self.encode_column(out));
            }
        }
    };
}

ranges! {
    Range: r => (Bound::Included(&r.start), Bound::Excluded(&r.end));
    RangeInclusive: r => (Bound::Included(r.start()), Bound::Included(r.end()));
    RangeFrom: r => (Bound::Included(&r.start), Bound::Unbounded);
    RangeTo: r => (Bound::Unbounded, Bound::Excluded(&r.end));
    RangeToInclusive: r => (Bound::Unbounded, Bound::Included(&r.end));
}

macro_rules! key_types {
    ($($key:ty),*) => {$(
        impl IndexKey for $key {}
    )*};
}

key_types!(u8, i8, u16, i16, u32, i32, u64, i64, u128, i128, bool, String);
key_types!(crate::Identity, crate::ConnectionId, crate::Timestamp);

/// Tuples scanning an index over `($key, ..)`: the elements before the last fix their columns
/// (`$value: KeyArg<$fixed>`), and the last (`$last: ColumnScan<$scanned>`) fixes or bounds
/// its own.
macro_rules! prefix {
    (($($key:ident),+) fixed by ($($value:ident: $fixed:ident . $index:tt),*) then $last:ident: $scanned:ident . $last_index:tt) => {
        impl<$($key,)+ $($value: KeyArg<$fixed>,)* $last: ColumnScan<$scanned>> IndexScan<($($key,)+)>
            for ($($value,)* $last,)
        {
            fn encode_scan(&self, out: &mut Vec<u8>) {
                // The elements before the last are `0..$last_index`.
                let fixed = $last_index + u32::from($last::FIXES);
                encode_scan_parts(
                    out,
                    fixed,
                    |out| {
                        $(self.$index.encode_key(out);)*
                        self.$last_index.encode_column(out);
                    },
                    |out| {
                        if $last::FIXES {
                            out.extend_from_slice(&UNBOUNDED);
                        }
                    },
                );
            }
        }
    };
}

prefix!((K1) fixed by () then L1: K1 . 0);
prefix!((K1, K2) fixed by () then L1: K1 . 0);
prefix!((K1, K2) fixed by (V1: K1 . 0) then L2: K2 . 1);
prefix!((K1, K2, K3) fixed by () then L1: K1 . 0);
prefix!((K1, K2, K3) fixed by (V1: K1 . 0) then L2: K2 . 1);
prefix!((K1, K2, K3) fixed by (V1: K1 . 0, V2: K2 . 1) then L3: K3 . 2);
prefix!((K1, K2, K3, K4) fixed by () then L1: K1 . 0);
prefix!((K1, K2, K3, K4) fixed by (V1: K1 . 0) then L2: K2 . 1);
prefix!((K1, K2, K3, K4) fixed by (V1: K1 . 0, V2: K2 . 1) then L3: K3 . 2);
prefix!((K1, K2, K3, K4) fixed by (V1: K1 . 0, V2: K2 . 1, V3: K3 . 2) then L4: K4 . 3);
