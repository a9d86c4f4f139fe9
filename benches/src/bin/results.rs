//! Prints the tables of `benches/RESULTS.md` from the last `cargo bench -p wasmod-benches`
//! (criterion's saved estimates and the encoding bench's allocation counts).

fn main() {
    print!("{}", wasmod_benches::results::render());
}
