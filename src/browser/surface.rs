//! A chat surface on the page (#31, the rendering lab's browser half): draws one strategy's
//! [`ttft_render::Update`]s into an element and records what was painted, when, as a
//! [`PaintTrace`] for the core's paint figures.
//!
//! - **render cost** of an update: `performance.now()` around the markdown rendering, the DOM
//!   write and a forced layout read (`scrollHeight`, then the surface scrolls to its end as a
//!   chat does);
//! - **paint time**: Element Timing where the browser has it (`PerformanceObserver
//!   .supportedEntryTypes` holds `"element"`): every element an update inserts carries
//!   `elementtiming="s<surface>-u<n>"`, and the update was painted at the earliest
//!   `renderTime` of its own or a later update's elements (a re-render that replaced it before
//!   a frame showed it first showed its text then). Chromium left most of a stream's updates
//!   unreported in the lab's test (1 of 2,000 re-renders, 42 of 2,000 incremental updates;
//!   it seems to drop elements replaced before their frame is presented): where Element Timing reported fewer than nine in ten
//!   of the updates the screen showed (or any update has no time, or the browser has no
//!   Element Timing), every paint time is instead the `performance.now()` of a task queued from
//!   the first animation-frame callback after the update (it runs once that frame is rendered),
//!   labelled [`PaintSource::FrameEstimate`];
//! - **frames** ([`FrameWatch`], one for the page): an animation-frame loop counts frames and
//!   dropped frames (gaps above 1.5 refresh intervals); long frames come from the Long Animation
//!   Frames API (`long-animation-frame`, its longest script's `sourceFunctionName` or `invoker`)
//!   where supported, else from frame gaps over 50 ms with nothing said about their cause.
//!
//! Times are ms since `origin` (the `performance.now()` the caller counts from). A leaf: no app
//! state, only web handles and the render and core crates' plain types.

use std::cell::RefCell;
use std::rc::Rc;

use js_sys::{Array, Reflect};
use ttft_core::paint::{LONG_FRAME_MS, LongFrame, PaintSource, PaintTrace, PaintedUpdate};
use ttft_render::{RenderMode, Surface, Update};
use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::*;
use web_sys::{Element, PerformanceObserver, PerformanceObserverInit};

use super::clock::now_ms;

/// Whether the browser reports `entry_type` to a `PerformanceObserver`.
pub fn supports_entry_type(entry_type: &str) -> bool {
    let Some(w) = web_sys::window() else {
        return false;
    };
    Reflect::get(&w, &"PerformanceObserver".into())
        .and_then(|po| Reflect::get(&po, &"supportedEntryTypes".into()))
        .ok()
        .and_then(|t| t.dyn_into::<Array>().ok())
        .is_some_and(|t| t.includes(&entry_type.into(), 0))
}

/// A number field of a JS object, if it is one.
fn num(v: &JsValue, key: &str) -> Option<f64> {
    Reflect::get(v, &key.into()).ok()?.as_f64()
}

/// A string field of a JS object, if it is a non-empty one.
fn text(v: &JsValue, key: &str) -> Option<String> {
    Reflect::get(v, &key.into())
        .ok()?
        .as_string()
        .filter(|s| !s.is_empty())
}

/// A `PerformanceObserver` of `entry_type` calling `each` with every entry, until dropped.
struct Observer {
    observer: PerformanceObserver,
    _callback: Closure<dyn FnMut(JsValue)>,
}

impl Observer {
    fn new(entry_type: &str, mut each: impl FnMut(&JsValue) + 'static) -> Option<Self> {
        let callback = Closure::<dyn FnMut(JsValue)>::new(move |list: JsValue| {
            let entries = list
                .dyn_ref::<web_sys::PerformanceObserverEntryList>()
                .map(web_sys::PerformanceObserverEntryList::get_entries);
            for e in entries.iter().flat_map(Array::iter) {
                each(&e);
            }
        });
        let observer = PerformanceObserver::new(callback.as_ref().unchecked_ref()).ok()?;
        let init = PerformanceObserverInit::new(&Array::of1(&entry_type.into()));
        observer.observe(&init);
        Some(Self {
            observer,
            _callback: callback,
        })
    }
}

