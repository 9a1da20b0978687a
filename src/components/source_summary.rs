//! An imported file's own summary figures beside the studio's values from the same requests,
//! with the core's explanation of each difference. The figures are the core's
//! ([`ttft_core::import::SourceSummary`]); this view only formats them.

use leptos::prelude::*;
use ttft_core::import::{SourceSummary, SummaryFigure};

/// A figure's value in its unit: durations as the rest of the report shows them.
fn value(v: Option<f64>, unit: &str) -> String {
    match (v.filter(|x| x.is_finite()), unit) {
        (None, _) => "—".into(),
        (Some(x), "ms") => crate::format::ms(Some(x)),
        (Some(x), unit) => format!("{x:.3} {unit}"),
    }
}

/// One row: the file's figure, ours, and why they differ.
#[component]
fn FigureRow(
    /// The figure.
    figure: SummaryFigure,
    /// Whether the table has a group column.
    grouped: bool,
) -> impl IntoView {
    let file = value(Some(figure.file_value), &figure.unit);
    let ours = value(figure.our_value, &figure.unit);
    let group = figure.group.clone();
    let group_cell = grouped.then(|| figure.group.unwrap_or_else(|| "run".into()));
    let metric = figure.metric.clone();
    view! {
        <tr data-testid="source-figure" data-metric=metric data-group=group>
            {group_cell.map(|g| view! { <td>{g}</td> })}
            <td>{figure.metric}</td>
            <td data-testid="source-file-value">{file}</td>
            <td data-testid="source-our-value">{ours}</td>
            <td class="muted" data-testid="source-explanation">{figure.explanation}</td>
        </tr>
    }
}

/// The file's summary beside ours, for a run imported from another tool's file.
#[component]
pub fn SourceSummaryTable(
    /// What the file stated about its own run.
    summary: SourceSummary,
) -> impl IntoView {
    let grouped = summary.figures.iter().any(|f| f.group.is_some());
    let tool = summary.tool.clone();
    view! {
        <section data-testid="source-summary" data-tool=tool.clone()>
            <h3>{format!("{tool}'s own summary beside the studio's")}</h3>
            <p class="muted">"The file's figures as it states them, the studio's from the same file's requests, and why they differ."</p>
            <table>
                <thead><tr>
                    {grouped.then(|| view! { <th>"Group"</th> })}
                    <th>"Metric"</th><th>{format!("{tool} (file)")}</th><th>"Studio"</th><th>"Why they differ"</th>
                </tr></thead>
                <tbody>
                    {summary.figures.into_iter().map(|f| view! { <FigureRow figure=f grouped=grouped /> }).collect_view()}
                </tbody>
            </table>
        </section>
    }
}
