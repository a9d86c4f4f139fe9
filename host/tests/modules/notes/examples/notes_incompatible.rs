//! A build of the notes module whose notes lost their `text`: its tables cannot take the
//! stored data, so a server must refuse it and go on serving the build it has.

use wasmod::prelude::*;

/// The module, with a stored column removed.
#[wasmod::module]
pub mod notes {
    use super::*;

    /// A note, without its text.
    #[table(public)]
    pub struct Note {
        /// Given by the table.
        #[primary_key]
        #[auto_inc]
        pub id: u64,
    }

    /// A tag: the same in every build.
    #[table(public)]
    pub struct Tag {
        /// The tag.
        #[primary_key]
        pub name: String,
    }

    /// Adds the tag `name`.
    #[reducer]
    fn add_tag(ctx: &ReducerContext, name: String) {
        ctx.db.tag().insert(Tag { name });
    }
}