impl Drop for Observer {
    fn drop(&mut self) {
        self.observer.disconnect();
    }
}

/// Runs `f` at the next animation frame with its timestamp and `performance.now()` then.
pub(super) fn next_frame(f: impl FnOnce(f64, f64) + 'static) {
    let cb =
        Closure::once_into_js(move |t: JsValue| f(t.as_f64().unwrap_or_else(now_ms), now_ms()));
    if let Some(w) = web_sys::window() {
        let _ = w.request_animation_frame(cb.unchecked_ref());
    }
}

/// What a surface has recorded so far.
#[derive(Default)]
struct Record {
    /// Per update: text end, released at, render ms.
    updates: Vec<(usize, f64, f64)>,
    /// Per update: the end of its first animation frame (page time).
    frame_ms: Vec<Option<f64>>,
    /// Per update: its earliest Element Timing `renderTime` (page time).
    element_ms: Vec<Option<f64>>,
    /// Per update: whether it inserted an element (one Element Timing can report).
    inserted: Vec<bool>,
    /// Updates still waiting for their animation frame.
    awaiting_frame: Vec<usize>,
}

/// One strategy's chat surface on an element.
pub struct DomSurface {
    root: Element,
    closed: Element,
    tail: Element,
    surface: Surface,
    /// Its updates' `elementtiming` names: `s<surface>-u<update>`.
    prefix: String,
    origin: f64,
    record: Rc<RefCell<Record>>,
    element_timing: Option<Observer>,
}

impl DomSurface {
    /// A surface drawing into `root` (emptied) with `mode`, times counted from `origin`.
    pub fn new(root: Element, mode: RenderMode, origin: f64) -> Option<Self> {
        let doc = root.owner_document()?;
        root.set_inner_html("");
        let closed = doc.create_element("div").ok()?;
        let tail = doc.create_element("div").ok()?;
        root.append_child(&closed).ok()?;
        root.append_child(&tail).ok()?;
        let record = Rc::new(RefCell::new(Record::default()));
        // Every surface's observer sees every element entry of the page: its own are named
        // after it.
        static SURFACES: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let prefix = format!(
            "s{}-u",
            SURFACES.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
        );
        let own = prefix.clone();
        let element_timing = supports_entry_type("element")
            .then(|| {
                let record = Rc::clone(&record);
                Observer::new("element", move |e| {
                    let Some(n) = text(e, "identifier")
                        .and_then(|id| id.strip_prefix(&own).and_then(|n| n.parse::<usize>().ok()))
                    else {
                        return;
                    };
                    let at = num(e, "renderTime")
                        .filter(|t| *t > 0.0)
                        .or_else(|| num(e, "loadTime"));
                    let mut r = record.borrow_mut();
                    if let (Some(at), Some(slot)) = (at, r.element_ms.get_mut(n)) {
                        *slot = Some(slot.map_or(at, |s: f64| s.min(at)));
                    }
                })
            })
            .flatten();
        Some(Self {
            root,
            closed,
            tail,
            surface: Surface::new(mode),
            prefix,
            origin,
            record,
            element_timing,
        })
    }

    /// Hands the surface `piece` of text (released now): renders it, measured, and stamps its
    /// paint when it comes.
    pub fn push(&mut self, piece: &str) {
        let released = now_ms();
        let update = self.surface.push(piece);
        let n = self.record.borrow().updates.len();
        let id = format!("{}{n}", self.prefix);
        let fresh: Vec<Element> = match update {
            Update::All(html) => {
                self.closed.set_inner_html("");
                self.tail.set_inner_html(&html);
                children(&self.tail, 0)
            }
            Update::Tail { closed, tail } => {
                let before = self.closed.child_element_count();
                if !closed.is_empty() {
                    let _ = self
                        .closed
                        .insert_adjacent_html("beforeend", &closed.concat());
                }
                self.tail.set_inner_html(&tail);
                let mut fresh = children(&self.closed, before);
                fresh.extend(children(&self.tail, 0));
                fresh
            }
        };
        // The forced layout read, then the scroll to the end a chat makes.
        let height = self.root.scroll_height();
        let rendered = now_ms();
        self.root.set_scroll_top(height);
        for el in &fresh {
            tag(el, &id);
        }
        let mut r = self.record.borrow_mut();
        r.updates.push((
            self.surface.text().len(),
            released - self.origin,
            rendered - released,
        ));
        r.frame_ms.push(None);
        r.element_ms.push(None);
        r.inserted.push(!fresh.is_empty());
        r.awaiting_frame.push(n);
        if r.awaiting_frame.len() == 1 {
            let record = Rc::clone(&self.record);
            // After the frame's rendering: a task queued from its animation-frame callback runs
            // once the frame has been painted (rAF callbacks run before style, layout and paint).
            next_frame(move |_, _| {
                let stamp = Closure::once_into_js(move || {
                    let at = now_ms();
                    let mut r = record.borrow_mut();
                    for i in std::mem::take(&mut r.awaiting_frame) {
                        r.frame_ms[i] = Some(at);
                    }
                });
                if let Some(w) = web_sys::window() {
                    let _ = w.set_timeout_with_callback(stamp.unchecked_ref());
                }
            });
        }
    }

