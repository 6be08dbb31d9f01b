//! Fuzz target `image_reference`: [`cli::fuzzing::image_reference`] on arbitrary bytes (corpus in `fuzz/corpus/image_reference/`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| cli::fuzzing::image_reference(data));
