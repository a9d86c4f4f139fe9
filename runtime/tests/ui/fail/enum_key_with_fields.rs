#![allow(unused)]

// Only enums without fields are index keys: an enum with a payload, indexed, cannot be
// scanned by value or by range, and the error says which types are keys.

#[wasmod::module]
mod app {
    use wasmod::prelude::*;

    #[derive(SchemaType, Clone, Copy)]
    pub enum Kind {
        Checking,
        Savings { rate: u8 },
    }

    #[table]
    pub struct Account {
        #[primary_key]
        id: u64,
        #[index(btree)]
        kind: Kind,
    }

    #[reducer]
    fn checking(ctx: &ReducerContext) {
        let _ = ctx.db.account().kind().filter(Kind::Checking).count();
        let _ = ctx.db.account().kind().filter(Kind::Checking..).count();
    }
}

fn main() {}
