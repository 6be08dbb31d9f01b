//! Fuzz target `jsonpath`: [`fuzz_entries::jsonpath`] on arbitrary bytes (corpus in `fuzz/corpus/jsonpath/`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| fuzz_entries::jsonpath(data));
