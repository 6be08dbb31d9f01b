//! placeholder

pub mod node;
