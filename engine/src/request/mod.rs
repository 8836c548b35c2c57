//! Requests: what a user sent, and everything that happened to it.

pub mod content;

pub use content::{BlockHash, PromptContent, Segment, Source};
pub mod lifecycle;
pub mod sources;
pub mod timeline;

pub use lifecycle::{FailReason, Request, RequestState};
pub use sources::TokenSources;
pub use timeline::Timestamps;
