//! `#[default(expr)]` on a table's columns: the description carries each default encoded as
//! its column's type, whatever form the expression takes; columns without one have none.

use wasmod::abi::encoding::to_vec;
use wasmod_testing::TestModule;

#[wasmod::module]
mod shop {
    use wasmod::prelude::*;

    /// The default of `currency`, as a constant.
    pub const HOME: &str = "EUR";

    /// Stock levels, of a shape only the test reads.
    #[derive(SchemaType, Clone, Debug, PartialEq)]
    pub struct Shelf {
        pub aisle: u8,
        pub tags: Vec<String>,
    }

    /// An item, its later columns each with a default of another form.
    #[table]
    pub struct Item {
        #[primary_key]
        pub sku: String,
        pub price: u64,
        #[default(3)]
        pub stock: u32,
        #[default(HOME.into())]
        pub currency: String,
        #[default(Some(-1))]
        pub discount: Option<i16>,
        #[default(Shelf { aisle: 2, tags: vec![String::from("new")] })]
        pub shelf: Shelf,
        #[default(u64::MAX / 2)]
        pub limit: u64,
    }
}

#[test]
fn every_default_is_encoded_as_its_column_s_type() {
    let module = TestModule::<shop::Module>::new();
    let item = &module.description().tables[0];
    let defaults: Vec<(&str, Option<Vec<u8>>)> = item
        .columns
        .iter()
        .map(|column| (column.name.as_str(), column.default.clone()))
        .collect();
    let shelf = shop::Shelf {
        aisle: 2,
        tags: vec!["new".into()],
    };
    assert_eq!(
        defaults,
        [
            ("sku", None),
            ("price", None),
            ("stock", Some(to_vec(&3u32))),
            ("currency", Some(to_vec(&"EUR".to_owned()))),
            ("discount", Some(to_vec(&Some(-1i16)))),
            ("shelf", Some(to_vec(&shelf))),
            ("limit", Some(to_vec(&(u64::MAX / 2)))),
        ]
    );
}
