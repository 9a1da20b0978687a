//! Scraping the server's `/metrics` while a run streams: one `GET` before the run, one once its
//! warm-ups are over (the baseline the histogram deltas start from, so the server's figures
//! leave the warm-ups out as the client's do), one a second during it, and one after. Each
//! answer is kept raw (`ttft_core::server_metrics::Scrape`, timed from the run's start like
//! every request); the core turns them into series and server-side percentiles. Not on the
//! timestamp path: the reads are stamped in the stamping workers, and a scrape costs the page
//! one small fetch.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use leptos::prelude::set_timeout_with_handle;

use ttft_core::server_metrics::{Scrape, scrape_refused_advice};

use super::clock::now_ms;
use super::fetch::sleep_ms;

/// Time between two scrapes during a run.
const PERIOD_MS: f64 = 1_000.0;
/// How long a scrape may take before it is dropped (a hung `/metrics` must not hold the run).
const TIMEOUT_MS: i32 = 2_000;

/// Why a scrape failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ScrapeError {
    /// Refused or unreachable: what to do.
    #[error("{0}")]
    Refused(String),
    /// An error status.
    #[error(
        "{url} answered HTTP {status}: is this the server's metrics URL? (edit it in the endpoint panel)"
    )]
    Status {
        /// The metrics URL.
        url: String,
        /// Its status.
        status: u16,
    },
}

/// One `GET` of the metrics URL: the exposition text. Aborted after 2 s (`TIMEOUT_MS`).
pub async fn scrape_once(url: &str) -> Result<String, ScrapeError> {
    let refused = || ScrapeError::Refused(scrape_refused_advice(url, &super::page_origin()));
    let abort = web_sys::AbortController::new().ok();
    let timer = abort.as_ref().and_then(|a| {
        let a = a.clone();
        set_timeout_with_handle(
            move || a.abort(),
            std::time::Duration::from_millis(TIMEOUT_MS as u64),
        )
        .ok()
    });
    let sent = gloo_net::http::Request::get(url)
        .abort_signal(abort.as_ref().map(|a| a.signal()).as_ref())
        .send()
        .await;
    let read = async {
        let resp = sent.map_err(|_| refused())?;
        if !resp.ok() {
            return Err(ScrapeError::Status {
                url: url.to_owned(),
                status: resp.status(),
            });
        }
        resp.text().await.map_err(|_| refused())
    }
    .await;
    if let Some(t) = timer {
        t.clear();
    }
    read
}

/// A run's scrapes, taken in the background until [`MetricsScraper::finish`]; times are on
/// the page clock until then.
pub struct MetricsScraper {
    url: String,
    scrapes: Rc<RefCell<Vec<Scrape>>>,
    stop: Rc<Cell<bool>>,
}

impl MetricsScraper {
    /// Takes the baseline scrape now; on success, and when `during` (the scrapes take no
    /// connection the run needs), keeps scraping every second in the background.
    pub async fn start(url: String, during: bool) -> Result<Self, ScrapeError> {
        let first = scrape_once(&url).await?;
        let scrapes = Rc::new(RefCell::new(vec![Scrape::new(now_ms(), &first)]));
        let stop = Rc::new(Cell::new(!during));
        let (u, s, st) = (url.clone(), scrapes.clone(), stop.clone());
        leptos::task::spawn_local(async move {
            while !st.get() {
                sleep_ms(PERIOD_MS).await;
                if st.get() {
                    break;
                }
                // A missed scrape during the run leaves a gap in the series, nothing more.
                if let Ok(text) = scrape_once(&u).await
                    && !st.get()
                {
                    s.borrow_mut().push(Scrape::new(now_ms(), &text));
                }
            }
        });
        Ok(Self { url, scrapes, stop })
    }

    /// Takes one scrape when awaited, marked as the one after the warm-ups
    /// (`Scrape::after_warmups`); a failed one leaves the first scrape as the baseline, and the
    /// server view says the warm-ups are in. Nothing else is in flight then, so it delays no
    /// request even where scrapes share the run's connections.
    pub fn after_warmups(&self) -> futures_util::future::LocalBoxFuture<'static, ()> {
        let (url, scrapes) = (self.url.clone(), self.scrapes.clone());
        Box::pin(async move {
            if let Ok(text) = scrape_once(&url).await {
                scrapes
                    .borrow_mut()
                    .push(Scrape::new(now_ms(), &text).marked_after_warmups());
            }
        })
    }

    /// Stops the background scrapes, takes the last one (the end of the deltas) and returns
    /// them all in time order, timed from `run_start` (page clock) like the run's requests.
    pub async fn finish(self, run_start: f64) -> Vec<Scrape> {
        self.stop.set(true);
        if let Ok(text) = scrape_once(&self.url).await {
            self.scrapes.borrow_mut().push(Scrape::new(now_ms(), &text));
        }
        let mut out = self.scrapes.take();
        for s in &mut out {
            s.at_ms -= run_start;
        }
        out.sort_by(|a, b| a.at_ms.total_cmp(&b.at_ms));
        out
    }
}
