//! What a type's `#[repr]` says about its layout.

/// Layout facts read from `#[repr(..)]`.
#[derive(Clone, Copy, Default)]
pub struct Repr {
    /// `repr(C)` or `repr(transparent)`: fields lie in declaration order.
    pub ordered: bool,
    /// `repr(packed)`: fields may be unaligned, so they are read by copy, never by reference.
    pub packed: bool,
}

impl Repr {
    /// Reads every `#[repr]` among `attrs`. Unknown hints are ignored: rustc checks them.
    pub fn from_attrs(attrs: &[syn::Attribute]) -> Self {
        let mut repr = Self::default();
        for attr in attrs.iter().filter(|attr| attr.path().is_ident("repr")) {
            let _ = attr.parse_nested_meta(|meta| {
                if meta.path.is_ident("C") || meta.path.is_ident("transparent") {
                    repr.ordered = true;
                } else if meta.path.is_ident("packed") {
                    repr.packed = true;
                }
                if meta.input.peek(syn::token::Paren) {
                    let _content;
                    syn::parenthesized!(_content in meta.input);
                }
                Ok(())
            });
        }
        repr
    }
}
