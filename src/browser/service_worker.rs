//! The offline copy: registers the service worker (`/sw.js`, generated at build time from
//! `js/sw-template.js` with the build's file list) so the installed studio opens without the
//! network, tells the page when a new build is waiting, and lets the user turn it off.
//!
//! The worker keeps only the app shell and never handles a benchmark's request (see the
//! template); [`use_offline_copy`] is the page's side: its state, whether the browser is online,
//! and the two things a user can do (reload into a waiting build, turn the copy on or off).

use std::cell::Cell;
use std::rc::Rc;

use leptos::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;
use web_sys::{
    ServiceWorker, ServiceWorkerContainer, ServiceWorkerRegistration, ServiceWorkerState,
};

/// Where the build puts the worker (the site root, so its scope is the whole studio).
const WORKER_URL: &str = "/sw.js";
/// localStorage key: `"off"` when the user turned the offline copy off.
const SETTING_KEY: &str = "ttft-studio.offline-copy";
/// How often an open tab asks the server for a newer build.
const UPDATE_CHECK_MS: u64 = 30 * 60 * 1000;

/// Where the offline copy stands.
#[derive(Debug, Clone, PartialEq)]
pub enum OfflineCopy {
    /// Not asked yet (the page has just started).
    Starting,
    /// This browser or page cannot have one (no service workers, or not a secure context).
    Unsupported,
    /// Turned off by the user.
    Off,
    /// Being installed (the shell is being cached).
    Installing,
    /// Installed and serving this page: the studio opens offline.
    Ready,
    /// A newer build is installed and waits for the user to reload.
    UpdateWaiting,
    /// Registration failed; the studio works online as before.
    Failed(String),
}

/// The offline copy as the page sees it. Cheap to copy: signals only.
#[derive(Clone, Copy)]
pub struct UseOfflineCopy {
    /// Its state.
    pub status: ReadSignal<OfflineCopy>,
    /// What `navigator.onLine` says (updated on the `online`/`offline` events).
    pub online: ReadSignal<bool>,
    set_status: WriteSignal<OfflineCopy>,
    busy: Signal<bool>,
}

impl UseOfflineCopy {
    /// Activates the waiting build and reloads the page into it.
    pub fn reload_into_update(&self) {
        let Some(container) = container() else { return };
        RELOAD_ON_CONTROLLER_CHANGE.with(|r| r.set(true));
        let set_status = self.set_status;
        leptos::task::spawn_local(async move {
            let waiting = registration(&container).await.and_then(|r| r.waiting());
            match waiting {
                Some(w) => {
                    let msg = js_sys::Object::new();
                    let _ = js_sys::Reflect::set(&msg, &"type".into(), &"skip-waiting".into());
                    if w.post_message(&msg).is_err() {
                        reload();
                    }
                }
                // Nothing waits any more (another tab took it): the page is simply old.
                None => reload(),
            }
            set_status.try_set(OfflineCopy::Installing);
        });
    }

    /// Turns the offline copy on (registers the worker) or off (unregisters it and deletes
    /// its cache, so the next load comes from the server alone). Remembered in this browser.
    pub fn set_enabled(&self, enabled: bool) {
        if let Some(storage) = web_sys::window().and_then(|w| w.local_storage().ok().flatten()) {
            let _ = if enabled {
                storage.remove_item(SETTING_KEY)
            } else {
                storage.set_item(SETTING_KEY, "off")
            };
        }
        let set_status = self.set_status;
        if enabled {
            leptos::task::spawn_local(register(set_status, self.busy));
        } else {
            leptos::task::spawn_local(async move {
                unregister_all().await;
                set_status.try_set(OfflineCopy::Off);
            });
        }
    }
}

thread_local! {
    /// Set when the user asked to reload into a new build: the next `controllerchange` reloads.
    /// (The first install also changes the controller, and must not reload the page.)
    static RELOAD_ON_CONTROLLER_CHANGE: Cell<bool> = const { Cell::new(false) };
}

/// Starts the offline copy (unless the user turned it off) and follows it. Call once, in the
/// app's root; share the result through context. `busy`: a run is on, so the hourly check for
/// a new build (and the download of one) waits.
pub fn use_offline_copy(busy: Signal<bool>) -> UseOfflineCopy {
    let (status, set_status) = signal(OfflineCopy::Starting);
    let navigator = web_sys::window().map(|w| w.navigator());
    let (online, set_online) = signal(navigator.as_ref().is_none_or(|n| n.on_line()));
    let _ = window_event_listener(leptos::ev::online, move |_| set_online.set(true));
    let _ = window_event_listener(leptos::ev::offline, move |_| set_online.set(false));
    let turned_off = web_sys::window()
        .and_then(|w| w.local_storage().ok().flatten())
        .and_then(|s| s.get_item(SETTING_KEY).ok().flatten())
        .is_some_and(|v| v == "off");
    if turned_off {
        set_status.set(OfflineCopy::Off);
        // A worker from before the user turned it off must not keep serving the page.
        leptos::task::spawn_local(unregister_all());
    } else {
        leptos::task::spawn_local(register(set_status, busy));
    }
    UseOfflineCopy {
        status,
        online,
        set_status,
        busy,
    }
}

/// `navigator.serviceWorker`, where the page may use it.
fn container() -> Option<ServiceWorkerContainer> {
    let window = web_sys::window()?;
    if !window.is_secure_context() {
        return None;
    }
    let navigator = window.navigator();
    let has = js_sys::Reflect::has(&navigator, &"serviceWorker".into()).unwrap_or(false);
    has.then(|| navigator.service_worker())
}

