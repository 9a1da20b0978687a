//! Prompt text built to a trace's lengths, block by block, and the prefix reuse a trace implies.
//!
//! A prompt is its blocks' texts one after another. A block's text depends only on its key
//! (a Mooncake hash id, or the row's own key for text no other request shares), the plan's
//! seed and its length, so blocks that share a hash id share their text exactly, and a shorter
//! block (a prompt's last) is the start of the longer one. Its first 8 words spell the key,
//! mixed with the seed, one byte a word: blocks of 8 tokens or more with different keys differ
//! within their first 8 tokens, and so within a prefix cache's first block (16 tokens on vLLM
//! and the reference endpoint). The rest are words drawn from a generator seeded by the same.
//!
//! **Token counts.** Every word is a space and 1 to 4 lower-case ASCII letters, common English
//! words that BPE tokenizers usually hold as one token. The reference endpoint's tokenizer
//! (`crates/ttft-server/src/sim/text.rs` `tokenize`) counts a space followed by up to 4 ASCII
//! letters as exactly one token, so a block of `n` tokens is `n` words and a prompt has exactly
//! its trace's input length there (checked by `crates/ttft-server/tests/trace_prompts.rs`,
//! which uses both crates; the core must not depend on the server). Other tokenizers split
//! some words in two or join none: read the prompt tokens a server reports.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use super::TraceRow;

/// Tokens in a Mooncake prefix block (its README and the FAST'25 traces: `hash_ids` has one id
/// for every 512 tokens of the prompt, the last block holding the rest).
pub const BLOCK_TOKENS: u32 = 512;

/// What a block's text is keyed by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum BlockKey {
    /// A trace's hash id: every block with this id has the same text.
    Shared(u64),
    /// A row's own text (its index in the trace): the prompt of a format without hash ids, or
    /// the part of a Mooncake prompt its hash ids do not cover.
    Own(u64),
}

/// A block of a prompt: its key and its length in tokens.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct PromptBlock {
    /// Whose text.
    pub key: BlockKey,
    /// Its length in tokens (words).
    pub tokens: u32,
}

/// 256 common English words of 1 to 4 letters: a word is a byte.
const WORDS: [&str; 256] = [
    "the", "of", "and", "to", "in", "is", "for", "on", "that", "by", "this", "with", "you", "it",
    "not", "or", "be", "are", "from", "at", "as", "your", "all", "have", "new", "more", "an",
    "was", "we", "will", "can", "us", "if", "my", "has", "but", "our", "one", "do", "no", "they",
    "he", "up", "may", "what", "out", "use", "any", "see", "only", "so", "his", "when", "here",
    "who", "web", "also", "now", "help", "get", "view", "am", "been", "how", "were", "me", "some",
    "its", "like", "than", "find", "date", "back", "top", "had", "list", "name", "just", "over",
    "year", "day", "into", "two", "time", "best", "then", "way", "each", "want", "well", "set",
    "used", "make", "made", "work", "read", "need", "did", "many", "user", "last", "most", "good",
    "home", "info", "long", "late", "part", "both", "show", "high", "keep", "off", "form", "open",
    "why", "give", "care", "hold", "plan", "left", "rest", "real", "test", "lead", "mean", "move",
    "fill", "team", "game", "run", "line", "free", "data", "book", "case", "look", "take", "note",
    "land", "road", "city", "town", "side", "near", "far", "less", "kind", "end", "act", "art",
    "age", "air", "arm", "ask", "bad", "bag", "bed", "big", "bit", "box", "boy", "buy", "car",
    "cat", "cup", "cut", "dog", "dry", "due", "ear", "eat", "egg", "eye", "fan", "fat", "few",
    "fit", "fix", "fly", "fun", "gas", "goal", "gold", "hat", "hot", "ice", "job", "joy", "key",
    "kid", "law", "lay", "leg", "lie", "lot", "low", "man", "map", "mix", "net", "nor", "oil",
    "old", "own", "pay", "pen", "per", "put", "raw", "red", "row", "sad", "sea", "sit", "six",
    "sky", "son", "sun", "tax", "ten", "tie", "toe", "try", "hope", "win", "yes", "yet", "able",
    "area", "away", "baby", "bank", "base", "bill", "blue", "body", "bone", "busy", "call", "calm",
    "card", "cell", "chip", "club", "cold", "cook", "cool", "copy", "core", "cost", "dark", "deal",
    "deep", "door", "down",
];

