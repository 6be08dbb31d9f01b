//! Fuzz target `manifest`: [`fuzz_entries::manifest`] on arbitrary bytes (corpus in `fuzz/corpus/manifest/`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| fuzz_entries::manifest(data));