    /// The trace so far, with `frames`' page-wide figures (long and dropped frames), named
    /// `strategy`: Element Timing's paint times if every update has one, else the frame
    /// estimates.
    pub fn trace(&self, strategy: &str, frames: &FrameStats) -> PaintTrace {
        let r = self.record.borrow();
        // The earliest paint of this or a later update's elements: a later update's paint showed
        // this one's text too. An update that inserted nothing (whitespace) was on screen with
        // its first frame.
        let mut later = f64::INFINITY;
        let mut by_element = vec![None; r.updates.len()];
        for (i, e) in r.element_ms.iter().enumerate().rev() {
            later = later.min(e.unwrap_or(f64::INFINITY));
            by_element[i] = if r.inserted[i] {
                later.is_finite().then_some(later)
            } else {
                r.frame_ms[i]
            };
        }
        // Element Timing's times only where it reported nine in ten of the updates the screen
        // showed (Chromium leaves many text paints unreported): else the frame estimates.
        let (reported, shown) = self.element_coverage();
        let timed = self.element_timing.is_some()
            && reported * 10 >= shown * 9
            && shown > 0
            && by_element.iter().all(Option::is_some);
        let source = if timed {
            PaintSource::ElementTiming
        } else {
            PaintSource::FrameEstimate
        };
        let updates = r
            .updates
            .iter()
            .enumerate()
            .map(|(i, &(text_end, released_ms, render_ms))| {
                let painted = if timed { by_element[i] } else { r.frame_ms[i] };
                PaintedUpdate {
                    text_end,
                    released_ms,
                    // Not yet painted: the end of its rendering, the earliest it can be.
                    painted_ms: painted.map_or(released_ms + render_ms, |p| p - self.origin),
                    render_ms,
                }
            })
            .collect();
        PaintTrace {
            strategy: strategy.to_owned(),
            source,
            updates,
            long_frames: frames.long_frames.clone(),
            frames: frames.frames,
            dropped_frames: frames.dropped,
            busy_ms: r.updates.iter().map(|u| u.2).sum(),
            span_ms: frames.span_ms,
        }
    }

    /// Element Timing's coverage: of the updates the screen can have shown (those that
    /// inserted elements and were the last of their animation frame), how many it reported a
    /// paint of their own for; `(reported, shown)`.
    pub fn element_coverage(&self) -> (usize, usize) {
        let r = self.record.borrow();
        let n = r.updates.len();
        let shown: Vec<usize> = (0..n)
            .filter(|&i| r.inserted[i] && (i + 1 == n || r.frame_ms[i + 1] != r.frame_ms[i]))
            .collect();
        let reported = shown.iter().filter(|&&i| r.element_ms[i].is_some()).count();
        (reported, shown.len())
    }

    /// Whether every update so far has been through an animation frame.
    pub fn settled(&self) -> bool {
        self.record.borrow().awaiting_frame.is_empty()
    }
}

/// The element children of `parent` from index `from`.
fn children(parent: &Element, from: u32) -> Vec<Element> {
    let all = parent.children();
    (from..all.length()).filter_map(|i| all.item(i)).collect()
}

