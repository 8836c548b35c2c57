//! Prompt content as a short list of segments, and the chained block hashes derived from it.
//!
//! A prompt is never stored token by token: it is "system prompt #3, then
//! document #17, then 240 tokens nobody else has". Two prompts share a KV
//! prefix exactly when their segment lists agree up to that point, which is
//! what the chained block hashes capture: block *i*'s hash mixes block
//! *i − 1*'s hash with a description of the tokens in block *i*.

use crate::rng::splitmix64;
use serde::{Deserialize, Serialize};

/// Where a run of prompt tokens comes from. Equal sources mean equal tokens.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Source {
    /// The shared system prompt of prefix group `g`.
    SystemPrompt(u32),
    /// Document `d` of a RAG corpus.
    Document(u32),
    /// The user input of turn `turn` of session `session`.
    Turn {
        /// Session id.
        session: u32,
        /// Turn index within the session.
        turn: u32,
    },
    /// The model's reply to turn `turn` of session `session` (part of later turns' prompts).
    Reply {
        /// Session id.
        session: u32,
        /// Turn index within the session.
        turn: u32,
    },
    /// A block of a replayed trace, identified by its `hash_ids` entry.
    TraceBlock(u64),
    /// Tokens no other prompt has (keyed by the request id; no other request's prompt may
    /// contain this source).
    Unique(u64),
    /// The tokens request `id` generates when no later prompt quotes them (keyed by the
    /// request id, like [`Source::Unique`]).
    Output(u64),
    /// Prompt `prompt` of a stage's fixed prompt pool (`pool` is the stage index): every
    /// request that sends it sends these tokens.
    Pooled {
        /// The stage whose pool it is.
        pool: u32,
        /// The prompt's index in the pool.
        prompt: u32,
    },
    /// The one token sequence 0, 1, 2, … that every prompt of the original Opal's
    /// synthetic generator is a prefix of (`opal_compat.shared_prompt_ids`).
    OpalIds,
}

impl Source {
    /// A fixed 64-bit key for this source (never `RandomState`, so hashes are the same everywhere).
    fn key(self) -> u64 {
        let (tag, a, b) = match self {
            Source::SystemPrompt(g) => (1u64, g as u64, 0u64),
            Source::Document(d) => (2, d as u64, 0),
            Source::Turn { session, turn } => (3, session as u64, turn as u64),
            Source::Reply { session, turn } => (4, session as u64, turn as u64),
            Source::TraceBlock(h) => (5, h, 0),
            Source::Unique(id) => (6, id, 0),
            Source::Output(id) => (7, id, 0),
            Source::Pooled { pool, prompt } => (8, pool as u64, prompt as u64),
            Source::OpalIds => (9, 0, 0),
        };
        splitmix64(splitmix64(tag ^ splitmix64(a)) ^ b)
    }
}

/// A run of `len` tokens from one source.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Segment {
    /// Where the tokens come from.
    pub source: Source,
    /// How many tokens.
    pub len: u32,
}

/// The hash of a full KV block (or offload chunk), chained over all blocks before it.
pub type BlockHash = u64;

/// A prompt's content: segments in order.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PromptContent {
    segments: Vec<Segment>,
    len: u32,
}

impl PromptContent {
    /// An empty prompt.
    pub fn new() -> Self {
        Self::default()
    }

    /// Appends `len` tokens from `source` (zero-length runs are dropped).
    pub fn push(&mut self, source: Source, len: u32) -> &mut Self {
        if len > 0 {
            self.segments.push(Segment { source, len });
            // Saturating: an absurd total is then rejected as too long, never wrapped.
            self.len = self.len.saturating_add(len);
        }
        self
    }

    /// Builder form of [`PromptContent::push`].
    pub fn with(mut self, source: Source, len: u32) -> Self {
        self.push(source, len);
        self
    }

    /// Total prompt length in tokens.
    pub fn len(&self) -> u32 {
        self.len
    }

