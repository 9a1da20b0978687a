//! Cancelling a run: one handle shared by the pool (stops starting jobs) and every request in
//! flight (aborted through its `AbortController`); partial results are kept.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use web_sys::AbortController;

/// Cancels a run: aborts every request in flight and stops starting new ones.
#[derive(Clone, Default)]
pub struct RunHandle {
    cancelled: Rc<Cell<bool>>,
    active: Rc<RefCell<Vec<AbortController>>>,
}

impl RunHandle {
    /// Stops the run; partial results are kept.
    pub fn cancel(&self) {
        self.cancelled.set(true);
        for c in self.active.borrow().iter() {
            c.abort();
        }
    }

    /// Whether [`RunHandle::cancel`] was called.
    pub fn is_cancelled(&self) -> bool {
        self.cancelled.get()
    }

    /// A request in flight, aborted by [`RunHandle::cancel`].
    pub(crate) fn register(&self, controller: &AbortController) {
        self.active.borrow_mut().push(controller.clone());
    }

    /// The request is over.
    pub(crate) fn unregister(&self, controller: &AbortController) {
        self.active.borrow_mut().retain(|x| x != controller);
    }
}
