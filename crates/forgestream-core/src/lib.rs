//! forgestream-core: the sans-IO brain of forgestream.
//!
//! `no_std` + `alloc`: no clock, no network, no storage. Bytes and time go in; views, change sets
//! and commands come out. Shape and invariants: `shared/spec/DESIGN.md`; wire: `PROTOCOL.md`.
//!
//! - [`sse`]: WHATWG `text/event-stream` push parser.
//! - [`wire`]: serde types of the TrueForge wire (events, turns, inputs, listings, errors).
//! - [`reduce`]: the session reducer (`SessionView`), delta merge, pending actions, usage.
//! - [`respond`]: builds and validates continuation input for paused turns.
//! - [`resume`]: the connection/recovery state machine (inputs in, commands out, time passed in).
//! - [`session`]: the session engine around it: restore, load, send, interrupt, respond, effect
//!   recovery, checkpoints (inputs in, effects out as data).
#![cfg_attr(not(feature = "std"), no_std)]
#![forbid(unsafe_code)]

extern crate alloc;

pub mod id;
pub mod id_map;
pub mod reduce;
pub mod respond;
pub mod resume;
pub mod session;
mod sort;
pub mod sse;
pub mod wire;
