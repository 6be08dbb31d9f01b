//! Fuzz target `overrides`: [`fuzz_entries::overrides`] on arbitrary bytes (corpus in `fuzz/corpus/overrides/`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| fuzz_entries::overrides(data));
