//! Fuzz target `quantity`: [`shared::fuzzing::quantity`] on arbitrary bytes (corpus in `fuzz/corpus/quantity/`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| shared::fuzzing::quantity(data));
