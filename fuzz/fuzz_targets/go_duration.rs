//! Fuzz target `go_duration`: [`fuzz_entries::go_duration`] on arbitrary bytes (corpus in `fuzz/corpus/go_duration/`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| fuzz_entries::go_duration(data));
