//! A prefix cache with a hit model, as vLLM's automatic prefix caching and SGLang's radix cache
//! behave from the outside: the KV of recent prompts is kept in whole blocks, and a prompt that
//! starts like one of them prefills only what follows the longest common prefix.
//!
//! The model, kept simple enough to reason about in tests:
//! - the cache remembers the token sequences of the latest [`PrefixCache::capacity`] prompts,
//!   least recently used first out (a prompt that extends a remembered one replaces it);
//! - a prompt's cached length is its longest common prefix with any remembered prompt, rounded
//!   down to whole blocks of [`PrefixCache::block`] tokens, and never the whole prompt: the
//!   last token is always computed (its logits start the answer), as on vLLM;
//! - a prompt is remembered when it is admitted, not when its prefill ends, so two identical
//!   prompts sent at once both hit after the first (real servers share the blocks being
//!   computed the same way, or compute them twice);
//! - only prompts are remembered, not the tokens generated after them.

use std::collections::VecDeque;
use std::hash::{DefaultHasher, Hash, Hasher};

/// Tokens per cache block (vLLM's default block size).
pub const BLOCK_TOKENS: usize = 16;
/// Prompts remembered.
pub const CAPACITY: usize = 256;

/// The cache of one model.
#[derive(Debug, Clone)]
pub struct PrefixCache {
    block: usize,
    capacity: usize,
    /// Remembered prompts as token ids, most recently used last.
    entries: VecDeque<Vec<u64>>,
}

impl Default for PrefixCache {
    fn default() -> Self {
        Self::new(BLOCK_TOKENS, CAPACITY)
    }
}

/// A token's id for prefix comparison (equal tokens, equal ids).
pub fn token_id(token: &str) -> u64 {
    let mut h = DefaultHasher::new();
    token.hash(&mut h);
    h.finish()
}

fn common_prefix(a: &[u64], b: &[u64]) -> usize {
    a.iter().zip(b).take_while(|(x, y)| x == y).count()
}

impl PrefixCache {
    /// An empty cache with blocks of `block` tokens (at least 1) remembering `capacity` prompts
    /// (at least 1).
    pub fn new(block: usize, capacity: usize) -> Self {
        Self {
            block: block.max(1),
            capacity: capacity.max(1),
            entries: VecDeque::new(),
        }
    }

    /// Tokens per block.
    pub fn block(&self) -> usize {
        self.block
    }

    /// Prompts it remembers at most.
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// Prompts remembered now.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether it remembers nothing.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// How many leading tokens of `prompt` the cache serves (whole blocks, never the last
    /// token), then remembers `prompt` as the most recently used.
    pub fn admit(&mut self, prompt: &[u64]) -> usize {
        let best = self
            .entries
            .iter()
            .enumerate()
            .map(|(i, e)| (i, common_prefix(e, prompt)))
            .max_by_key(|&(i, n)| (n, i));
        let shared = best.map_or(0, |(_, n)| n);
        let cached = shared.min(prompt.len().saturating_sub(1)) / self.block * self.block;
        match best {
            // A longer remembered prompt holds this one: it becomes the most recently used.
            Some((i, n)) if n == prompt.len() && self.entries[i].len() > n => {
                if let Some(e) = self.entries.remove(i) {
                    self.entries.push_back(e);
                }
            }
            _ => {
                // A remembered prompt that this one extends (or repeats) is replaced by it.
                self.entries
                    .retain(|e| !(e.len() <= prompt.len() && common_prefix(e, prompt) == e.len()));
                self.entries.push_back(prompt.to_vec());
            }
        }
        while self.entries.len() > self.capacity {
            self.entries.pop_front();
        }
        cached
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(range: std::ops::Range<u64>) -> Vec<u64> {
        range.collect()
    }

    #[test]
    fn a_cold_prompt_misses_and_a_repeat_hits_in_whole_blocks() {
        let mut c = PrefixCache::new(16, 8);
        assert_eq!(c.admit(&ids(0..100)), 0);
        // The same 100 tokens again: 99 could be served (the last is computed), 96 in blocks.
        assert_eq!(c.admit(&ids(0..100)), 96);
        assert_eq!(c.len(), 1, "a repeat is not remembered twice");
    }

    #[test]
    fn a_growing_conversation_hits_its_previous_prompt() {
        let mut c = PrefixCache::new(16, 8);
        assert_eq!(c.admit(&ids(0..40)), 0);
        // Extends the first prompt: its 40 shared tokens hold 2 whole blocks.
        assert_eq!(c.admit(&ids(0..90)), 32);
        // And the next round extends that one: 90 shared → 80.
        assert_eq!(c.admit(&ids(0..130)), 80);
        assert_eq!(c.len(), 1, "each round replaces the prompt it extends");
    }

    #[test]
    fn a_prompt_that_diverges_hits_only_the_common_blocks() {
        let mut c = PrefixCache::new(16, 8);
        c.admit(&ids(0..64));
        let mut other = ids(0..40);
        other.extend(1000..1030);
        assert_eq!(c.admit(&other), 32);
        assert_eq!(c.len(), 2);
        let fresh: Vec<u64> = (5000..5100).collect();
        assert_eq!(c.admit(&fresh), 0);
    }

    #[test]
    fn a_prompt_inside_a_longer_one_hits_and_keeps_the_longer() {
        let mut c = PrefixCache::new(16, 8);
        c.admit(&ids(0..100));
        // 50 shared, 49 servable (the last token is computed): 3 whole blocks.
        assert_eq!(c.admit(&ids(0..50)), 48);
        assert_eq!(c.len(), 1);
        assert_eq!(
            c.admit(&ids(0..100)),
            96,
            "the longer prompt is still there"
        );
    }

    #[test]
    fn the_least_recently_used_prompt_goes_first() {
        let mut c = PrefixCache::new(1, 2);
        c.admit(&[1, 2, 3]);
        c.admit(&[4, 5, 6]);
        c.admit(&[7, 8, 9]); // evicts [1, 2, 3]
        assert_eq!(c.admit(&[1, 2, 3, 0]), 0);
        assert_eq!(c.admit(&[7, 8, 9, 0]), 3);
    }
}
