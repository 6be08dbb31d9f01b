//! Fuzz target `quantity`: [`fuzz_entries::quantity`] on arbitrary bytes (corpus in `fuzz/corpus/quantity/`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| fuzz_entries::quantity(data));
