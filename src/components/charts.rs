//! Chart cards: mount, resize, dispose and export the charts `ttft-charts` built, through
//! [`crate::browser::echarts`].

use leptos::html;
use leptos::prelude::*;
use ttft_charts::ChartSpec;

use crate::browser::echarts::{EChartsInstance, draw, ensure_loaded, png_url, redraw};

/// One chart with its caption and a PNG export; drawn again in place when its spec changes.
#[component]
pub fn ChartView(
    /// What to draw.
    #[prop(into)]
    spec: Signal<ChartSpec>,
    /// File name stem for the PNG.
    file_stem: String,
    /// Called once the chart is first drawn (or failed to be).
    on_drawn: Callback<()>,
) -> impl IntoView {
    let host = NodeRef::<html::Div>::new();
    let instance: StoredValue<Option<EChartsInstance>, LocalStorage> = StoredValue::new_local(None);
    let (error, set_error) = signal(None::<String>);
    let (png, set_png) = signal(None::<String>);
    let id = spec.with_untracked(|s| s.id);
    let drawing = StoredValue::new(false);
    // How long ECharts took to draw it the first time (for the bench's breakdown).
    let (draw_ms, set_draw_ms) = signal(None::<f64>);
    Effect::new(move |_| {
        let current = spec.get();
        let Some(el) = host.get() else { return };
        // Drawn already: the new options replace the old (a mark added once it is computed).
        let redrawn = instance.with_value(|c| c.as_ref().map(|c| redraw(c, &current)));
        match redrawn {
            Some(Ok(())) => return,
            Some(Err(e)) => return set_error.set(Some(e.to_string())),
            // The first drawing is under way: it draws the newest spec.
            None if drawing.get_value() => return,
            None => drawing.set_value(true),
        }
        // ECharts arrives on demand (usually preloaded by then); the card may be gone when it
        // does, hence the `try_` setters: a disposed one must not panic.
        leptos::task::spawn_local(async move {
            // A part that loaded lazily is built before it is in the page: ECharts sizes its
            // canvas from the card, which is 0 × 0 until then (a frame or two). A card that is
            // gone first is not drawn.
            while !el.is_connected() {
                crate::browser::fetch::sleep_ms(16.0).await;
                if spec.try_get_untracked().is_none() {
                    return;
                }
            }
            let drawn = match ensure_loaded().await {
                Ok(()) => match spec.try_get_untracked() {
                    Some(newest) => {
                        let started = crate::browser::clock::now_ms();
                        let drawn = draw(&el, &newest);
                        set_draw_ms.try_set(Some(crate::browser::clock::now_ms() - started));
                        drawn
                    }
                    None => return,
                },
                Err(e) => Err(e),
            };
            match drawn {
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
        <figure class="chart-card" data-testid="chart" data-chart=id
            data-draw-ms=move || draw_ms.get().map(|t| format!("{t:.1}"))>
            <div class="chart-head">
                <span class="sr-only">{move || spec.with(|s| s.title.clone())}</span>
                <button class="link" data-testid="export-png" on:click=export title="Download this chart as PNG">"PNG"</button>
                {move || png.get().map(|href| view! {
                    <a node_ref=link href=href download=format!("{file_stem}-{id}.png") data-testid="png-link" class="muted">"saved"</a>
                })}
            </div>
            <div class="chart" node_ref=host></div>
            {move || error.get().map(|e| view! { <p class="error">{e}</p> })}
            <figcaption class="muted">{move || spec.with(|s| s.caption.clone())}</figcaption>
        </figure>
    }
}

/// A grid of charts; once all are drawn, `data-render-ms` holds the time since `started_ms`
/// (building the options included, when the caller took `started_ms` before building them).
/// A chart whose spec changes later (same position) is drawn again in place.
#[component]
pub fn ChartGrid(
    /// The charts.
    #[prop(into)]
    specs: Signal<Vec<ChartSpec>>,
    /// File name stem for PNGs.
    file_stem: String,
    /// `data-testid` of the grid.
    testid: &'static str,
    /// Page-clock time the work began (ms).
    started_ms: f64,
    /// Called once every chart is first drawn (at once when there are none): for work that
    /// must not compete with the drawing.
    #[prop(default = None)]
    on_all_drawn: Option<Callback<()>>,
) -> impl IntoView {
    let count = specs.with_untracked(Vec::len);
    if count == 0
        && let Some(cb) = on_all_drawn
    {
        cb.run(());
    }
    let remaining = StoredValue::new(count);
    let (render_ms, set_render_ms) = signal(None::<f64>);
    let on_drawn = Callback::new(move |_| {
        if remaining.get_value() == 0 {
            return;
        }
        remaining.update_value(|n| *n -= 1);
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
            {(0..count).map(|i| {
                // Each chart follows its own place in the list, and only when it changes.
                let first = specs.with_untracked(|v| v[i].clone());
                let spec = Memo::new(move |_| specs.with(|v| v.get(i).cloned()).unwrap_or_else(|| first.clone()));
                view! { <ChartView spec=spec file_stem=file_stem.clone() on_drawn=on_drawn /> }
            }).collect_view()}
        </div>
    }
}
