//! Cancelling a run: one handle shared by the pool (stops starting jobs) and every request in
//! flight (aborted through its `AbortController` on the page, or by a hook that tells the
//! stamping workers); partial results are kept.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use web_sys::AbortController;

/// What else a cancel must stop.
type CancelHook = Rc<dyn Fn()>;

/// Cancels a run: aborts every request in flight and stops starting new ones.
#[derive(Clone, Default)]
pub struct RunHandle {
    cancelled: Rc<Cell<bool>>,
    active: Rc<RefCell<Vec<AbortController>>>,
    hooks: Rc<RefCell<Vec<CancelHook>>>,
}

impl RunHandle {
    /// Stops the run; partial results are kept.
    pub fn cancel(&self) {
        self.cancelled.set(true);
        for c in self.active.borrow().iter() {
            c.abort();
        }
        for hook in self.hooks.borrow().iter() {
            hook();
        }
    }

    /// Also runs `hook` on [`RunHandle::cancel`] (requests in flight elsewhere, in workers).
    pub(crate) fn on_cancel(&self, hook: impl Fn() + 'static) {
        self.hooks.borrow_mut().push(Rc::new(hook));
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