/// This page's registration, if any.
async fn registration(container: &ServiceWorkerContainer) -> Option<ServiceWorkerRegistration> {
    let found = JsFuture::from(container.get_registration()).await.ok()?;
    found.dyn_into::<ServiceWorkerRegistration>().ok()
}

fn reload() {
    if let Some(w) = web_sys::window() {
        let _ = w.location().reload();
    }
}

/// Registers the worker and follows its life: installing → ready, and a newer build waiting.
async fn register(set_status: WriteSignal<OfflineCopy>, busy: Signal<bool>) {
    let Some(container) = container() else {
        set_status.try_set(OfflineCopy::Unsupported);
        return;
    };
    // A page that was served by a worker when it loaded runs that worker's build.
    let controlled_at_load = container.controller().is_some();
    let registered = match JsFuture::from(container.register(WORKER_URL)).await {
        Ok(r) => r.unchecked_into::<ServiceWorkerRegistration>(),
        Err(e) => {
            let why = e
                .dyn_ref::<js_sys::Error>()
                .map(|e| String::from(e.message()))
                .unwrap_or_else(|| format!("{e:?}"));
            set_status.try_set(OfflineCopy::Failed(why));
            return;
        }
    };
    let refresh = follow(&registered, set_status);
    let on_controller_change = {
        let refresh = refresh.clone();
        Closure::<dyn Fn()>::new(move || {
            if RELOAD_ON_CONTROLLER_CHANGE.with(|r| r.replace(false)) {
                reload();
            } else if controlled_at_load {
                // Another tab took a new build: this page still runs the old one, and its
                // files are gone from the cache. Say so; Reload brings the new one.
                set_status.try_set(OfflineCopy::UpdateWaiting);
            } else {
                refresh();
            }
        })
    };
    container.set_oncontrollerchange(Some(on_controller_change.as_ref().unchecked_ref()));
    on_controller_change.forget();
    // A tab left open learns of a new build too (the browser also checks on each navigation),
    // but not while a run streams: the check and a new build's download would share its origin.
    let periodic = registered.clone();
    let _ = set_interval_with_handle(
        move || {
            if busy.get_untracked() {
                return;
            }
            if let Ok(p) = periodic.update() {
                // Offline, the check fails: nothing to do until the next one.
                leptos::task::spawn_local(async move {
                    let _ = JsFuture::from(p).await;
                });
            }
        },
        std::time::Duration::from_millis(UPDATE_CHECK_MS),
    );
    if let Ok(ready) = container.ready() {
        let _ = JsFuture::from(ready).await;
    }
    refresh();
}

/// What an install that failed means for the user.
const INSTALL_FAILED: &str = "this browser cannot keep one without putting it in the path of every request (it lacks static service-worker routes: use a Chromium-based browser to install the studio), or a file of the app could not be fetched";

/// Sets the state from the registration now, and again whenever a new worker appears or one
/// fails to install; returns the function that reads it again.
fn follow(
    registered: &ServiceWorkerRegistration,
    set_status: WriteSignal<OfflineCopy>,
) -> Rc<dyn Fn()> {
    let current = {
        let registered = registered.clone();
        Rc::new(move || {
            let status = match (registered.active(), registered.waiting()) {
                (Some(_), Some(_)) => OfflineCopy::UpdateWaiting,
                (Some(_), None) => OfflineCopy::Ready,
                (None, _) => OfflineCopy::Installing,
            };
            set_status.try_set(status);
        })
    };
    let watch = {
        let current = current.clone();
        move |worker: ServiceWorker| {
            let current = current.clone();
            let watched = worker.clone();
            let on_state = Closure::<dyn Fn()>::new(move || match watched.state() {
                ServiceWorkerState::Redundant => {
                    set_status.try_set(OfflineCopy::Failed(INSTALL_FAILED.into()));
                }
                ServiceWorkerState::Installed | ServiceWorkerState::Activated => current(),
                _ => {}
            });
            worker.set_onstatechange(Some(on_state.as_ref().unchecked_ref()));
            on_state.forget();
        }
    };
    current();
    // The first install may already be under way when the registration resolves.
    if let Some(installing) = registered.installing() {
        watch(installing);
    }
    let on_update_found = {
        let registered = registered.clone();
        Closure::<dyn Fn()>::new(move || {
            if let Some(installing) = registered.installing() {
                watch(installing);
            }
        })
    };
    registered.set_onupdatefound(Some(on_update_found.as_ref().unchecked_ref()));
    on_update_found.forget();
    current
}

/// Unregisters every worker of this origin and deletes the shell caches.
async fn unregister_all() {
    let Some(container) = container() else { return };
    if let Ok(list) = JsFuture::from(container.get_registrations()).await {
        for r in js_sys::Array::from(&list).iter() {
            if let Ok(r) = r.dyn_into::<ServiceWorkerRegistration>()
                && let Ok(p) = r.unregister()
            {
                let _ = JsFuture::from(p).await;
            }
        }
    }
    let Some(caches) = web_sys::window().and_then(|w| w.caches().ok()) else {
        return;
    };
    if let Ok(keys) = JsFuture::from(caches.keys()).await {
        for key in js_sys::Array::from(&keys).iter() {
            if let Some(k) = key.as_string()
                && k.starts_with("ttft-studio-shell-")
            {
                let _ = JsFuture::from(caches.delete(&k)).await;
            }
        }
    }
}
