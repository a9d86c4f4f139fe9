//! The `wasmod` command (being written).

fn main() {}
