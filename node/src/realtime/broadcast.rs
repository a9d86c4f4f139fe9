//! A commit's update to one group of connections ([`super::groups`]), shared by all of them:
//! the broadcast that serializes once.
//!
//! The evaluation task builds one [`SharedUpdate`] per commit and group, and queues the same
//! one (reference-counted) to every member. Its frames are filled lazily, one per form (the
//! encoding and, in binary, the compression): the first writer that needs a form renders,
//! encodes and compresses it, and every other member's writer clones the bytes (a
//! [`Frame`] holds reference-counted bytes). So a commit seen by N connections of one
//! subscription is encoded once per form in use, not N times, and nothing is rendered for a
//! form no member uses. Rendering happens on the writers' tasks, off the evaluation task.
//!
//! The caller's own update, joined with its call's answer under its request id, differs from
//! the group's frame: it is rendered for that connection alone ([`render`]).
//!
//! An update carries the description of the build whose tables its rows are of, and is
//! encoded with it: an update queued before a new build was published (`wasmod publish`) is
//! still encoded with the old build's row types when its writer takes it after the swap.

use super::calls::ReducerAnswer;
use super::frame::Frame;
use super::rows::QueryRows;
use super::wire::{Form, Wire};
use std::sync::{Arc, OnceLock};
use wasmod_abi::{EntryKind, ModuleDef};
use wasmod_host::datastore::Commit;
use wasmod_protocol::ws::{
    Compression, EntryPointName, QuerySetUpdate, ServerMessage, TableUpdate, TransactionUpdate,
    UpdateStatus,
};

/// A frame, or why it could not be rendered.
type Rendered = Result<Frame, String>;

/// A commit's changes to the query sets of one group, and the frames of them, rendered once
/// per form.
#[derive(Debug)]
pub struct SharedUpdate {
    /// The description of the build that made the commit: what encodes its rows.
    pub module: Arc<ModuleDef>,
    /// The commit.
    pub commit: Arc<Commit>,
    /// The changes, per query set, in increasing query set id.
    pub changes: Vec<(u32, Vec<Arc<QueryRows>>)>,
    frames: [OnceLock<Rendered>; Form::COUNT],
}

impl SharedUpdate {
    /// The update of `commit` (made by the build `module` describes) that changes `changes`,
    /// not rendered yet.
    pub fn new(
        module: Arc<ModuleDef>,
        commit: Arc<Commit>,
        changes: Vec<(u32, Vec<Arc<QueryRows>>)>,
    ) -> Self {
        Self {
            module,
            commit,
            changes,
            frames: Default::default(),
        }
    }

    /// The size of its rows in the binary encoding: what a queued update is counted as.
    pub fn bytes(&self) -> usize {
        self.changes
            .iter()
            .flat_map(|(_, queries)| queries)
            .map(|rows| rows.bytes())
            .sum()
    }

    /// The frame every member receives, in the encoding `W` with `compression`: rendered by
    /// the first caller, shared (cloned bytes) after.
    pub fn frame<W: Wire>(&self, compression: Compression) -> Rendered {
        let render = || render::<W>(self, None, compression);
        match self.frames.get(W::form(compression).slot()) {
            Some(frame) => frame.get_or_init(render).clone(),
            None => render(),
        }
    }
}

/// The `TransactionUpdate` of `update`, joined with the answer of the call that made it if
/// any, in the encoding `W` with `compression`, rendered now.
pub fn render<W: Wire>(
    update: &SharedUpdate,
    answer: Option<&ReducerAnswer>,
    compression: Compression,
) -> Rendered {
    let meta = &update.commit.meta;
    let changes = update
        .changes
        .iter()
        .map(|(query_set_id, queries)| {
            let tables = queries
                .iter()
                .map(|rows| {
                    let (inserts, deletes) = W::rows(&update.module, rows)?;
                    Ok(TableUpdate {
                        table: rows.table.clone(),
                        inserts,
                        deletes,
                    })
                })
                .collect::<Result<_, String>>()?;
            Ok(QuerySetUpdate {
                query_set_id: *query_set_id,
                tables,
            })
        })
        .collect::<Result<_, String>>()?;
    let entry_point = match &meta.entry {
        Some(entry) => EntryPointName {
            kind: entry.kind,
            name: entry.name.to_string(),
        },
        None => EntryPointName {
            kind: EntryKind::Reducer,
            name: String::new(),
        },
    };
    let message = ServerMessage::TransactionUpdate(TransactionUpdate {
        offset: update.commit.offset,
        timestamp: meta.timestamp,
        caller_identity: meta.caller,
        caller_connection_id: meta.connection_id,
        entry_point,
        status: answer.map_or(UpdateStatus::Committed, |answer| answer.status.clone()),
        request_id: answer.map(|answer| answer.request_id),
        changes,
    });
    Ok(W::encode(&message, compression))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::realtime::wire::{Binary, Json};
    use wasmod_host::datastore::CommitMeta;
    use wasmod_protocol::ws::BinaryServerMessage;

    fn update() -> SharedUpdate {
        let module = Arc::new(ModuleDef::default());
        let commit = Arc::new(Commit {
            offset: 7,
            meta: CommitMeta::host(),
            changes: Default::default(),
        });
        let rows = QueryRows::new("t", &[vec![1u8; 3000].into()], &[]).expect("small");
        SharedUpdate::new(module, commit, vec![(4, vec![Arc::new(rows)])])
    }

    fn bytes(frame: &Frame) -> &[u8] {
        match frame {
            Frame::Binary(bytes) | Frame::Text(bytes) => bytes,
            other => panic!("not a data frame: {other:?}"),
        }
    }

    #[test]
    fn each_form_is_rendered_once_and_shared() {
        let update = update();
        let first = update.frame::<Binary>(Compression::Gzip).unwrap();
        let again = update.frame::<Binary>(Compression::Gzip).unwrap();
        assert_eq!(
            bytes(&first).as_ptr(),
            bytes(&again).as_ptr(),
            "the same bytes, not a copy"
        );
        assert_eq!(bytes(&first)[0], Compression::Gzip.tag());
        let plain = update.frame::<Binary>(Compression::None).unwrap();
        assert_eq!(bytes(&plain)[0], Compression::None.tag());
        let decoded = BinaryServerMessage::from_bytes(bytes(&first)).unwrap();
        assert_eq!(
            decoded,
            BinaryServerMessage::from_bytes(bytes(&plain)).unwrap()
        );
        assert!(update.frames[Form::Binary(Compression::Brotli).slot()]
            .get()
            .is_none());
        assert!(update.frames[Form::Json.slot()].get().is_none());
    }

    #[test]
    fn a_rendered_update_with_an_answer_carries_its_request_id_and_the_shared_one_does_not() {
        let update = update();
        let answer = ReducerAnswer {
            request_id: 12,
            name: "send".into(),
            commit: Some(7),
            offset: 7,
            timestamp: wasmod_abi::Timestamp::now(),
            status: UpdateStatus::Committed,
        };
        let own = render::<Binary>(&update, Some(&answer), Compression::None).unwrap();
        let shared = update.frame::<Binary>(Compression::None).unwrap();
        let request_id = |frame: &Frame| match BinaryServerMessage::from_bytes(bytes(frame)) {
            Ok(ServerMessage::TransactionUpdate(update)) => update.request_id,
            other => panic!("not an update: {other:?}"),
        };
        assert_eq!(request_id(&own), Some(12));
        assert_eq!(request_id(&shared), None);
        let json = update.frame::<Json>(Compression::None);
        assert!(json.is_err(), "table `t` is not in an empty module");
    }
}
