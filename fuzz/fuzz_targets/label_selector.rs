//! Fuzz target `label_selector`: [`shared::fuzzing::label_selector`] on arbitrary bytes (corpus in `fuzz/corpus/label_selector/`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| shared::fuzzing::label_selector(data));
