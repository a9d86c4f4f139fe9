//! Table handles at their edges, run natively against the real host: deleting a row by its
//! value, rows larger than the iterator's first buffer, iterators dropped before their end,
//! and the errors of `try_insert` and `try_update` with the text a caller shows.

use wasmod::InsertError;
use wasmod_testing::TestModule;

#[wasmod::module]
mod store {
    use wasmod::prelude::*;

    /// A row with a text of any size.
    #[table]
    #[derive(Clone, Debug, PartialEq)]
    pub struct Note {
        #[primary_key]
        pub id: u32,
        pub text: String,
    }

    /// A sequence that runs out quickly: a `u8` auto-increment key.
    #[table]
    #[derive(Clone, Debug, PartialEq)]
    pub struct Ticket {
        #[primary_key]
        #[auto_inc]
        pub id: u8,
        pub holder: String,
    }

    #[reducer]
    fn noop(_ctx: &ReducerContext) {}
}

use store::{Note, NoteAccess, Ticket, TicketAccess};

#[test]
fn delete_by_value_removes_only_an_identical_row() {
    let module = TestModule::<store::Module>::new();
    module.write(|db| {
        let note = db.note().insert(Note {
            id: 1,
            text: "keep".into(),
        });
        let other_text = Note {
            text: "other".into(),
            ..note.clone()
        };
        assert!(
            !db.note().delete(&other_text),
            "a row that differs is not deleted"
        );
        assert_eq!(db.note().count(), 1);
        assert!(db.note().delete(&note));
        assert!(!db.note().delete(&note), "deleted once only");
    });
    assert_eq!(module.read(|db| db.note().count()), 0);
}

#[test]
fn rows_larger_than_the_first_buffer_come_back_whole_and_in_order() {
    let module = TestModule::<store::Module>::new();
    // The iterator's first buffer holds 64 KiB; rows of 100 KiB and 1 MiB need it grown,
    // between small rows that must not be lost or repeated around the growth.
    let sizes = [10, 100 << 10, 3, 1 << 20, 0, 70 << 10];
    module.write(|db| {
        for (id, size) in sizes.iter().enumerate() {
            let text = char::from(b'a' + id as u8).to_string().repeat(*size);
            db.note().insert(Note {
                id: id as u32,
                text,
            });
        }
    });
    let read = module.read(|db| db.note().iter().collect::<Vec<_>>());
    assert_eq!(read.len(), sizes.len());
    for (id, (note, size)) in read.iter().zip(sizes).enumerate() {
        assert_eq!(note.id, id as u32);
        assert_eq!(note.text.len(), size, "row {id}");
        assert!(note.text.bytes().all(|b| b == b'a' + id as u8), "row {id}");
    }
}

#[test]
fn an_iterator_dropped_before_its_end_gives_its_handle_back() {
    let module = TestModule::<store::Module>::new();
    // Three rows of 40 KiB: the first buffer (64 KiB) takes one, so the host's iterator is
    // still open when the first row is read.
    module.write(|db| {
        for id in 0..3 {
            let text = "n".repeat(40 << 10);
            db.note().insert(Note { id, text });
        }
    });
    // More scans in one call than a call may hold open (the host's default is 1,024 live
    // handles): each must have been closed when its iterator was dropped.
    let firsts = module.read(|db| (0..1100).filter_map(|_| db.note().iter().next()).count());
    assert_eq!(firsts, 1100);
}

#[test]
fn an_exhausted_sequence_is_an_error_that_names_the_table() {
    let module = TestModule::<store::Module>::new();
    module.write(|db| {
        let mut last = None;
        let error = loop {
            match db.ticket().try_insert(Ticket {
                id: 0,
                holder: "someone".into(),
            }) {
                Ok(ticket) => last = Some(ticket.id),
                Err(error) => break error,
            }
        };
        assert_eq!(error, InsertError::SequenceExhausted { table: "ticket" });
        assert_eq!(
            error.to_string(),
            "table `ticket`: an auto-increment sequence is exhausted"
        );
        assert_eq!(
            last,
            Some(u8::MAX),
            "every value of the sequence was handed out"
        );
        assert_eq!(db.ticket().count(), 255);
    });
}

#[test]
fn insert_and_update_errors_read_as_what_went_wrong() {
    let module = TestModule::<store::Module>::new();
    module.write(|db| {
        db.note().insert(Note {
            id: 1,
            text: "first".into(),
        });
        let clash = db.note().try_insert(Note {
            id: 1,
            text: "second".into(),
        });
        let clash = clash.expect_err("the key is taken");
        assert_eq!(clash, InsertError::UniqueViolation { table: "note" });
        assert_eq!(
            clash.to_string(),
            "table `note`: another row has the same unique key"
        );
        let missing = db.note().id().try_update(Note {
            id: 2,
            text: "nobody".into(),
        });
        let missing = missing.expect_err("no row 2");
        assert_eq!(missing, InsertError::NoSuchRow { table: "note" });
        assert_eq!(missing.to_string(), "table `note`: no row has this key");
        let source: &dyn std::error::Error = &missing;
        assert!(source.source().is_none());
    });
}
