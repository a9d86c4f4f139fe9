//! Index keys and scans through the typed API, run natively against the real host: a
//! fieldless enum as a btree key (points and ranges, in variant order), and scans of
//! multi-column indexes that fix a prefix and bound the next column, each checked against the
//! rows a plain filter of the whole table selects.

use core::ops::RangeBounds;
use wasmod::{Db, ReadOnly};
use wasmod_testing::TestModule;

/// A read of the database, as a table of cases holds it.
type Read<'a, T> = dyn Fn(&Db<ReadOnly>) -> T + 'a;

/// A scan returning row ids, and which values of its last column it must select.
type Case<'a, V> = (&'a Read<'a, Vec<u64>>, &'a dyn Fn(V) -> bool);

#[wasmod::module]
mod ledger {
    use wasmod::prelude::*;

    /// What an account is; declared in the order the index sorts it.
    #[derive(SchemaType, Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
    pub enum Kind {
        Checking,
        Savings,
        Loan,
    }

    /// An account, indexed by kind alone and by owner then kind.
    #[table(index(name = by_owner_kind, columns(owner, kind)))]
    #[derive(Clone, Debug, PartialEq)]
    pub struct Account {
        #[primary_key]
        pub id: u64,
        pub owner: String,
        #[index(btree)]
        pub kind: Kind,
    }

    /// A ledger entry, indexed by branch, day and amount.
    #[table(index(name = by_day, columns(branch, day, amount)))]
    #[derive(Clone, Debug, PartialEq)]
    pub struct Entry {
        #[primary_key]
        pub id: u64,
        pub branch: u8,
        pub day: u16,
        pub amount: i64,
    }
}

use ledger::{Account, AccountAccess, Entry, EntryAccess, Kind};

const OWNERS: [&str; 3] = ["ann", "bo", "cy"];
const KINDS: [Kind; 3] = [Kind::Checking, Kind::Savings, Kind::Loan];

/// Accounts of every owner and kind, inserted in an order unrelated to either.
fn accounts() -> TestModule<ledger::Module> {
    let module = TestModule::<ledger::Module>::new();
    module.write(|db| {
        for id in 0..18u64 {
            let owner = OWNERS[(id * 7 % 3) as usize].to_string();
            let kind = KINDS[(id * 5 / 3 % 3) as usize];
            db.account().insert(Account { id, owner, kind });
        }
    });
    module
}

/// Entries over 3 branches, 6 days and amounts both sides of zero.
fn entries() -> TestModule<ledger::Module> {
    let module = TestModule::<ledger::Module>::new();
    module.write(|db| {
        for id in 0..120u64 {
            db.entry().insert(Entry {
                id,
                branch: (id % 3) as u8,
                day: (id * 7 % 6) as u16,
                amount: (id as i64 * 37 % 41) - 20,
            });
        }
    });
    module
}

/// The ids of `rows`, sorted.
fn account_ids(rows: impl Iterator<Item = Account>) -> Vec<u64> {
    let mut ids: Vec<u64> = rows.map(|row| row.id).collect();
    ids.sort_unstable();
    ids
}

/// The ids of `rows`, sorted.
fn entry_ids(rows: impl Iterator<Item = Entry>) -> Vec<u64> {
    let mut ids: Vec<u64> = rows.map(|row| row.id).collect();
    ids.sort_unstable();
    ids
}

/// The kinds among `sorted` that `range` contains, in order.
fn within(sorted: &[Kind], range: impl RangeBounds<Kind>) -> Vec<Kind> {
    sorted
        .iter()
        .copied()
        .filter(|kind| range.contains(kind))
        .collect()
}

/// The ids of the accounts `keep` selects, sorted: what an index scan must return.
fn accounts_where(
    module: &TestModule<ledger::Module>,
    keep: impl Fn(&Account) -> bool,
) -> Vec<u64> {
    module.read(|db| account_ids(db.account().iter().filter(|row| keep(row))))
}

/// The ids of the entries `keep` selects, sorted.
fn entries_where(module: &TestModule<ledger::Module>, keep: impl Fn(&Entry) -> bool) -> Vec<u64> {
    module.read(|db| entry_ids(db.entry().iter().filter(|row| keep(row))))
}

#[test]
fn an_enum_key_selects_its_variant() {
    let module = accounts();
    for kind in KINDS {
        let borrowed: &Kind = &kind;
        let by_value = module.read(|db| account_ids(db.account().kind().filter(kind)));
        let by_ref = module.read(|db| account_ids(db.account().kind().filter(borrowed)));
        let expected = accounts_where(&module, |row| row.kind == kind);
        assert!(!expected.is_empty());
        assert_eq!(by_value, expected, "{kind:?}");
        assert_eq!(by_ref, expected, "{kind:?}");
    }
}

