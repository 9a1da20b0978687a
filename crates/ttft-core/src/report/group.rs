//! Runs made together (#29): the arms of one A/B run, sent interleaved (A, B, A, B, …) so that
//! drift and warm-up hit every arm alike, and the repeats of one scenario. Each arm and each
//! repeat is an ordinary [`Report`] (its charts, links and exports work as any run's); its
//! [`RunGroup`] says which set it belongs to and where in it it stands, and each of its requests
//! keeps its interleaving slot ([`RequestRecord::pair`]), so request k of arm A pairs with request
//! k of arm B ([`crate::pairing`]).

use serde::{Deserialize, Serialize};

use super::{EndpointInfo, Report, RequestRecord};

/// What a set of runs made together is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GroupKind {
    /// The arms of one A/B run: the same prompts, sent interleaved.
    Arms,
    /// The repeats of one scenario, run back to back.
    Repeats,
}

/// Which repeat an A/B run is, when the scenario was repeated: each repeat is an A/B run of its
/// own (its arms share [`RunGroup::id`]), and the repeats share this `id`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RepeatOf {
    /// Shared by every run of the repeated scenario.
    pub id: String,
    /// The repeat, 0-based.
    pub index: usize,
    /// Repeats in all.
    pub size: usize,
}

/// A run's place in a set of runs made together.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunGroup {
    /// Shared by the runs of one A/B run, or of one set of repeats.
    pub id: String,
    /// Arms or repeats.
    pub kind: GroupKind,
    /// The arm or the repeat, 0-based.
    pub index: usize,
    /// Runs in the set.
    pub size: usize,
    /// The run's short label in the set: the arm's (`model-a`, a user's label) or `repeat 2`.
    pub label: String,
    /// An A/B run that is one repeat of several: which (its arms then share [`RunGroup::id`]
    /// and the repeats share [`RepeatOf::id`]). `None` otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repeat: Option<RepeatOf>,
}

impl RunGroup {
    /// The groups of an A/B run's arms, one per label, sharing `id`.
    pub fn arms(id: &str, labels: &[String]) -> Vec<RunGroup> {
        labels
            .iter()
            .enumerate()
            .map(|(index, label)| RunGroup {
                id: id.to_owned(),
                kind: GroupKind::Arms,
                index,
                size: labels.len(),
                label: label.clone(),
                repeat: None,
            })
            .collect()
    }

    /// The group of repeat `index` (0-based) of `size`, labelled `repeat 1`, `repeat 2`, ….
    pub fn repeat(id: &str, index: usize, size: usize) -> RunGroup {
        RunGroup {
            id: id.to_owned(),
            kind: GroupKind::Repeats,
            index,
            size,
            label: format!("repeat {}", index + 1),
            repeat: None,
        }
    }

    /// The run's place in words, for titles: `A/B 1 of 2`, `repeat 3 of 5`, `A/B 2 of 2, repeat
    /// 1 of 3` (1-based, as people count).
    pub fn describe(&self) -> String {
        let own = match self.kind {
            GroupKind::Arms => format!("A/B {} of {}", self.index + 1, self.size),
            GroupKind::Repeats => format!("repeat {} of {}", self.index + 1, self.size),
        };
        match &self.repeat {
            Some(r) => format!("{own}, repeat {} of {}", r.index + 1, r.size),
            None => own,
        }
    }
}

/// One arm's part of an interleaved run, for [`Report::split_arms`].
#[derive(Debug, Clone, PartialEq)]
pub struct ArmPart {
    /// The arm's report title.
    pub title: String,
    /// Where the arm's requests went.
    pub endpoint: EndpointInfo,
    /// Its place in the A/B run.
    pub group: RunGroup,
}

impl Report {
    /// Sets the run's place in a set of runs made together.
    pub fn with_group(mut self, group: RunGroup) -> Self {
        self.group = Some(group);
        self
    }

    /// Splits an interleaved run into one report per arm: request `i` (in [`Report::requests`]
    /// order) belongs to arm `arm_of[i]` (a request beyond `arm_of`, or of an arm beyond
    /// `parts`, to none). Each arm's report keeps everything else of the run (settings, clock,
    /// client health, server scrapes: one tab and one time span measured them all), takes its
    /// part's title, endpoint and group, and numbers its requests 0, 1, … in the order they
    /// were sent (their relative order in the list is kept).
    pub fn split_arms(self, arm_of: &[usize], parts: Vec<ArmPart>) -> Vec<Report> {
        let mut per_arm: Vec<Vec<RequestRecord>> = vec![Vec::new(); parts.len()];
        let mut shell = self;
        let painted = shell.painted.take();
        for (i, r) in std::mem::take(&mut shell.requests).into_iter().enumerate() {
            if let Some(list) = arm_of.get(i).and_then(|&a| per_arm.get_mut(a)) {
                list.push(r);
            }
        }
        parts
            .into_iter()
            .zip(per_arm)
            .map(|(part, mut requests)| {
                let mut sent: Vec<u32> = requests.iter().map(|r| r.index).collect();
                sent.sort_unstable();
                for r in &mut requests {
                    r.index = sent.binary_search(&r.index).map_or(r.index, |k| k as u32);
                }
                let mut report = shell.clone();
                // The answers the surface drew go with their arm, renumbered as its requests.
                report.painted = painted.as_ref().map(|p| crate::paint::PaintedRun {
                    strategy: p.strategy.clone(),
                    requests: p
                        .requests
                        .iter()
                        .filter_map(|d| {
                            let k = sent.binary_search(&d.index).ok()?;
                            Some(crate::paint::PaintedRequest {
                                index: k as u32,
                                figures: d.figures.clone(),
                            })
                        })
                        .collect(),
                });
                report.title = part.title;
                report.endpoint = part.endpoint;
                report.group = Some(part.group);
                report.requests = requests;
                report
            })
            .collect()
    }
}
