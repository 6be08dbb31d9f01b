//! Fuzz target `image_reference`: [`fuzz_entries::image_reference`] on arbitrary bytes (corpus in `fuzz/corpus/image_reference/`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| fuzz_entries::image_reference(data));
