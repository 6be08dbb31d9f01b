//! Fuzz target `label_selector`: [`cli::fuzzing::label_selector`] on arbitrary bytes (corpus in `fuzz/corpus/label_selector/`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| cli::fuzzing::label_selector(data));
