//! Build 1 of the notes module, for the tests of `wasmod publish`: notes, tags, and an HTTP
//! handler that says which build answers. The examples are later builds of the same module.

use wasmod::prelude::*;

/// The module: notes and tags, written by reducers.
#[wasmod::module]
pub mod notes {
    use super::*;

    /// A note.
    #[table(public)]
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

    /// Deletes note `id` (build 2 has no such reducer).
    #[reducer]
    fn forget(ctx: &ReducerContext, id: u64) {
        ctx.db.note().id().delete(id);
    }

    /// Which build answers: `1`.
    #[http_handler(GET, "/build")]
    fn build(_ctx: &mut HttpContext, _request: Request) -> Response {
        Response::new(200).with_body("1")
    }
}
