//! UI components. They read the studio's store and format what the core computed; they
//! compute no metrics and change the studio's state only through [`crate::actions`] (the
//! settings forms bind the endpoint and scenario stores' fields, `bind:value=ep.model()`).

use std::future::Future;
use std::pin::Pin;

use leptos::prelude::*;

pub mod blind_review;
pub mod charts;
pub mod compare;
pub mod compare_table;
pub mod confidence_settings;
pub mod endpoint_panel;
pub mod guide;
pub mod live_surface;
pub mod load_shape;
pub mod offline;
pub mod openers;
pub mod painted;
pub mod rate_chart;
pub mod reader_settings;
pub mod render_lab;
pub mod replay;
pub mod report_view;
pub mod request_table;
pub mod roofline;
pub mod run_controls;
pub mod runs_list;
pub mod saturation_stop;
pub mod scenario_panel;
pub mod schedule_lag;
pub mod server_view;
pub mod slo;
pub mod source_summary;
pub mod status_bar;
pub mod time_slices;
pub mod trace_replay;
pub mod trace_reuse;

/// A part of the page whose code loads when it is first shown: in the release build (feature
/// `split`) the functions that build it are lazy parts ([`crate::lazy`]), a wasm module of
/// their own that is fetched then (or sooner, see [`crate::actions::run::load_run_parts`]), so the
/// first load does not carry them. Until it has loaded, one muted line says what is coming.
#[component]
pub fn Lazily<F>(
    /// Builds the part; awaiting it loads its code.
    part: F,
    /// What is loading, for the placeholder ("the charts").
    what: &'static str,
) -> impl IntoView
where
    F: Future<Output = Result<AnyView, crate::lazy::PartError>> + 'static,
{
    let part = send_wrapper::SendWrapper::new(async move {
        part.await.unwrap_or_else(|e| {
            view! { <p class="error" data-testid="part-error">{e.to_string()}</p> }.into_any()
        })
    });
    view! {
        <Suspense fallback=move || view! { <p class="muted" data-testid="part-loading">{format!("Loading {what}…")}</p> }>
            {Suspend::new(part)}
        </Suspense>
    }
}

/// Code that loads on first use (a lazy part's loader, see [`Lazily`]), held once it has
/// loaded: [`OnDemand::get`] starts the load the first time it is asked and gives `None` until
/// the load is over; readers re-run then. A failed load is kept (and shown) until
/// [`OnDemand::retry`]. Unlike [`Lazily`], a view that re-renders often (a live run's report,
/// four times a second) never shows a placeholder again once the code has loaded.
pub struct OnDemand<T: Send + Sync + 'static> {
    loaded: RwSignal<Option<Result<T, crate::lazy::PartError>>>,
    loading: StoredValue<bool>,
    load: StoredValue<Loader<T>, LocalStorage>,
}

/// An [`OnDemand`]'s loader.
type Loader<T> =
    std::rc::Rc<dyn Fn() -> Pin<Box<dyn Future<Output = Result<T, crate::lazy::PartError>>>>>;

impl<T: Send + Sync + 'static> Clone for OnDemand<T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T: Send + Sync + 'static> Copy for OnDemand<T> {}

impl<T: Clone + Send + Sync + 'static> OnDemand<T> {
    /// Loads with `load` when first asked.
    pub fn new<Fut>(load: fn() -> Fut) -> Self
    where
        Fut: Future<Output = Result<T, crate::lazy::PartError>> + 'static,
    {
        let load: Loader<T> = std::rc::Rc::new(move || Box::pin(load()));
        OnDemand {
            loaded: RwSignal::new(None),
            loading: StoredValue::new(false),
            load: StoredValue::new_local(load),
        }
    }

    /// What was loaded, or why it could not be; `None` (and the load started, the first time)
    /// until the load is over.
    pub fn get(self) -> Option<Result<T, crate::lazy::PartError>> {
        if let Some(loaded) = self.loaded.get() {
            return Some(loaded);
        }
        if !self.loading.get_value() {
            self.loading.set_value(true);
            let (loaded, loading) = (self.loaded, self.loading);
            let load = self.load.get_value();
            leptos::task::spawn_local(async move {
                let value = load().await;
                loading.try_set_value(false);
                loaded.try_set(Some(value));
            });
        }
        None
    }

    /// Forgets a failed load, so that the next [`OnDemand::get`] tries again.
    pub fn retry(self) {
        if matches!(self.loaded.get_untracked(), Some(Err(_))) {
            self.loaded.set(None);
        }
    }
}