/// Marks `el` and everything in it for Element Timing as `id`.
fn tag(el: &Element, id: &str) {
    let _ = el.set_attribute("elementtiming", id);
    if let Ok(inner) = el.query_selector_all("*") {
        for i in 0..inner.length() {
            if let Some(e) = inner.item(i).and_then(|n| n.dyn_into::<Element>().ok()) {
                let _ = e.set_attribute("elementtiming", id);
            }
        }
    }
}

/// The page's frames while the surfaces drew.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FrameStats {
    /// Animation frames seen.
    pub frames: u32,
    /// Refresh intervals with no frame (gaps above 1.5 intervals).
    pub dropped: u32,
    /// Frames over 50 ms (ms since origin).
    pub long_frames: Vec<LongFrame>,
    /// How long it watched (ms).
    pub span_ms: f64,
    /// Whether the long frames came from the Long Animation Frames API.
    pub loaf: bool,
}

#[derive(Default)]
struct Watch {
    frame_times: Vec<f64>,
    loaf: Vec<LongFrame>,
    running: bool,
}

/// Watches the page's frames from `origin` until [`FrameWatch::stop`].
pub struct FrameWatch {
    origin: f64,
    watch: Rc<RefCell<Watch>>,
    loaf_observer: Option<Observer>,
}

impl FrameWatch {
    /// Starts watching, times counted from `origin`.
    pub fn start(origin: f64) -> Self {
        let watch = Rc::new(RefCell::new(Watch {
            running: true,
            ..Watch::default()
        }));
        let loaf = supports_entry_type("long-animation-frame")
            .then(|| {
                let watch = Rc::clone(&watch);
                Observer::new("long-animation-frame", move |e| {
                    let (Some(start), Some(duration)) = (num(e, "startTime"), num(e, "duration"))
                    else {
                        return;
                    };
                    if start < origin {
                        return;
                    }
                    let longest = Reflect::get(e, &"scripts".into())
                        .ok()
                        .and_then(|s| s.dyn_into::<Array>().ok())
                        .and_then(|s| {
                            s.iter().max_by(|a, b| {
                                let d = |v: &JsValue| num(v, "duration").unwrap_or(0.0);
                                d(a).total_cmp(&d(b))
                            })
                        });
                    let spent_on = longest.and_then(|s| {
                        text(&s, "sourceFunctionName").or_else(|| text(&s, "invoker"))
                    });
                    watch.borrow_mut().loaf.push(LongFrame {
                        start_ms: start - origin,
                        duration_ms: duration,
                        spent_on,
                    });
                })
            })
            .flatten();
        frame_loop(Rc::clone(&watch));
        Self {
            origin,
            watch,
            loaf_observer: loaf,
        }
    }

    /// Stops watching: the frames seen.
    pub fn stop(&self) -> FrameStats {
        let mut w = self.watch.borrow_mut();
        w.running = false;
        let times = &w.frame_times;
        let gaps: Vec<f64> = times.windows(2).map(|p| p[1] - p[0]).collect();
        let mut sorted = gaps.clone();
        sorted.sort_by(f64::total_cmp);
        let interval = sorted
            .get(sorted.len() / 2)
            .copied()
            .unwrap_or(ttft_render::FRAME_MS)
            .clamp(4.0, 50.0);
        let dropped = gaps
            .iter()
            .filter(|g| **g > 1.5 * interval)
            .map(|g| ((g / interval).round() as u32).saturating_sub(1))
            .sum();
        let loaf = self.loaf_observer.is_some();
        let long_frames = if loaf {
            w.loaf.clone()
        } else {
            times
                .windows(2)
                .filter(|p| p[1] - p[0] > LONG_FRAME_MS)
                .map(|p| LongFrame {
                    start_ms: p[0] - self.origin,
                    duration_ms: p[1] - p[0],
                    spent_on: None,
                })
                .collect()
        };
        FrameStats {
            frames: times.len() as u32,
            dropped,
            long_frames,
            span_ms: now_ms() - self.origin,
            loaf,
        }
    }
}

/// Stamps every animation frame into `watch` while it runs.
fn frame_loop(watch: Rc<RefCell<Watch>>) {
    next_frame(move |at, _| {
        let running = {
            let mut w = watch.borrow_mut();
            if w.running {
                w.frame_times.push(at);
            }
            w.running
        };
        if running {
            frame_loop(watch);
        }
    });
}
