//! Fuzz target `go_template`: [`fuzz_entries::go_template`] on arbitrary bytes (corpus in `fuzz/corpus/go_template/`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| fuzz_entries::go_template(data));
