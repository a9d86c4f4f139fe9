//! A build of the notes module whose notes have a visibility filter: clients see the notes
//! whose text is not `hidden`. Its tables store rows as build 1's, so a client's query set
//! over notes is ended at the swap (another visibility filter) but can be subscribed again
//! with build 1's row types.

use wasmod::prelude::*;

/// The module, with a visibility filter on notes.
#[wasmod::module]
pub mod notes {
    use super::*;

    /// A note, seen unless its text is `hidden`.
    #[table(public, visibility = "text != 'hidden'")]
    pub struct Note {
        /// Given by the table.
        #[primary_key]
        #[auto_inc]
        pub id: u64,
        /// What it says.
        pub text: String,
    }

    /// A tag: the same in every build.
    #[table(public)]
    pub struct Tag {
        /// The tag.
        #[primary_key]
        pub name: String,
    }

    /// Adds a note saying `text`.
    #[reducer]
    fn add_note(ctx: &ReducerContext, text: String) {
        ctx.db.note().insert(Note { id: 0, text });
    }

    /// Adds the tag `name`.
    #[reducer]
    fn add_tag(ctx: &ReducerContext, name: String) {
        ctx.db.tag().insert(Tag { name });
    }

    /// Makes note `id` say `text`.
    #[reducer]
    fn rename(ctx: &ReducerContext, id: u64, text: String) -> Result<(), String> {
        let mut note = ctx.db.note().id().find(id).ok_or("no such note")?;
        note.text = text;
        ctx.db.note().id().update(note);
        Ok(())
    }

    /// Deletes note `id`.
    #[reducer]
    fn forget(ctx: &ReducerContext, id: u64) {
        ctx.db.note().id().delete(id);
    }

    /// Which build answers: `filtered`.
    #[http_handler(GET, "/build")]
    fn build(_ctx: &mut HttpContext, _request: Request) -> Response {
        Response::new(200).with_body("filtered")
    }
}
