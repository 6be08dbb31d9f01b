//! Fuzz target `manifest`: [`cli::fuzzing::manifest`] on arbitrary bytes (corpus in `fuzz/corpus/manifest/`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| cli::fuzzing::manifest(data));
