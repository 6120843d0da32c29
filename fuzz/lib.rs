//! The fuzz harness (`harness.rs`), shared with the regression test in
//! `crates/forgestream-core/tests/fault_props.rs`.
#[path = "harness.rs"]
mod harness;
pub use harness::{reduce, resume, sse};