/// SplitMix64's finaliser: a bijection of `u64`, so distinct keys stay distinct.
fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The 64 bits a block's text spells: for one seed and kind, distinct keys give distinct codes.
fn code(key: BlockKey, seed: u64) -> u64 {
    let (k, kind) = match key {
        BlockKey::Shared(k) => (k, 0x5348_4152_4544_0001),
        BlockKey::Own(k) => (k, 0x4F57_4E00_0000_0002),
    };
    mix(k ^ mix(seed ^ kind))
}

/// Appends `block`'s text: `tokens` words, each with its leading space.
pub(super) fn push_block(out: &mut String, block: PromptBlock, seed: u64) {
    let code = code(block.key, seed);
    let mut rng = fastrand::Rng::with_seed(code);
    for i in 0..block.tokens {
        let byte = if i < 8 {
            (code >> (8 * i)) as u8
        } else {
            rng.u8(..)
        };
        out.push(' ');
        out.push_str(WORDS[usize::from(byte)]);
    }
}

/// A row's prompt as blocks of `input_tokens` in all (its length, at least 1): one
/// [`BLOCK_TOKENS`] block a hash id, the last shorter, then its own text for what the ids do
/// not cover. Also whether it lists ids past its length (ignored).
pub(super) fn blocks(row: &TraceRow, index: usize, input_tokens: u32) -> (Vec<PromptBlock>, bool) {
    let mut left = input_tokens;
    let mut out = Vec::with_capacity(row.hash_ids.len() + 1);
    for id in &row.hash_ids {
        if left == 0 {
            return (out, true);
        }
        let tokens = left.min(BLOCK_TOKENS);
        out.push(PromptBlock {
            key: BlockKey::Shared(*id),
            tokens,
        });
        left -= tokens;
    }
    if left > 0 {
        out.push(PromptBlock {
            key: BlockKey::Own(index as u64),
            tokens: left,
        });
    }
    (out, false)
}

/// How much of a plan's prompt tokens a prefix cache could serve.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PrefixReuse {
    /// Prompt tokens of every request.
    pub prompt_tokens: u64,
    /// Of them, those at the start of a prompt that an earlier prompt also started with.
    pub reused_tokens: u64,
}

impl PrefixReuse {
    /// `reused_tokens / prompt_tokens`; `None` without prompt tokens.
    pub fn share(&self) -> Option<f64> {
        (self.prompt_tokens > 0).then(|| self.reused_tokens as f64 / self.prompt_tokens as f64)
    }
}

/// The expected prefix-cache hit rate of requests sent in this order: the share of their prompt
/// tokens at the start of a prompt that an earlier one also started with (its longest common
/// prefix with any earlier prompt, counted in blocks that share a hash id: where a shorter
/// block was seen, its length), for an e2e test to compare with the cached tokens a server
/// reports.
///
/// It is a property of the plan, not an estimate, so it has no interval. It assumes an
/// **unbounded cache** that remembers every prompt from its arrival (the reference endpoint's
/// holds the 256 latest prompts; a real server evicts under memory pressure, so it hits at most
/// this). A server also differs by a few tokens a request: it caches in whole blocks of its own
/// (16 tokens on vLLM and the reference endpoint; the 512-token blocks align with them) and
/// always computes a prompt's last token, so a prompt repeated whole hits one block less; and
/// its reported prompt tokens include the chat template's (4 for a one-message prompt on the
/// reference endpoint: a newline and 3 a message), which this does not count.
pub fn prefix_reuse<'a>(jobs: impl IntoIterator<Item = &'a super::TraceJob>) -> PrefixReuse {
    // A trie of the blocks sent so far: (parent node, key) → (node, longest length seen).
    let mut nodes: HashMap<(u32, BlockKey), (u32, u32)> = HashMap::new();
    let mut reuse = PrefixReuse::default();
    for job in jobs {
        let mut parent = 0;
        let mut matching = true;
        for b in &job.blocks {
            reuse.prompt_tokens += u64::from(b.tokens);
            let next = nodes.len() as u32 + 1;
            let node = nodes.entry((parent, b.key)).or_insert_with(|| {
                matching = false;
                (next, b.tokens)
            });
            if matching {
                reuse.reused_tokens += u64::from(b.tokens.min(node.1));
                matching = b.tokens <= node.1;
            }
            node.1 = node.1.max(b.tokens);
            parent = node.0;
        }
    }
    reuse
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_words_are_distinct_and_one_reference_token_each() {
        let mut sorted = WORDS.to_vec();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted.len(), 256);
        assert!(
            WORDS
                .iter()
                .all(|w| (1..=4).contains(&w.len()) && w.bytes().all(|b| b.is_ascii_lowercase()))
        );
    }
}
