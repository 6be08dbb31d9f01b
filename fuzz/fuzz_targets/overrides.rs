//! Fuzz target `overrides`: [`cli::fuzzing::overrides`] on arbitrary bytes (corpus in `fuzz/corpus/overrides/`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| cli::fuzzing::overrides(data));
