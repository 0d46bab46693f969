//! Every metric a run reports, gathered from where each is declared: the
//! engine's (`engine::metrics::CORE`, computed from the declaration by
//! `engine::report`), the trace's (`engine::metrics::TRACE`), the RT
//! class's (`sched::rt::RT`, computed from it too), and the optional
//! families beside their producers — the power model's
//! (`sched::power_state::POWER`), task groups' (`sched::group::GROUP`) and
//! scheduling latency's (`sched::stats::latency::LATENCY`), checked against
//! what their producers emit by `tests/api/test_metric_info.py`. The docs'
//! metric reference (`schedlab.metric_info()`, the site's "Metrics" page)
//! is generated from [`all`].
//!
//! A name may hold a placeholder in angle brackets (`cstate_<state>`,
//! `group.<group>.cpu_s`): one metric per C-state or per group. A
//! workload's own metrics (messages, throughput, schbench's percentiles,
//! …) are its own, documented with the workload.

pub use crate::config::MetricDoc;
use crate::engine::metrics::{CORE, TRACE};
use crate::sched::group::GROUP;
use crate::sched::power_state::POWER;
use crate::sched::rt::RT;
use crate::sched::stats::latency::LATENCY;

/// Every declared metric by family, in the order a run reports the
/// families (a workload's own metrics come between the trace's and the
/// power model's): the docs' metric reference.
pub fn all() -> Vec<(&'static str, MetricDoc)> {
    let mut out: Vec<(&'static str, MetricDoc)> = CORE.iter().map(|m| ("core", m.doc)).collect();
    out.extend(TRACE.iter().map(|d| ("trace", *d)));
    out.extend(POWER.iter().map(|d| ("power", *d)));
    out.extend(RT.iter().map(|m| ("rt", m.doc)));
    out.extend(GROUP.iter().map(|d| ("group", *d)));
    out.extend(LATENCY.iter().map(|d| ("latency", *d)));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_every_doc_is_filled() {
        let all = all();
        let mut names: Vec<&str> = all.iter().map(|(_, d)| d.name).collect();
        names.sort_unstable();
        let n = names.len();
        names.dedup();
        assert_eq!(names.len(), n, "a metric declared twice");
        for (_, d) in &all {
            assert!(
                !d.unit.is_empty() && !d.meaning.is_empty() && !d.source.is_empty(),
                "{d:?}"
            );
        }
    }
}
