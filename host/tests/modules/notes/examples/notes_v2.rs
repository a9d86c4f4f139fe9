//! Build 2 of the notes module: notes gain `stars` (default 0) and the `star` reducer,
//! `rename` takes who renamed, `forget` is gone, and the HTTP handler answers `2`. Its tables can take build 1's
//! data.

use wasmod::prelude::*;

/// The module, build 2.
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
        /// Stars given; stored notes of build 1 get 0.
        #[default(0)]
        pub stars: u32,
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
        ctx.db.note().insert(Note {
            id: 0,
            text,
            stars: 0,
        });
    }

    /// Adds the tag `name`.
    #[reducer]
    fn add_tag(ctx: &ReducerContext, name: String) {
        ctx.db.tag().insert(Tag { name });
    }

    /// Makes note `id` say `text`, signed `by`.
    #[reducer]
    fn rename(ctx: &ReducerContext, id: u64, text: String, by: String) -> Result<(), String> {
        let mut note = ctx.db.note().id().find(id).ok_or("no such note")?;
        note.text = format!("{text} ({by})");
        ctx.db.note().id().update(note);
        Ok(())
    }

    /// Gives note `id` a star.
    #[reducer]
    fn star(ctx: &ReducerContext, id: u64) -> Result<(), String> {
        let mut note = ctx.db.note().id().find(id).ok_or("no such note")?;
        note.stars += 1;
        ctx.db.note().id().update(note);
        Ok(())
    }

    /// Which build answers: `2`.
    #[http_handler(GET, "/build")]
    fn build(_ctx: &mut HttpContext, _request: Request) -> Response {
        Response::new(200).with_body("2")
    }
}
