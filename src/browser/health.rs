//! Watches the tab while a run streams, for the client-health verdict
//! ([`ttft_core::client_health`]): how late the page's own timers fire (main-thread lag: a busy
//! page delays every callback, including a stamp taken on the page) and when the tab is hidden
//! (browsers throttle hidden tabs' timers to once a second or less).
//!
//! A chain of `setTimeout`s, each due [`TIMER_PERIOD_MS`] after the last one fired, records how
//! late it fired; `visibilitychange` records the hidden intervals. Both cost a few microseconds
//! every 50 ms and run on the page's thread, never in the stamping workers.

use std::cell::RefCell;
use std::rc::Rc;

use ttft_core::client_health::HealthSamples;
use wasm_bindgen::JsCast;
use wasm_bindgen::closure::Closure;

use super::clock::now_ms;

/// How often the lag probe fires (ms): fine enough to catch a frame-long stall, rare enough to
/// cost nothing measurable.
pub const TIMER_PERIOD_MS: f64 = 50.0;

/// The lag timer's callback, shared with itself so that each tick schedules the next.
type Tick = Rc<RefCell<Option<Closure<dyn FnMut()>>>>;

#[derive(Default)]
struct Recorded {
    lag: Vec<(f64, f64)>,
    hidden: Vec<(f64, f64)>,
    hidden_since: Option<f64>,
    due: f64,
    timer: Option<i32>,
    stopped: bool,
}

/// The probe of one run; [`HealthMonitor::finish`] stops it and hands over what it saw.
pub struct HealthMonitor {
    started: f64,
    recorded: Rc<RefCell<Recorded>>,
    tick: Tick,
    visibility: Closure<dyn FnMut()>,
}

fn hidden_now() -> bool {
    web_sys::window()
        .and_then(|w| w.document())
        .is_some_and(|d| d.hidden())
}

fn schedule(tick: &Tick) -> Option<i32> {
    let w = web_sys::window()?;
    let t = tick.borrow();
    let f = t.as_ref()?;
    w.set_timeout_with_callback_and_timeout_and_arguments_0(
        f.as_ref().unchecked_ref(),
        TIMER_PERIOD_MS as i32,
    )
    .ok()
}

impl HealthMonitor {
    /// Starts watching (times are kept from this moment, the run's start).
    pub fn start() -> Self {
        let started = now_ms();
        let recorded = Rc::new(RefCell::new(Recorded {
            due: started + TIMER_PERIOD_MS,
            hidden_since: hidden_now().then_some(0.0),
            ..Recorded::default()
        }));
        let tick: Tick = Rc::new(RefCell::new(None));
        let (rec, again) = (Rc::clone(&recorded), Rc::clone(&tick));
        *tick.borrow_mut() = Some(Closure::new(move || {
            let now = now_ms();
            {
                let mut r = rec.borrow_mut();
                if r.stopped {
                    return;
                }
                let due = r.due;
                r.lag.push((due - started, (now - due).max(0.0)));
                r.due = now + TIMER_PERIOD_MS;
            }
            let id = schedule(&again);
            rec.borrow_mut().timer = id;
        }));
        recorded.borrow_mut().timer = schedule(&tick);
        let rec = Rc::clone(&recorded);
        let visibility: Closure<dyn FnMut()> = Closure::new(move || {
            let at = now_ms() - started;
            let mut r = rec.borrow_mut();
            match (hidden_now(), r.hidden_since) {
                (true, None) => r.hidden_since = Some(at),
                (false, Some(from)) => {
                    r.hidden.push((from, at));
                    r.hidden_since = None;
                }
                _ => {}
            }
        });
        if let Some(d) = web_sys::window().and_then(|w| w.document()) {
            let _ = d.add_event_listener_with_callback(
                "visibilitychange",
                visibility.as_ref().unchecked_ref(),
            );
        }
        Self {
            started,
            recorded,
            tick,
            visibility,
        }
    }

    /// Stops watching; what the tab did from the start until now.
    pub fn finish(self) -> HealthSamples {
        let run_ms = now_ms() - self.started;
        self.stop();
        let mut r = self.recorded.borrow_mut();
        if let Some(from) = r.hidden_since.take() {
            r.hidden.push((from, run_ms));
        }
        HealthSamples {
            lag: std::mem::take(&mut r.lag),
            timer_period_ms: TIMER_PERIOD_MS,
            hidden: std::mem::take(&mut r.hidden),
            run_ms,
        }
    }

    /// Removes the listener and the pending timer, then drops the timer's closure (which holds
    /// itself to schedule the next tick); safe to call twice.
    fn stop(&self) {
        if let Some(d) = web_sys::window().and_then(|w| w.document()) {
            let _ = d.remove_event_listener_with_callback(
                "visibilitychange",
                self.visibility.as_ref().unchecked_ref(),
            );
        }
        let mut r = self.recorded.borrow_mut();
        r.stopped = true;
        if let (Some(id), Some(w)) = (r.timer.take(), web_sys::window()) {
            w.clear_timeout_with_handle(id);
        }
        drop(r);
        self.tick.borrow_mut().take();
    }
}

impl Drop for HealthMonitor {
    fn drop(&mut self) {
        self.stop();
    }
}
