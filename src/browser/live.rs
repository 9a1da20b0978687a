//! The live tap: the reads of the request the page's chat surface is drawing, as the stamping
//! worker stamped them (`public/stamp-worker.js` posts a watched request's reads after their
//! stamps, one request per worker at a time). A leaf: the stamper delivers, whoever set the
//! sink (the live surface) receives; with no sink, no request is watched and the worker posts
//! nothing beyond its usual capture.

use std::cell::RefCell;
use std::rc::Rc;

/// What the tap delivers, times on the page's clock (ms).
#[derive(Debug, Clone, PartialEq)]
pub enum LiveEvent {
    /// A read of a watched request.
    Read {
        /// The stamper's request id.
        id: u32,
        /// The read's place in the request (0 = its first).
        seq: u32,
        /// The request's t0.
        sent_at: f64,
        /// `performance.timeOrigin + sent_at`: the request's send time on the wall clock (ms),
        /// as its record keeps it ([`ttft_core::report::RequestRecord::sent_epoch_ms`]).
        sent_epoch_ms: f64,
        /// When the read was stamped.
        at: f64,
        /// Its bytes.
        bytes: Vec<u8>,
    },
    /// The watched request is over.
    End {
        /// The stamper's request id.
        id: u32,
    },
}

/// Receives the tap's events.
pub type LiveSink = Rc<dyn Fn(LiveEvent)>;

thread_local! {
    static SINK: RefCell<Option<LiveSink>> = const { RefCell::new(None) };
}

/// Sets (or with `None` clears) where watched reads go.
pub fn set_sink(sink: Option<LiveSink>) {
    SINK.with(|s| *s.borrow_mut() = sink);
}

/// Whether requests sent now should be watched (a sink is set).
pub fn wanted() -> bool {
    SINK.with(|s| s.borrow().is_some())
}

/// Hands `event` to the sink, if one is set.
pub fn deliver(event: LiveEvent) {
    let sink = SINK.with(|s| s.borrow().clone());
    if let Some(sink) = sink {
        sink(event);
    }
}
