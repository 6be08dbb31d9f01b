//! Fuzz target `overrides`: [`shared::fuzzing::overrides`] on arbitrary bytes (corpus in `fuzz/corpus/overrides/`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| shared::fuzzing::overrides(data));
