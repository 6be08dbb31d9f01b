//! Fuzz target `image_reference`: [`shared::fuzzing::image_reference`] on arbitrary bytes (corpus in `fuzz/corpus/image_reference/`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| shared::fuzzing::image_reference(data));
