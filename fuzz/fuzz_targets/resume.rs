#![no_main]
//! `cargo fuzz run resume`: see `fuzz/harness.rs` for the invariants.
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| forgestream_fuzz::resume(data));