    /// True for an empty prompt.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Tokens before the first [`Source::Unique`] run: the part of the prompt another
    /// request can share. Blocks past it can only ever match this same prompt.
    pub fn shareable_len(&self) -> u32 {
        let mut len = 0;
        for s in &self.segments {
            if matches!(s.source, Source::Unique(_)) {
                break;
            }
            len = s.len.saturating_add(len);
        }
        len
    }

    /// The segments, in order.
    pub fn segments(&self) -> &[Segment] {
        &self.segments
    }

    /// Hashes of the full blocks of `block_size` tokens, in order (a partial last block has none).
    pub fn block_hashes(&self, block_size: u32) -> BlockHashes<'_> {
        self.sequence_hashes(block_size, Segment::EMPTY, 0, 0)
    }

    /// Hashes of the full blocks of the sequence *prompt, then `output`* (the tokens a
    /// request generated so far), from block `from_block` on; `prev` is the hash of block
    /// `from_block − 1` (ignored for block 0). vLLM hashes generated tokens the same way,
    /// so a later prompt that quotes the reply hits the blocks that hold it.
    pub fn sequence_hashes(
        &self,
        block_size: u32,
        output: Segment,
        from_block: u32,
        prev: BlockHash,
    ) -> BlockHashes<'_> {
        let bs = block_size.max(1);
        let total = self.len.saturating_add(output.len);
        let mut it = BlockHashes {
            segments: &self.segments,
            tail: output,
            block_size: bs,
            seg: 0,
            offset: 0,
            remaining_full: (total / bs).saturating_sub(from_block),
            prev: if from_block == 0 { 0 } else { prev },
        };
        // Walk to the first token of `from_block` (O(segments)).
        let mut skip = from_block.saturating_mul(bs).min(total);
        while skip > 0 {
            let left = it.segment(it.seg).len - it.offset;
            if skip < left {
                it.offset += skip;
                break;
            }
            skip -= left;
            it.seg += 1;
            it.offset = 0;
        }
        it
    }
}

impl Segment {
    /// No tokens.
    pub const EMPTY: Segment = Segment {
        source: Source::Unique(0),
        len: 0,
    };
}

/// Iterator over a sequence's chained block hashes; computes each in O(segments it touches).
#[derive(Debug, Clone)]
pub struct BlockHashes<'a> {
    segments: &'a [Segment],
    /// Generated tokens after the prompt (length 0: none).
    tail: Segment,
    block_size: u32,
    seg: usize,
    offset: u32,
    remaining_full: u32,
    prev: BlockHash,
}

impl BlockHashes<'_> {
    /// Segment `i` of prompt-then-output.
    fn segment(&self, i: usize) -> Segment {
        self.segments.get(i).copied().unwrap_or(self.tail)
    }
}

impl Iterator for BlockHashes<'_> {
    type Item = BlockHash;

    fn next(&mut self) -> Option<BlockHash> {
        if self.remaining_full == 0 {
            return None;
        }
        self.remaining_full -= 1;
        let mut h = splitmix64(self.prev ^ 0x5bd1_e995_u64.rotate_left(17));
        let mut need = self.block_size;
        while need > 0 {
            let s = self.segment(self.seg);
            let take = need.min(s.len - self.offset);
            // Each piece is (source, where in the source, how many tokens).
            h = splitmix64(h ^ s.source.key());
            h = splitmix64(h ^ ((self.offset as u64) << 32 | take as u64));
            need -= take;
            self.offset += take;
            if self.offset == s.len {
                self.seg += 1;
                self.offset = 0;
            }
        }
        self.prev = h;
        Some(h)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = self.remaining_full as usize;
        (n, Some(n))
    }
}

impl ExactSizeIterator for BlockHashes<'_> {}

#[cfg(test)]
mod tests {
    use super::*;

    fn hashes(p: &PromptContent, bs: u32) -> Vec<BlockHash> {
        p.block_hashes(bs).collect()
    }

    #[test]
    fn only_full_blocks_are_hashed() {
        let p = PromptContent::new().with(Source::Unique(1), 40);
        assert_eq!(hashes(&p, 16).len(), 2);
        assert_eq!(p.len(), 40);
    }

