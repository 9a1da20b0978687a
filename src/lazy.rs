//! Lazy points: code the first load does not carry. In the release build (feature `split`,
//! which index.html turns on) each function declared with `lazy_part!` is a split point:
//! `crates/ttft-split` moves it, and whatever only it uses, into a wasm module of its own (named
//! after the function), which the browser fetches the first time the function is called, or
//! earlier through the preload the declaration names. Without the feature they are ordinary
//! async functions, and their preloads do nothing.
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

/// Declares `async fn name(args) -> T { body }` as a lazy point: callers get
/// `Result<T, PartError>` (the error only when its module could not be fetched). `name` must be
/// unique in the crate (it names the module).
///
/// `preload = load_name;` before it also declares `async fn load_name() -> Result<(),
/// SplitLoaderError>` with the same visibility, which fetches the module without calling the
/// function (what `wasm_split`'s `preload` option makes, named here as Leptos' `#[lazy]`
/// names its own instead of relying on the hidden default).
macro_rules! lazy_part {
    (preload = $preload:ident; $($part:tt)*) => {
        lazy_part!(@part [$preload] $($part)*);
    };
    (
        @part [$($preload:ident)?]
        $(#[$attr:meta])*
        $vis:vis async fn $name:ident($($arg:ident : $ty:ty),* $(,)?) -> $ret:ty $body:block
    ) => {
        $(#[$attr])*
        #[cfg(feature = "split")]
        #[::leptos::wasm_split::wasm_split(
            $name,
            wasm_split_path = ::leptos::wasm_split,
            fallible,
            $(preload(
                #[doc = concat!("Fetches the code of [`", stringify!($name), "`] without calling it.")]
                #[allow(dead_code)]
                $preload
            ),)?
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

        $(
            #[doc = concat!("Fetches the code of [`", stringify!($name), "`] without calling it.")]
            #[cfg(not(feature = "split"))]
            #[allow(dead_code, clippy::unused_async)]
            $vis async fn $preload() -> ::core::result::Result<(), ::leptos::wasm_split::SplitLoaderError> {
                Ok(())
            }
        )?
    };
    ($($part:tt)*) => {
        lazy_part!(@part [] $($part)*);
    };
}
