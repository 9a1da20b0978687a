//! The server's prompt cache as the client saw it: the share of the prompt tokens the server
//! said it served from its prefix cache (`cached_tokens` in usage, llama.cpp's `cache_n`), per
//! group — a multi-turn conversation's rounds, a sweep's levels — with the run's rate marked.
//! Drawn only when the server reported cached tokens (`ttft_core::report::PromptCache`).

use charming::datatype::DataPoint;
use charming::element::Trigger;
use charming::series::Bar;
use ttft_core::report::Aggregates;

use crate::ChartSpec;
use crate::style::{base, category_axis, hline, marks, round, title, value_axis};

/// Prompt-cache hit rate per group (%, token-weighted), the run's as a dashed line; `None`
/// when no request reported cached tokens. A group none of whose requests reported them has
/// no bar (`-`), rather than a 0 % that would read as a miss.
pub(super) fn prompt_cache(agg: &Aggregates) -> Option<ChartSpec> {
    let run = agg.prompt_cache?;
    let labels: Vec<String> = agg.groups.iter().map(|g| g.group.clone()).collect();
    let rates: Vec<DataPoint> = agg
        .groups
        .iter()
        .map(|g| match g.prompt_cache {
            Some(c) => round(c.hit_rate() * 100.0).into(),
            None => "-".into(),
        })
        .collect();
    let run_rate = run.hit_rate() * 100.0;
    let chart = base(Trigger::Axis)
        .title(title("Prompt cache hits"))
        .x_axis(category_axis("group", labels))
        .y_axis(
            value_axis("% of prompt tokens cached")
                .scale(false)
                .max(100),
        )
        .series(Bar::new().name("hit rate (%)").data(rates).mark_line(marks(
            vec![hline(&format!("run {run_rate:.0} %"), run_rate)],
            "#333",
        )));
    Some(ChartSpec {
        id: "prompt-cache",
        title: "Prompt cache hits".into(),
        caption: format!(
            "{}. Each bar is the share of its group's prompt tokens the server served from its prefix cache (cached over prompt tokens of the requests that reported both); in a conversation the later rounds should climb as each prompt extends the one before.",
            run.sentence()
        ),
        chart,
    })
}
