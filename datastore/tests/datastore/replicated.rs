//! Replicated durability: a standby takes only its primary's commits and logs them; once
//! promoted, each batch goes to the replica before it is written locally or acknowledged, and
//! a batch the replica refuses is neither.

use crate::fixtures::{all, module, player, PLAYER};
use std::sync::{Arc, Mutex};
use wasmod_datastore::durability::{decode_records, DurabilityError, Mode, Options, Replica};
use wasmod_datastore::{Commit, CommitMeta, Database, ReplicaError};

/// A replica that keeps what it is given, or refuses once told to.
#[derive(Default)]
struct Recording {
    held: Mutex<Vec<(u64, u64, Vec<u8>)>>,
    refuse: Mutex<Option<String>>,
}

impl Replica for Recording {
    fn hold(&self, first: u64, next: u64, records: &[u8]) -> Result<(), String> {
        if let Some(reason) = self.refuse.lock().unwrap().clone() {
            return Err(reason);
        }
        self.held
            .lock()
            .unwrap()
            .push((first, next, records.to_vec()));
        Ok(())
    }
}

fn replicated() -> Options {
    Options::default().with_mode(Mode::Replicated)
}

fn insert(database: &Database, id: u32) -> Result<Commit, DurabilityError> {
    let mut tx = database.begin_mut();
    tx.insert(PLAYER, &mut player(id, &format!("p{id}"), 1))
        .unwrap();
    let committed = database.commit(tx, CommitMeta::host())?;
    committed.durable.wait()?;
    Ok(Arc::unwrap_or_clone(committed.commit.expect("a change")))
}

#[test]
fn a_standby_refuses_its_own_commits_and_logs_its_primarys() {
    let (primary_dir, standby_dir) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let primary = Database::open(primary_dir.path(), &module(), Options::default()).unwrap();
    let standby = Database::open(standby_dir.path(), &module(), replicated()).unwrap();
    assert!(standby.is_standby() && !primary.is_standby());

    assert!(matches!(insert(&standby, 9), Err(DurabilityError::Standby)));
    assert_eq!(all(&standby.begin_read(), PLAYER).len(), 0);
    let unchanged = standby
        .commit(standby.begin_mut(), CommitMeta::host())
        .unwrap();
    assert!(
        unchanged.commit.is_none(),
        "a transaction that writes nothing commits"
    );

    for id in 1..=3 {
        let commit = insert(&primary, id).unwrap();
        standby.apply_replicated(commit).unwrap();
    }
    assert_eq!(standby.next_offset(), 3);
    drop(standby);
    let reopened = Database::open(standby_dir.path(), &module(), replicated()).unwrap();
    assert_eq!(
        reopened.next_offset(),
        3,
        "the standby logged what it applied"
    );
    assert_eq!(all(&reopened.begin_read(), PLAYER).len(), 3);
}

#[test]
fn a_promoted_standby_acknowledges_only_what_its_replica_holds() {
    let dir = tempfile::tempdir().unwrap();
    let database = Database::open(dir.path(), &module(), replicated()).unwrap();
    let replica = Arc::new(Recording::default());
    database.promote(replica.clone()).unwrap();
    assert!(!database.is_standby());
    assert!(database.promote(replica.clone()).is_err(), "promoted once");

    insert(&database, 1).unwrap();
    insert(&database, 2).unwrap();
    let held = replica.held.lock().unwrap().clone();
    let records: Vec<u8> = held
        .iter()
        .flat_map(|(_, _, bytes)| bytes.clone())
        .collect();
    let offsets: Vec<u64> = decode_records(&records)
        .unwrap()
        .into_iter()
        .map(|(offset, _)| offset)
        .collect();
    assert_eq!(offsets, [0, 1]);
    assert_eq!((held[0].0, held.last().unwrap().1), (0, 2));

    *replica.refuse.lock().unwrap() = Some("deposed".into());
    let refused = insert(&database, 3).unwrap_err();
    assert!(refused.to_string().contains("deposed"), "{refused}");
    assert!(insert(&database, 4).is_err(), "the log stays failed");
    drop(database);

    // The refused batch was never written: a new start has only what the replica held.
    let reopened = Database::open(dir.path(), &module(), replicated()).unwrap();
    assert_eq!(reopened.next_offset(), 2);
}

#[test]
fn a_standby_refuses_a_commit_out_of_order_without_logging_it() {
    let (primary_dir, standby_dir) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let primary = Database::open(primary_dir.path(), &module(), Options::default()).unwrap();
    let standby = Database::open(standby_dir.path(), &module(), replicated()).unwrap();
    let _first = insert(&primary, 1).unwrap();
    let second = insert(&primary, 2).unwrap();
    assert!(matches!(
        standby.apply_replicated(second),
        Err(ReplicaError::OutOfOrder {
            expected: 0,
            given: 1
        })
    ));
    assert_eq!(standby.next_offset(), 0);
}

#[test]
fn records_that_are_damaged_are_not_decoded() {
    let dir = tempfile::tempdir().unwrap();
    let database = Database::open(dir.path(), &module(), replicated()).unwrap();
    let replica = Arc::new(Recording::default());
    database.promote(replica.clone()).unwrap();
    insert(&database, 1).unwrap();
    let mut records = replica.held.lock().unwrap()[0].2.clone();
    assert_eq!(decode_records(&records).unwrap().len(), 1);
    let last = records.len() - 1;
    records[last] ^= 1;
    assert!(decode_records(&records).is_err());
    assert!(decode_records(&records[..records.len() - 2]).is_err());
}