#[test]
fn enum_ranges_follow_variant_order() {
    let module = accounts();
    let mut everything: Vec<Kind> =
        module.read(|db| db.account().iter().map(|row| row.kind).collect());
    everything.sort();
    // Index order is variant order, so the scans come out sorted by kind.
    let cases: [(&Read<'_, Vec<Account>>, Vec<Kind>); 5] = [
        (
            &|db| {
                db.account()
                    .kind()
                    .filter(Kind::Checking..Kind::Loan)
                    .collect()
            },
            within(&everything, Kind::Checking..Kind::Loan),
        ),
        (
            &|db| db.account().kind().filter(Kind::Savings..).collect(),
            within(&everything, Kind::Savings..),
        ),
        (
            &|db| db.account().kind().filter(..=Kind::Savings).collect(),
            within(&everything, ..=Kind::Savings),
        ),
        (
            &|db| {
                db.account()
                    .kind()
                    .filter(Kind::Loan..=Kind::Loan)
                    .collect()
            },
            within(&everything, Kind::Loan..=Kind::Loan),
        ),
        (
            &|db| db.account().kind().filter(..Kind::Checking).collect(),
            Vec::new(),
        ),
    ];
    for (scan, expected) in cases {
        let kinds: Vec<Kind> = module.read(scan).into_iter().map(|row| row.kind).collect();
        assert_eq!(kinds, expected);
    }
}

#[test]
fn a_string_prefix_and_an_enum_range_select_together() {
    let module = accounts();
    for owner in OWNERS {
        let by_owner_kind = |db: &Db<ReadOnly>| db.account().by_owner_kind();
        let cases: [Case<'_, Kind>; 4] = [
            (
                &|db| account_ids(by_owner_kind(db).filter((owner, Kind::Savings))),
                &|kind| kind == Kind::Savings,
            ),
            (
                &|db| account_ids(by_owner_kind(db).filter((owner, Kind::Savings..))),
                &|kind| kind >= Kind::Savings,
            ),
            (
                &|db| account_ids(by_owner_kind(db).filter((&owner.to_string(), ..Kind::Loan))),
                &|kind| kind < Kind::Loan,
            ),
            (
                &|db| account_ids(by_owner_kind(db).filter((owner, ..))),
                &|_| true,
            ),
        ];
        for (scan, keep) in cases {
            assert_eq!(
                module.read(scan),
                accounts_where(&module, |row| row.owner == owner && keep(row.kind)),
                "{owner}"
            );
        }
    }
}

#[test]
fn two_fixed_columns_and_a_range_of_the_third() {
    let module = entries();
    for branch in 0..3u8 {
        for day in 0..6u16 {
            let by_day = |db: &Db<ReadOnly>| db.entry().by_day();
            let cases: [Case<'_, i64>; 4] = [
                (
                    &|db| entry_ids(by_day(db).filter((branch, day, -5i64..5))),
                    &|amount| (-5..5).contains(&amount),
                ),
                (
                    &|db| entry_ids(by_day(db).filter((branch, day, 0i64..))),
                    &|amount| amount >= 0,
                ),
                (
                    &|db| entry_ids(by_day(db).filter((branch, day, ..=-3i64))),
                    &|amount| amount <= -3,
                ),
                (
                    &|db| entry_ids(by_day(db).filter((branch, &day, -20i64..=20))),
                    &|_| true,
                ),
            ];
            for (scan, keep) in cases {
                assert_eq!(
                    module.read(scan),
                    entries_where(&module, |row| row.branch == branch
                        && row.day == day
                        && keep(row.amount)),
                    "branch {branch}, day {day}"
                );
            }
        }
    }
}

#[test]
fn one_fixed_column_and_a_range_of_the_second() {
    let module = entries();
    for branch in 0..3u8 {
        let by_day = |db: &Db<ReadOnly>| db.entry().by_day();
        let cases: [Case<'_, u16>; 5] = [
            (
                &|db| entry_ids(by_day(db).filter((branch, 2u16..4))),
                &|day| (2..4).contains(&day),
            ),
            (
                &|db| entry_ids(by_day(db).filter((branch, 3u16..))),
                &|day| day >= 3,
            ),
            (
                &|db| entry_ids(by_day(db).filter((branch, ..=1u16))),
                &|day| day <= 1,
            ),
            (
                &|db| entry_ids(by_day(db).filter((branch, ..5u16))),
                &|day| day < 5,
            ),
            (
                &|db| entry_ids(by_day(db).filter((branch, 1u16..=1))),
                &|day| day == 1,
            ),
        ];
        for (scan, keep) in cases {
            assert_eq!(
                module.read(scan),
                entries_where(&module, |row| row.branch == branch && keep(row.day)),
                "branch {branch}"
            );
        }
    }
    // A range of the first column alone, as a one-element tuple or bare.
    assert_eq!(
        module.read(|db| entry_ids(db.entry().by_day().filter((1u8..,)))),
        entries_where(&module, |row| row.branch >= 1)
    );
    assert_eq!(
        module.read(|db| entry_ids(db.entry().by_day().filter(..1u8))),
        entries_where(&module, |row| row.branch < 1)
    );
}

#[test]
fn a_prefix_range_scan_comes_out_in_index_order() {
    let module = entries();
    let scanned: Vec<(u16, i64)> = module.read(|db| {
        db.entry()
            .by_day()
            .filter((2u8, 1u16..=4))
            .map(|row| (row.day, row.amount))
            .collect()
    });
    let mut expected = scanned.clone();
    expected.sort_unstable();
    assert_eq!(scanned, expected);
    assert!(scanned.len() > 4);
}

#[test]
fn deleting_through_a_prefix_range_removes_exactly_its_rows() {
    let module = entries();
    let doomed = entries_where(&module, |row| row.branch == 1 && row.day >= 4);
    let kept = entries_where(&module, |row| !(row.branch == 1 && row.day >= 4));
    let deleted = module.write(|db| db.entry().by_day().delete((1u8, 4u16..)));
    assert!(deleted > 0);
    assert_eq!(deleted as usize, doomed.len());
    assert_eq!(entries_where(&module, |_| true), kept);
}