    #[test]
    fn shared_prefix_gives_equal_leading_hashes_then_diverges() {
        let a = PromptContent::new()
            .with(Source::SystemPrompt(3), 40)
            .with(Source::Unique(1), 64);
        let b = PromptContent::new()
            .with(Source::SystemPrompt(3), 40)
            .with(Source::Unique(2), 64);
        let (ha, hb) = (hashes(&a, 16), hashes(&b, 16));
        // Blocks 0 and 1 are pure system prompt; block 2 mixes in the unique tail.
        assert_eq!(ha[..2], hb[..2]);
        assert_ne!(ha[2], hb[2]);
        assert_ne!(ha[3], hb[3]);
    }

    #[test]
    fn hash_depends_on_everything_before_it() {
        // Same block content at the same position, but different history.
        let a = PromptContent::new()
            .with(Source::Document(1), 16)
            .with(Source::Document(9), 16);
        let b = PromptContent::new()
            .with(Source::Document(2), 16)
            .with(Source::Document(9), 16);
        assert_ne!(hashes(&a, 16)[1], hashes(&b, 16)[1]);
    }

    #[test]
    fn segmentation_of_the_same_source_matters_only_by_content() {
        // One 32-token run of a source is not the same as two different sources.
        let a = PromptContent::new().with(Source::Document(1), 32);
        let b = PromptContent::new()
            .with(Source::Document(1), 16)
            .with(Source::Document(2), 16);
        assert_eq!(hashes(&a, 16)[0], hashes(&b, 16)[0]);
        assert_ne!(hashes(&a, 16)[1], hashes(&b, 16)[1]);
    }

    #[test]
    fn hashes_are_pinned() {
        // Fixed function: this value must never change between platforms or releases
        // (share links reproduce runs only if block identity is stable).
        let p = PromptContent::new().with(Source::SystemPrompt(0), 16);
        assert_eq!(hashes(&p, 16)[0], 15_229_853_385_299_330_041);
    }

    #[test]
    fn a_reply_hashes_like_the_prompt_that_quotes_it() {
        // Turn 0 generated 40 reply tokens; turn 1's prompt quotes them, then asks more.
        let turn0 = PromptContent::new().with(Source::SystemPrompt(1), 20).with(
            Source::Turn {
                session: 3,
                turn: 0,
            },
            30,
        );
        let reply = Segment {
            source: Source::Reply {
                session: 3,
                turn: 0,
            },
            len: 40,
        };
        let turn1 = turn0.clone().with(reply.source, reply.len).with(
            Source::Turn {
                session: 3,
                turn: 1,
            },
            25,
        );
        let generated: Vec<_> = turn0.sequence_hashes(16, reply, 0, 0).collect();
        // (50 + 40) / 16 = 5 full blocks, all equal to turn 1's first five.
        assert_eq!(generated.len(), 5);
        assert_eq!(generated[..], hashes(&turn1, 16)[..5]);
        assert_ne!(generated[4], hashes(&turn0, 16).last().copied().unwrap());
    }

    #[test]
    fn hashing_resumes_mid_sequence() {
        let p = PromptContent::new()
            .with(Source::Document(1), 10)
            .with(Source::Document(2), 37);
        let out = Segment {
            source: Source::Output(9),
            len: 30,
        };
        let all: Vec<_> = p.sequence_hashes(8, out, 0, 0).collect();
        assert_eq!(all.len(), (47 + 30) / 8);
        for k in 1..all.len() {
            let rest: Vec<_> = p.sequence_hashes(8, out, k as u32, all[k - 1]).collect();
            assert_eq!(rest[..], all[k..], "resumed at block {k}");
        }
        // Without output the sequence is the prompt.
        assert_eq!(p.block_hashes(8).collect::<Vec<_>>()[..], all[..47 / 8]);
    }

    #[test]
    fn zero_length_runs_are_dropped() {
        let mut p = PromptContent::new();
        p.push(Source::Unique(5), 0);
        assert!(p.is_empty());
        assert!(p.segments().is_empty());
    }
}
