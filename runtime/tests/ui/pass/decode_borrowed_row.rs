//! A module's row type and its borrowing twin: the twin reads the row's encoding in place.

use wasmod::abi::encoding::{from_slice_borrowed, to_vec};
use wasmod::{DecodeBorrowed, Identity, SchemaType};

#[derive(SchemaType, Debug, PartialEq)]
pub struct Message {
    id: u64,
    sender: Identity,
    text: String,
}

#[derive(DecodeBorrowed, Debug, PartialEq)]
pub struct MessageRef<'a> {
    id: u64,
    sender: Identity,
    text: &'a str,
}

fn main() {
    let sender = Identity::from_bytes([7; 32]);
    let row = to_vec(&Message {
        id: 3,
        sender,
        text: "hello".into(),
    });
    let borrowed: MessageRef<'_> = from_slice_borrowed(&row).expect("the row decodes");
    assert_eq!(
        borrowed,
        MessageRef {
            id: 3,
            sender,
            text: "hello",
        }
    );
    assert!(row.as_ptr_range().contains(&borrowed.text.as_ptr()));
}
