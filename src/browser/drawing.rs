//! The live chat surface's engine (#31): while a run streams, the answer of the request the
//! stamping worker is showing ([`super::live`]) is drawn into an element the way the chosen
//! [`Strategy`] draws (released at once, per frame or smoothed, rendered whole or
//! incrementally), one answer at a time (a request that starts while another is still being
//! drawn is not drawn), and what was painted, when, is kept per answer as a
//! [`PaintTrace`] keyed by its request's send time, for the core to turn into figures
//! ([`ttft_core::report::painted`]).
//!
//! The network stamps stay in the worker: reads reach this page after they were stamped, so
//! however long drawing takes, it moves no stamp. The answer's text comes from the core's own
//! recorder fed the same bytes (the page parses nothing itself).

use std::cell::RefCell;
use std::rc::Rc;

use ttft_core::dialect::StreamEvent;
use ttft_core::paint::PaintTrace;
use ttft_core::timeline::RequestRecorder;
use ttft_render::{Arrival, FRAME_MS, Pacing, Strategy, release};
use web_sys::Element;

use super::clock::now_ms;
use super::fetch::sleep_ms;
use super::live::{self, LiveEvent};
use super::surface::{DomSurface, FrameWatch, next_frame};

/// How long an answer's last update may wait for its paint before its trace is kept (ms).
const SETTLE_MS: f64 = 1_000.0;

/// The answer being drawn.
struct Answer {
    id: u32,
    sent_epoch_ms: f64,
    /// Its t0 on the page's clock (the surface's times count from it).
    origin: f64,
    recorder: RequestRecorder,
    /// Events of the recorder's timeline already read.
    events_read: usize,
    /// Its answer text as it arrived (ms since t0).
    arrivals: Vec<Arrival>,
    /// Bytes of text handed to the surface.
    released: usize,
    /// Arrivals handed to the surface at once (strategies that release on arrival).
    pushed: usize,
    surface: DomSurface,
    frames: FrameWatch,
    /// The request is over (its last read came).
    ended: bool,
    /// A frame pump is scheduled (paced strategies).
    pumping: bool,
}

/// What a run's live drawing shares between its tap and its end.
struct Shared {
    root: Element,
    strategy: Strategy,
    current: Option<Answer>,
    /// Answers over and waiting for their last paint.
    settling: usize,
    /// The finished answers' traces, by their request's send time (wall clock, ms).
    traces: Vec<(f64, PaintTrace)>,
}

/// A run's live drawing: set up at the run's start, finished at its end.
pub struct LiveDrawing {
    shared: Rc<RefCell<Shared>>,
}

impl LiveDrawing {
    /// Starts drawing the watched answers into `root` with `strategy`.
    pub fn start(root: Element, strategy: Strategy) -> Self {
        let shared = Rc::new(RefCell::new(Shared {
            root,
            strategy,
            current: None,
            settling: 0,
            traces: Vec::new(),
        }));
        let tap = Rc::clone(&shared);
        live::set_sink(Some(Rc::new(move |e| on_event(&tap, e))));
        Self { shared }
    }

    /// Stops watching, waits (at most a second) for the answer being drawn to be painted, and
    /// hands on the strategy's id and every answer's trace by its request's send time.
    pub async fn finish(self) -> (String, Vec<(f64, PaintTrace)>) {
        live::set_sink(None);
        let deadline = now_ms() + SETTLE_MS + 2_000.0;
        let busy = |s: &Shared| s.current.is_some() || s.settling > 0;
        while busy(&self.shared.borrow()) && now_ms() < deadline {
            sleep_ms(50.0).await;
        }
        let mut s = self.shared.borrow_mut();
        // An answer cut mid-way (cancelled run) keeps what was drawn of it.
        if let Some(a) = s.current.take() {
            let strategy = s.strategy;
            s.traces.push(trace_of(&a, strategy));
        }
        (s.strategy.id().to_owned(), std::mem::take(&mut s.traces))
    }
}

/// The trace of an answer drawn with `strategy`.
fn trace_of(a: &Answer, strategy: Strategy) -> (f64, PaintTrace) {
    let frames = a.frames.stop();
    (a.sent_epoch_ms, a.surface.trace(strategy.id(), &frames))
}

