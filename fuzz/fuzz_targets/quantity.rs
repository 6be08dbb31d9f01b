//! Fuzz target `quantity`: [`cli::fuzzing::quantity`] on arbitrary bytes (corpus in `fuzz/corpus/quantity/`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| cli::fuzzing::quantity(data));
