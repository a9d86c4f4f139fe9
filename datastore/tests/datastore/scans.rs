//! Index scans: point, prefix and range lookups, and malformed scans.

use crate::fixtures::*;
use wasmod_abi::Errno;
use wasmod_datastore::MutTx;

/// Points `(x, y)` for x in 0..4 and y in -2..=2, inserted in a scrambled order.
fn grid(tx: &mut MutTx) {
    let mut cells: Vec<(u32, i32)> = (0..4).flat_map(|x| (-2..=2).map(move |y| (x, y))).collect();
    cells.reverse();
    cells.rotate_left(7);
    for (x, y) in cells {
        tx.insert(POINT, &mut point(x, y, &format!("{x}:{y}")))
            .unwrap();
    }
}

fn xy(tx: &MutTx, scan: &[u8]) -> Vec<(u32, i32)> {
    tx.index_scan(POINT, POINT_XY, scan)
        .unwrap()
        .iter()
        .map(|row| {
            let x = u32::from_le_bytes(row[0..4].try_into().unwrap());
            let y = i32::from_le_bytes(row[4..8].try_into().unwrap());
            (x, y)
        })
        .collect()
}

const INCLUDED: u8 = 1;
const EXCLUDED: u8 = 2;

#[test]
fn full_key_prefix_and_everything() {
    let store = datastore();
    let mut tx = store.begin_mut();
    grid(&mut tx);
    let full = {
        let mut scan = 2u32.to_le_bytes().to_vec();
        scan.extend(1u32.to_le_bytes());
        scan.extend((-1i32).to_le_bytes());
        scan.extend([0, 0]);
        scan
    };
    assert_eq!(xy(&tx, &full), [(1, -1)]);
    assert_eq!(
        xy(&tx, &point_scan(&[2u32])),
        [(2, -2), (2, -1), (2, 0), (2, 1), (2, 2)]
    );
    let everything = xy(&tx, &scan_bytes::<u32, u32>(&[], None, None));
    let mut sorted = everything.clone();
    sorted.sort();
    assert_eq!(everything.len(), 20);
    assert_eq!(everything, sorted, "rows come in index order");
    assert!(xy(&tx, &point_scan(&[9u32])).is_empty());
}

#[test]
fn ranges_on_the_first_column() {
    let store = datastore();
    let mut tx = store.begin_mut();
    grid(&mut tx);
    let xs = |scan: Vec<u8>| {
        let mut xs: Vec<u32> = xy(&tx, &scan).into_iter().map(|(x, _)| x).collect();
        xs.dedup();
        xs
    };
    let none: &[u32] = &[];
    assert_eq!(
        xs(scan_bytes(
            none,
            Some((INCLUDED, 1u32)),
            Some((INCLUDED, 2u32))
        )),
        [1, 2]
    );
    assert_eq!(
        xs(scan_bytes(
            none,
            Some((EXCLUDED, 1u32)),
            Some((INCLUDED, 2u32))
        )),
        [2]
    );
    assert_eq!(
        xs(scan_bytes(
            none,
            Some((INCLUDED, 1u32)),
            Some((EXCLUDED, 3u32))
        )),
        [1, 2]
    );
    assert_eq!(xs(scan_bytes(none, Some((EXCLUDED, 1u32)), None)), [2, 3]);
    assert_eq!(xs(scan_bytes(none, None, Some((EXCLUDED, 1u32)))), [0]);
    assert_eq!(
        xs(scan_bytes(
            none,
            Some((EXCLUDED, 2u32)),
            Some((EXCLUDED, 3u32))
        )),
        none
    );
    assert_eq!(
        xs(scan_bytes(
            none,
            Some((INCLUDED, 3u32)),
            Some((INCLUDED, 1u32))
        )),
        none,
        "lower > upper is empty"
    );
    assert_eq!(
        xs(scan_bytes(
            none,
            Some((EXCLUDED, 2u32)),
            Some((EXCLUDED, 2u32))
        )),
        none
    );
    assert_eq!(
        xs(scan_bytes(
            none,
            Some((INCLUDED, 2u32)),
            Some((INCLUDED, 2u32))
        )),
        [2]
    );
}

#[test]
fn ranges_after_a_prefix() {
    let store = datastore();
    let mut tx = store.begin_mut();
    grid(&mut tx);
    let scan = |lower: Option<(u8, i32)>, upper: Option<(u8, i32)>| {
        xy(&tx, &scan_bytes(&[1u32], lower, upper))
    };
    assert_eq!(scan(Some((INCLUDED, 0)), None), [(1, 0), (1, 1), (1, 2)]);
    assert_eq!(scan(Some((EXCLUDED, 0)), None), [(1, 1), (1, 2)]);
    assert_eq!(scan(None, Some((INCLUDED, -1))), [(1, -2), (1, -1)]);
    assert_eq!(scan(None, Some((EXCLUDED, -1))), [(1, -2)]);
    assert_eq!(
        scan(Some((EXCLUDED, -2)), Some((EXCLUDED, 2))),
        [(1, -1), (1, 0), (1, 1)]
    );
    assert_eq!(scan(Some((INCLUDED, 5)), None), []);
}

#[test]
fn non_unique_keys_keep_every_row() {
    let store = datastore();
    let mut tx = store.begin_mut();
    tx.insert(POINT, &mut point(5, 0, "same")).unwrap();
    tx.insert(POINT, &mut point(1, 0, "same")).unwrap();
    tx.insert(POINT, &mut point(3, 0, "other")).unwrap();
    let rows = bytes(
        tx.index_scan(POINT, POINT_LABEL, &point_scan(&["same"]))
            .unwrap(),
    );
    assert_eq!(
        rows,
        [point(5, 0, "same"), point(1, 0, "same")],
        "equal keys oldest first"
    );
    let from_p = bytes(
        tx.index_scan(
            POINT,
            POINT_LABEL,
            &scan_bytes::<&str, &str>(&[], Some((INCLUDED, "p")), None),
        )
        .unwrap(),
    );
    assert_eq!(from_p, [point(5, 0, "same"), point(1, 0, "same")]);
}

#[test]
fn malformed_scans_are_bad_encoding() {
    let store = datastore();
    let mut tx = store.begin_mut();
    grid(&mut tx);
    let bad = |scan: &[u8]| {
        let error = tx.index_scan(POINT, POINT_XY, scan).unwrap_err();
        assert_eq!(error.errno(), Errno::BAD_ENCODING, "{error}");
        assert!(error.message().contains("`point_xy`"), "{error}");
        error.message().to_owned()
    };
    bad(&[]);
    bad(&[1, 0, 0]);
    let message = bad(&scan_bytes::<u32, u32>(&[1, 2, 3], None, None));
    assert!(message.contains("prefix of 3 columns"), "{message}");
    let message = bad(&scan_bytes(&[1u32, 2], Some((INCLUDED, 0u32)), None));
    assert!(
        message.contains("bound after a prefix of every column"),
        "{message}"
    );
    let message = bad(&scan_bytes(&[1u32], Some((3, 0i32)), None));
    assert!(message.contains("tag 3"), "{message}");
    bad(&scan_bytes(&[1u32], Some((INCLUDED, 0u16)), None));
    let mut trailing = point_scan(&[1u32]);
    trailing.push(0);
    bad(&trailing);
    let mut truncated = point_scan(&[1u32]);
    truncated.pop();
    bad(&truncated);
    let message = bad(&scan_bytes::<u32, u32>(&[], Some((INCLUDED, 0)), None)[..6]);
    assert!(message.contains("lower bound"), "{message}");
}
