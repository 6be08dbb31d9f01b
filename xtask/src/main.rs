//! `cargo xtask`: the project's automation. See `cargo xtask --help`.
fn main() {}
