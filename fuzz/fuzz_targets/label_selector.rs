//! Fuzz target `label_selector`: [`fuzz_entries::label_selector`] on arbitrary bytes (corpus in `fuzz/corpus/label_selector/`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| fuzz_entries::label_selector(data));
