//! Chart cards: mount, resize, dispose and export the charts `ttft-charts` built, through
//! [`crate::browser::echarts`].

use leptos::html;
use leptos::prelude::*;
use ttft_charts::ChartSpec;

use crate::browser::echarts::{EChartsInstance, draw, ensure_loaded, png_url};

/// One chart with its caption and a PNG export.
#[component]
pub fn ChartView(
    /// What to draw.
    spec: ChartSpec,
    /// File name stem for the PNG.
    file_stem: String,
    /// Called once the chart is drawn (or failed to be).
    on_drawn: Callback<()>,
) -> impl IntoView {
    let host = NodeRef::<html::Div>::new();
    let instance: StoredValue<Option<EChartsInstance>, LocalStorage> = StoredValue::new_local(None);
    let (error, set_error) = signal(None::<String>);
    let (png, set_png) = signal(None::<String>);
    let id = spec.id;
    let caption = spec.caption.clone();
    let title = spec.title.clone();
    Effect::new(move |_| {
        if let Some(el) = host.get() {
            let spec = spec.clone();
            // ECharts arrives on demand (usually preloaded by then); the card may be gone
            // when it does, hence the `try_` setters: a disposed one must not panic.
            leptos::task::spawn_local(async move {
                match ensure_loaded().await.and_then(|()| draw(&el, &spec)) {
                    Ok(c) => {
                        // Handed back when the card is gone: nothing will dispose it later.
                        if let Some(Some(orphan)) = instance.try_set_value(Some(c)) {
                            orphan.dispose();
                        }
                    }
                    Err(e) => {
                        set_error.try_set(Some(e.to_string()));
                    }
                }
                // The grid may be gone too (a view re-rendered while ECharts loaded).
                let _ = on_drawn.try_run(());
            });
        }
    });
    // Follow the window's width (the grid reflows; ECharts does not watch its container).
    let resize = window_event_listener(leptos::ev::resize, move |_| {
        instance.with_value(|c| {
            if let Some(c) = c {
                c.resize();
            }
        });
    });
    on_cleanup(move || {
        resize.remove();
        if let Some(c) = instance.try_update_value(Option::take).flatten() {
            c.dispose();
        }
    });
    let export = move |_| {
        instance.with_value(|c| {
            if let Some(c) = c {
                set_png.set(Some(png_url(c)));
            }
        });
    };
    // Once the data URL exists, the link downloads it (and stays, so it can be clicked again).
    let link = NodeRef::<html::A>::new();
    Effect::new(move |_| {
        if png.get().is_some()
            && let Some(a) = link.get()
        {
            a.click();
        }
    });
    view! {
        <figure class="chart-card" data-testid="chart" data-chart=id>
            <div class="chart-head">
                <span class="sr-only">{title}</span>
                <button class="link" data-testid="export-png" on:click=export title="Download this chart as PNG">"PNG"</button>
                {move || png.get().map(|href| view! {
                    <a node_ref=link href=href download=format!("{file_stem}-{id}.png") data-testid="png-link" class="muted">"saved"</a>
                })}
            </div>
            <div class="chart" node_ref=host></div>
            {move || error.get().map(|e| view! { <p class="error">{e}</p> })}
            <figcaption class="muted">{caption}</figcaption>
        </figure>
    }
}

/// A grid of charts; once all are drawn, `data-render-ms` holds the time since `started_ms`
/// (building the options included, when the caller took `started_ms` before building them).
#[component]
pub fn ChartGrid(
    /// The charts.
    specs: Vec<ChartSpec>,
    /// File name stem for PNGs.
    file_stem: String,
    /// `data-testid` of the grid.
    testid: &'static str,
    /// Page-clock time the work began (ms).
    started_ms: f64,
    /// Called once every chart is drawn (at once when there are none): for work that must not
    /// compete with the drawing.
    #[prop(default = None)]
    on_all_drawn: Option<Callback<()>>,
) -> impl IntoView {
    let count = specs.len();
    if count == 0
        && let Some(cb) = on_all_drawn
    {
        cb.run(());
    }
    let remaining = StoredValue::new(count);
    let (render_ms, set_render_ms) = signal(None::<f64>);
    let on_drawn = Callback::new(move |_| {
        remaining.update_value(|n| *n = n.saturating_sub(1));
        if remaining.get_value() == 0 {
            set_render_ms.set(Some(crate::browser::clock::now_ms() - started_ms));
            if let Some(cb) = on_all_drawn {
                cb.try_run(());
            }
        }
    });
    view! {
        <div class="charts" data-testid=testid data-charts=count
            data-render-ms=move || render_ms.get().map(|t| format!("{t:.1}"))>
            {specs.into_iter().map(|spec| view! { <ChartView spec=spec file_stem=file_stem.clone() on_drawn=on_drawn /> }).collect_view()}
        </div>
    }
}
