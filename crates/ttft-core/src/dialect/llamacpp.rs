//! llama.cpp's native `/completion` (and `/infill`) stream, as its server's README documents it.
//!
//! SSE `data:` lines, each one JSON object, no `[DONE]`: while generating, only `content` (the
//! next piece of text, possibly `""` while a multi-byte character is incomplete), `tokens` (the
//! piece's token ids: populated when streaming) and `stop: false`, plus `index` (which
//! completion, with several prompts or `n_cmpl`), `id_slot`, `tokens_predicted`,
//! `tokens_evaluated`. The last line has `stop: true` with `stop_type` (`eos`, `limit`, `word`;
//! `none` while generating), `stopping_word`, `timings` (`prompt_n`, `prompt_ms`, `predicted_n`,
//! `predicted_ms`, `predicted_per_token_ms`, `cache_n`, …), `tokens_evaluated` (the prompt),
//! `tokens_cached`, `truncated` and the generation settings. With `timings_per_token` the
//! partial lines carry `timings` too; with `return_progress`, `prompt_progress`. A failure is
//! `{"error": {…}}`, recognised before this decoder runs.
//!
//! Events: text → [`StreamEvent::Content`]; the `tokens` of each line are summed per completion
//! into continuous usage (the tokens each arrival carried, so speculative decoding's several
//! tokens a line are seen); the last line → [`StreamEvent::Finish`] with its `stop_type`, then
//! the final usage from `timings` (`predicted_n`; the prompt as `prompt_n + cache_n`, cached
//! `cache_n`), else from `tokens_predicted`/`tokens_evaluated`/`tokens_cached`. `timings`
//! itself becomes [`StreamEvent::Timings`] through the decoder's llama.cpp extras. The
//! non-streamed answer (`stream: false`) is one such object with `stop: true` and the whole
//! text in `content` (read by the `whole` module with [`decode_llamacpp`]).

use std::collections::BTreeMap;

use serde_json::Value;

use super::fields::{non_empty, parse_timings};
use super::{StreamEvent, Usage};

type Events = Vec<(Option<u32>, StreamEvent)>;

/// Whether `v` is a native `/completion` result: a string `content` and a boolean `stop`.
pub(super) fn is_llamacpp(v: &Value) -> bool {
    v.get("content").is_some_and(Value::is_string) && v.get("stop").is_some_and(Value::is_boolean)
}

/// Decodes one native `/completion` line; `counted` holds the tokens seen so far per
/// completion (`index`), for the continuous usage.
pub(super) fn decode_llamacpp(v: &Value, counted: &mut BTreeMap<u32, u64>) -> Events {
    let choice = v
        .get("index")
        .and_then(Value::as_u64)
        .map(|i| u32::try_from(i).unwrap_or(u32::MAX));
    let mut out: Vec<StreamEvent> = Vec::new();
    let stop = v.get("stop").and_then(Value::as_bool) == Some(true);
    let text = non_empty(v.get("content"));
    let has_text = text.is_some();
    out.extend(text.map(StreamEvent::Content));
    let new_tokens = v
        .get("tokens")
        .and_then(Value::as_array)
        .map_or(0, |t| t.len() as u64);
    if !stop && new_tokens > 0 {
        let total = counted.entry(choice.unwrap_or(0)).or_insert(0);
        *total = total.saturating_add(new_tokens);
        out.push(StreamEvent::Usage {
            usage: Usage {
                completion_tokens: Some(*total),
                ..Usage::default()
            },
            with_output: true,
        });
    }
    if stop {
        let reason = non_empty(v.get("stop_type"))
            .filter(|t| t != "none")
            .unwrap_or_else(|| "stop".to_owned());
        out.push(StreamEvent::Finish(reason));
        out.extend(final_usage(v).map(|usage| StreamEvent::Usage {
            usage,
            with_output: false,
        }));
    } else if !has_text && out.is_empty() {
        out.push(StreamEvent::Empty);
    }
    out.into_iter().map(|e| (choice, e)).collect()
}

/// The last line's counts: from `timings` where it has them, else the top-level
/// `tokens_predicted`, `tokens_evaluated` and `tokens_cached`.
fn final_usage(v: &Value) -> Option<Usage> {
    let n = |k: &str| v.get(k).and_then(Value::as_u64);
    let t = v.get("timings").and_then(parse_timings).unwrap_or_default();
    let prompt = match (t.prompt_n, t.cache_n) {
        (Some(p), Some(c)) => Some(p.saturating_add(c)),
        _ => n("tokens_evaluated").or(t.prompt_n),
    };
    let usage = Usage {
        prompt_tokens: prompt,
        completion_tokens: t.predicted_n.or_else(|| n("tokens_predicted")),
        cached_tokens: t.cache_n.or_else(|| n("tokens_cached")),
        ..Usage::default()
    };
    (usage != Usage::default()).then_some(usage)
}
