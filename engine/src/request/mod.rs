//! Requests: what a user sent, and everything that happened to it.

pub mod content;

pub use content::{BlockHash, PromptContent, Segment, Source};