/// A tap event: a read of the answer drawn (or of a new one when none is), or its end.
fn on_event(shared: &Rc<RefCell<Shared>>, event: LiveEvent) {
    let paced = {
        let mut s = shared.borrow_mut();
        let strategy = s.strategy;
        match event {
            LiveEvent::Read {
                id,
                seq,
                sent_at,
                sent_epoch_ms,
                at,
                bytes,
            } => {
                // A request whose first reads came while another answer was still being drawn
                // (smoothing can run behind the stream) is not drawn: its answer would start
                // mid-way.
                if s.current.is_none() && seq == 0 {
                    let root = s.root.clone();
                    let Some(surface) = DomSurface::new(root, strategy.mode(), sent_at) else {
                        return;
                    };
                    s.current = Some(Answer {
                        id,
                        sent_epoch_ms,
                        origin: sent_at,
                        recorder: RequestRecorder::new(sent_at, None, None),
                        events_read: 0,
                        arrivals: Vec::new(),
                        released: 0,
                        pushed: 0,
                        surface,
                        frames: FrameWatch::start(sent_at),
                        ended: false,
                        pumping: false,
                    });
                }
                let Some(a) = s.current.as_mut().filter(|a| a.id == id && !a.ended) else {
                    return;
                };
                a.recorder.on_read(at, &bytes);
                take_text(a);
            }
            LiveEvent::End { id } => {
                let Some(a) = s.current.as_mut().filter(|a| a.id == id) else {
                    return;
                };
                a.ended = true;
            }
        }
        let Some(a) = s.current.as_mut() else { return };
        match strategy.pacing(FRAME_MS) {
            // At once: the text of the arrivals this read brought, without re-deriving the
            // whole schedule on every chunk.
            Pacing::Immediate => {
                let piece: String = a.arrivals[a.pushed..]
                    .iter()
                    .map(|x| x.text.as_str())
                    .collect();
                a.pushed = a.arrivals.len();
                if !piece.is_empty() {
                    a.released += piece.len();
                    a.surface.push(&piece);
                }
                false
            }
            _ => !std::mem::replace(&mut a.pumping, true),
        }
    };
    if paced {
        pump(Rc::clone(shared));
    }
    settle_if_over(shared);
}

/// Reads the new answer text of the recorder's timeline into the answer's arrivals.
fn take_text(a: &mut Answer) {
    let tl = a.recorder.timeline();
    for e in &tl.events[a.events_read..] {
        if let StreamEvent::Content(text) = &e.event
            && e.choice.unwrap_or(0) == 0
        {
            a.arrivals.push(Arrival {
                at_ms: e.at - a.origin,
                text: text.clone(),
            });
        }
    }
    a.events_read = tl.events.len();
}

/// Hands the surface the text `strategy` releases by `now` (ms since t0) that it has not had.
fn release_due(a: &mut Answer, strategy: Strategy, now: f64) {
    let due: String = release(&a.arrivals, strategy.pacing(FRAME_MS))
        .into_iter()
        .filter(|r| r.at_ms <= now)
        .map(|r| r.text)
        .collect();
    if due.len() > a.released {
        let piece = due[a.released..].to_owned();
        a.released = due.len();
        a.surface.push(&piece);
    }
}

/// Releases what is due at every animation frame while the answer has text to release.
fn pump(shared: Rc<RefCell<Shared>>) {
    next_frame(move |_, _| {
        let again = {
            let mut s = shared.borrow_mut();
            let strategy = s.strategy;
            let Some(a) = s.current.as_mut() else { return };
            release_due(a, strategy, now_ms() - a.origin);
            let total: usize = a.arrivals.iter().map(|x| x.text.len()).sum();
            let more = !a.ended || a.released < total;
            a.pumping = more;
            more
        };
        if again {
            pump(Rc::clone(&shared));
        } else {
            settle_if_over(&shared);
        }
    });
}

/// Once the answer is over and all of it released, frees the surface for the next answer at
/// once (a closed loop sends the next request the moment this one ends) and keeps this one's
/// trace when its last update has been painted.
fn settle_if_over(shared: &Rc<RefCell<Shared>>) {
    let answer = {
        let mut s = shared.borrow_mut();
        if !s.current.as_ref().is_some_and(|a| a.ended && !a.pumping) {
            return;
        }
        s.settling += 1;
        s.current.take()
    };
    let Some(a) = answer else { return };
    let shared = Rc::clone(shared);
    wasm_bindgen_futures::spawn_local(async move {
        let deadline = now_ms() + SETTLE_MS;
        while !a.surface.settled() && now_ms() < deadline {
            sleep_ms(20.0).await;
        }
        // Element Timing's entries come a little after the frame they timed.
        sleep_ms(100.0).await;
        let mut s = shared.borrow_mut();
        let t = trace_of(&a, s.strategy);
        s.traces.push(t);
        s.settling -= 1;
    });
}
