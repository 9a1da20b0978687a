//! UI components. They read the studio's store and format what the core computed; they
//! compute no metrics and change state only through [`crate::actions`] (settings forms bind
//! their fields directly).

use leptos::prelude::*;

pub mod blind_review;
pub mod charts;
pub mod compare;
pub mod endpoint_panel;
pub mod guide;
pub mod offline;
pub mod reader_settings;
pub mod replay;
pub mod report_view;
pub mod request_table;
pub mod roofline;
pub mod run_controls;
pub mod runs_list;
pub mod scenario_panel;
pub mod server_view;
pub mod slo;
pub mod source_summary;
pub mod status_bar;

/// A two-way binding of one field of a settings signal, for `bind:value` / `bind:checked`.
pub fn field<C, T>(
    settings: RwSignal<C>,
    get: fn(&C) -> T,
    put: fn(&mut C, T),
) -> (Signal<T>, SignalSetter<T>)
where
    C: Send + Sync + 'static,
    T: Clone + Send + Sync + 'static,
{
    (
        Signal::derive(move || settings.with(get)),
        SignalSetter::map(move |v| settings.update(|c| put(c, v))),
    )
}
