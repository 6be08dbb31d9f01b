//! Fuzz target `go_duration`: [`cli::fuzzing::go_duration`] on arbitrary bytes (corpus in `fuzz/corpus/go_duration/`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| cli::fuzzing::go_duration(data));
