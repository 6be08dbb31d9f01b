//! Fuzz target `jsonpath`: [`cli::fuzzing::jsonpath`] on arbitrary bytes (corpus in `fuzz/corpus/jsonpath/`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| cli::fuzzing::jsonpath(data));
