//! The scheduler model: CFS runqueues (`fair`), weights, and the core entry
//! points (`core`) the engine calls.

pub mod balance;
pub mod core;
pub mod fair;
pub mod wakeup;
pub mod weights;
