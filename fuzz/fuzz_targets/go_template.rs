//! Fuzz target `go_template`: [`cli::fuzzing::go_template`] on arbitrary bytes (corpus in `fuzz/corpus/go_template/`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| cli::fuzzing::go_template(data));
