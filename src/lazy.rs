//! Lazy points: code the first load does not carry. In the release build (feature `split`,
//! which index.html turns on) each function declared with `lazy_part!` is a split point:
//! `crates/ttft-split` moves it, and whatever only it uses, into a wasm module of its own, which
//! the browser fetches the first time the function is called (or earlier: [`load_run_parts`]).
//! Without the feature they are ordinary async functions.
//!
//! A module that cannot be fetched (offline before the studio was kept for offline use, a new
//! version deployed meanwhile) is a [`PartError`], shown where the part would be; a later call
//! tries again. Nothing panics.

/// A lazily loaded part of the studio could not be fetched.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error(
    "part of the studio could not be loaded: check the connection and try again, or reload the page (a new version may have been deployed)"
)]
pub struct PartError;

impl From<leptos::wasm_split::SplitLoaderError> for PartError {
    fn from(_: leptos::wasm_split::SplitLoaderError) -> Self {
        PartError
    }
}

/// Loads every part a run needs, from its first request to its saved report (its machinery,
/// the report's views, a complete run's parts, the writer that saves it), before the run sends
/// anything: no part's fetch then competes with the run's requests for a connection (the
/// reference endpoint shares the page's origin). Once loaded, at once.
pub async fn load_run_parts() -> Result<(), PartError> {
    #[cfg(feature = "split")]
    {
        crate::actions::__wasm_split_preload_run_scenario_part().await?;
        crate::components::report_view::__wasm_split_preload_load_report_body().await?;
        crate::components::report_view::__wasm_split_preload_complete_parts().await?;
        crate::browser::storage::__wasm_split_preload_write_report().await?;
    }
    Ok(())
}

/// [`load_run_parts`], then ECharts, once the page is idle: the first run rarely waits for its
/// parts, and its charts rarely for ECharts. A failure here is left to the call that needs the
/// part, which says so.
pub fn preload_when_idle() {
    crate::browser::when_idle(|| {
        leptos::task::spawn_local(async {
            let _ = load_run_parts().await;
            let _ = crate::browser::echarts::ensure_loaded().await;
        });
    });
}

/// Declares `async fn name(args) -> T` as a lazy point: callers get `Result<T, PartError>`
/// (the error only when its module could not be fetched). `name` must be unique in the crate
/// (it names the module).
macro_rules! lazy_part {
    (
        $(#[$attr:meta])*
        $vis:vis async fn $name:ident($($arg:ident : $ty:ty),* $(,)?) -> $ret:ty $body:block
    ) => {
        $(#[$attr])*
        #[cfg(feature = "split")]
        #[::leptos::wasm_split::wasm_split(
            $name,
            wasm_split_path = ::leptos::wasm_split,
            fallible,
            return_wrapper(
                let future = _;
                { future.await } -> ::core::result::Result<$ret, $crate::lazy::PartError>
            )
        )]
        $vis fn $name(
            $($arg: $ty),*
        ) -> ::std::pin::Pin<
            ::std::boxed::Box<
                dyn ::std::future::Future<
                    Output = ::core::result::Result<$ret, $crate::lazy::PartError>,
                >,
            >,
        > {
            async fn part($($arg: $ty),*) -> $ret $body
            ::std::boxed::Box::pin(async move { Ok(part($($arg),*).await) })
        }

        $(#[$attr])*
        #[cfg(not(feature = "split"))]
        $vis async fn $name(
            $($arg: $ty),*
        ) -> ::core::result::Result<$ret, $crate::lazy::PartError> {
            async fn part($($arg: $ty),*) -> $ret $body
            Ok(part($($arg),*).await)
        }
    };
}
