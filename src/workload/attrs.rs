//! Task attributes a user sets on a workload's tasks — scheduling policy,
//! RT priority, nice and CPU affinity — for all of them or per role
//! (`Workload.with_tasks` in Python). What `chrt`, `nice` and `taskset`
//! do to a benchmark on a real machine: the attributes a task is created
//! with, as `sched_setscheduler()`, `setpriority()` and
//! `sched_setaffinity()` on the benchmark's first task leave them to every
//! task it forks (`sched_fork()` inherits policy, priority and affinity).
//!
//! [`WithTasks`] wraps a workload with a list of [`TaskAttrs`]; the engine
//! asks it, at each fork, what a task of a given role gets
//! ([`resolve`]). Later entries override earlier ones, field by field.

use super::{check_cpuset, Action, Ctx, Workload};
use crate::config::{one_of_names, Bounds, NamedEnum};
use crate::error::{CoreError, CoreResult};
use crate::sched::rt::RT_PRIO;
use crate::sched::task::Policy;
use crate::sched::task::TaskId;
use crate::topology::Machine;
use crate::workload::rt_kthreads::RtKthreads;

/// `MIN_NICE`..`MAX_NICE` (include/linux/sched/prio.h).
pub const NICE: (i32, i32) = (-20, 19);
/// The same as the bindings read it: (lo, hi, what is allowed).
pub const NICE_RANGE: (i64, i64, &str) = (NICE.0 as i64, NICE.1 as i64, "-20 to 19");
/// `rt_priority` as the bindings read it (`RT_PRIO`'s range).
pub const RT_PRIO_RANGE: (i64, i64, &str) = (RT_PRIO.lo as i64, RT_PRIO.hi as i64, RT_PRIO.allowed);
/// At most this many `with_tasks` entries on one workload.
pub const MAX_ENTRIES: usize = 64;
/// CPU numbers a `cpus` entry may name before the machine is known.
pub const CPU: Bounds = Bounds {
    lo: 0,
    hi: crate::topology::MAX_CPUS as u64 - 1,
    allowed: "CPU numbers from 0 (the machine's CPUs, checked when it is known)",
};

/// One `with_tasks(...)` call: the attributes it sets (`None`: unchanged)
/// on the tasks of `role` (`None`: every task).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TaskAttrs {
    pub role: Option<String>,
    pub policy: Option<Policy>,
    pub rt_priority: Option<u32>,
    pub nice: Option<i32>,
    pub cpus: Option<Vec<u32>>,
    /// The task group (`sched::group`) the tasks are created in, by name
    /// (checked against the run's groups when it starts).
    pub group: Option<String>,
}

impl TaskAttrs {
    /// Refuse what no machine could honour, naming the parameter: an
    /// unknown role, a priority beside a fair policy (or out of 1..99),
    /// a nice level out of −20..19, an empty CPU list. (A priority on a
    /// role without an RT policy, and an RT policy whose priority no entry
    /// sets, are refused by [`WithTasks::new`], which sees every entry.)
    pub fn validate_params(&self, kind: &str, roles: &[&str]) -> CoreResult<()> {
        if let Some(r) = &self.role {
            if !roles.contains(&r.as_str()) {
                return Err(CoreError::invalid(
                    "role",
                    format!("{r:?}"),
                    format!(
                        "None (every task) or a {kind} role: {}",
                        one_of_names(roles)
                    ),
                ));
            }
        }
        if let Some(p) = self.rt_priority {
            if self.policy.is_some_and(|p| !p.is_rt()) {
                return Err(no_rt_policy(p));
            }
            RT_PRIO.check("rt_priority", p as i128)?;
        }
        if let Some(n) = self.nice {
            if !(NICE.0..=NICE.1).contains(&n) {
                return Err(CoreError::invalid("nice", n, NICE_RANGE.2));
            }
        }
        if let Some(c) = &self.cpus {
            if c.is_empty() {
                return Err(CoreError::invalid(
                    "cpus",
                    "[]",
                    "None (every CPU) or a non-empty list of CPU numbers",
                ));
            }
            for &x in c {
                CPU.check("cpus", x as i128)?;
            }
        }
        Ok(())
    }
}

/// `rt_priority` set where the task's policy is not SCHED_FIFO/SCHED_RR.
fn no_rt_policy(p: u32) -> CoreError {
    CoreError::invalid(
        "rt_priority",
        p,
        "None unless policy is \"fifo\" or \"rr\" (a priority needs an RT policy)",
    )
}

/// What a task gets: its policy, RT priority (`None` outside the RT
/// class, or when no entry set one), nice level and affinity.
#[derive(Clone, Debug, PartialEq)]
pub struct Resolved {
    pub policy: Policy,
    pub rt_priority: Option<u32>,
    pub nice: i32,
    pub cpus: Option<Vec<u32>>,
    pub group: Option<String>,
}

/// What a task of `role` gets from `attrs` (later entries win, field by
/// field) on top of the workload's own `policy`, `nice` and `cpus`. The
/// RT priority is the last one set by an entry with an RT policy; a
/// non-RT policy clears it (`sched_setscheduler()` to SCHED_OTHER sets
/// `rt_priority` 0).
pub fn resolve(
    attrs: &[TaskAttrs],
    role: &str,
    policy: Policy,
    nice: i32,
    cpus: Option<Vec<u32>>,
) -> Resolved {
    let mut r = Resolved {
        policy,
        rt_priority: None,
        nice,
        cpus,
        group: None,
    };
    for a in attrs {
        if a.role.as_deref().is_some_and(|x| x != role) {
            continue;
        }
        if let Some(p) = a.policy {
            r.policy = p;
            if !p.is_rt() {
                r.rt_priority = None;
            }
        }
        if let Some(p) = a.rt_priority {
            r.rt_priority = Some(p);
        }
        if let Some(n) = a.nice {
            r.nice = n;
        }
        if let Some(c) = &a.cpus {
            r.cpus = Some(c.clone());
        }
        if let Some(g) = &a.group {
            r.group = Some(g.clone());
        }
    }
    r
}

/// A workload whose tasks get `attrs` as they are created.
pub struct WithTasks {
    inner: Box<dyn Workload>,
    attrs: Vec<TaskAttrs>,
}

impl WithTasks {
    /// `inner` with `attrs` (each checked; at most [`MAX_ENTRIES`]).
    pub fn new(inner: Box<dyn Workload>, attrs: Vec<TaskAttrs>) -> CoreResult<Self> {
        if attrs.len() > MAX_ENTRIES {
            return Err(CoreError::invalid(
                "with_tasks",
                format!("a list of {}", attrs.len()),
                format!("at most {MAX_ENTRIES} with_tasks() entries"),
            ));
        }
        for a in &attrs {
            a.validate_params(inner.name(), inner.roles())?;
        }
        // A priority alone changes an RT task's priority (chrt -p): the
        // roles it reaches must have an RT policy by then.
        for role in inner.roles() {
            let mut policy = Policy::Normal;
            for a in attrs
                .iter()
                .filter(|a| a.role.as_deref().is_none_or(|r| r == *role))
            {
                policy = a.policy.unwrap_or(policy);
                if let Some(p) = a.rt_priority.filter(|_| !policy.is_rt()) {
                    return Err(no_rt_policy(p));
                }
            }
        }
        // sched_setscheduler(SCHED_FIFO/SCHED_RR) needs a priority of 1..99
        // (EINVAL otherwise): every role an RT policy reaches must get one.
        for role in inner.roles() {
            let r = resolve(&attrs, role, Policy::Normal, 0, None);
            if r.policy.is_rt() && r.rt_priority.is_none() {
                return Err(CoreError::invalid(
                    "rt_priority",
                    "None",
                    format!(
                        "1 to 99 with policy {:?} (the {} task(s) of role {role:?} get no priority; \
                         chrt --{} 1 is rt_priority=1)",
                        r.policy.name(),
                        inner.name(),
                        r.policy.name()
                    ),
                ));
            }
        }
        Ok(WithTasks { inner, attrs })
    }
}

impl Workload for WithTasks {
    fn name(&self) -> &'static str {
        self.inner.name()
    }
    fn roles(&self) -> &'static [&'static str] {
        self.inner.roles()
    }
    fn task_attrs(&self) -> &[TaskAttrs] {
        &self.attrs
    }
    fn for_machine(&mut self, machine: &Machine) {
        self.inner.for_machine(machine);
    }
    fn validate(&self, machine: &Machine) -> CoreResult<()> {
        for c in self.attrs.iter().filter_map(|a| a.cpus.as_deref()) {
            check_cpuset(c, machine)?;
        }
        self.inner.validate(machine)
    }
    fn init(&mut self, ctx: &mut Ctx) {
        self.inner.init(ctx)
    }
    fn initial_wakee_flips(&self, task: TaskId) -> u32 {
        self.inner.initial_wakee_flips(task)
    }
    fn step(&mut self, task: TaskId, ctx: &mut Ctx) -> Action {
        self.inner.step(task, ctx)
    }
    fn nr_tasks(&self) -> u64 {
        self.inner.nr_tasks()
    }
    fn nr_tasks_on(&self, nr_cpus: usize) -> u64 {
        self.inner.nr_tasks_on(nr_cpus)
    }
    fn finite(&self) -> bool {
        self.inner.finite()
    }
    fn metrics(&self, elapsed_ns: u64) -> Vec<(&'static str, f64)> {
        self.inner.metrics(elapsed_ns)
    }
    fn metrics_with_tasks(
        &self,
        elapsed_ns: u64,
        task_cpu: &[(u64, u64)],
    ) -> Vec<(&'static str, f64)> {
        self.inner.metrics_with_tasks(elapsed_ns, task_cpu)
    }
    fn process_name(&self, leader: &str) -> String {
        self.inner.process_name(leader)
    }
    fn task_columns(&self, nr_tasks: usize) -> Vec<(&'static str, Vec<f64>)> {
        self.inner.task_columns(nr_tasks)
    }
    fn rt_kthreads(&self) -> Option<&RtKthreads> {
        self.inner.rt_kthreads()
    }
    fn stall_reason(&self, task: TaskId) -> Option<String> {
        self.inner.stall_reason(task)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn a(role: Option<&str>, policy: Option<Policy>, nice: Option<i32>) -> TaskAttrs {
        TaskAttrs {
            role: role.map(str::to_string),
            policy,
            nice,
            ..Default::default()
        }
    }

    #[test]
    fn later_entries_override_field_by_field() {
        let attrs = [
            a(None, Some(Policy::Batch), Some(5)),
            a(Some("sender"), Some(Policy::Idle), None),
            TaskAttrs {
                role: Some("receiver".into()),
                cpus: Some(vec![1]),
                ..Default::default()
            },
        ];
        let t = |r: Resolved| (r.policy, r.nice, r.cpus);
        let s = resolve(&attrs, "sender", Policy::Normal, 0, None);
        assert_eq!(t(s), (Policy::Idle, 5, None));
        let r = resolve(&attrs, "receiver", Policy::Normal, 0, None);
        assert_eq!(t(r), (Policy::Batch, 5, Some(vec![1])));
        let m = resolve(&attrs, "main", Policy::Normal, 0, Some(vec![0]));
        assert_eq!(t(m), (Policy::Batch, 5, Some(vec![0])));
    }

    #[test]
    fn invalid_combinations_name_the_parameter() {
        let roles = &["main", "sender"];
        let bad_role = a(Some("client"), None, None);
        let e = bad_role.validate_params("hackbench", roles).unwrap_err();
        assert!(e.to_string().contains("role"), "{e}");
        assert!(e.to_string().contains("\"sender\""), "{e}");
        let prio = TaskAttrs {
            rt_priority: Some(10),
            policy: Some(Policy::Batch),
            ..Default::default()
        };
        let e = prio.validate_params("hackbench", roles).unwrap_err();
        assert!(e.to_string().contains("rt_priority"), "{e}");
        let e = a(None, None, Some(20))
            .validate_params("hackbench", roles)
            .unwrap_err();
        assert!(e.to_string().contains("nice"), "{e}");
        // An RT policy alone passes one entry's check; WithTasks::new
        // refuses it when no entry gives the role a priority.
        let fifo = a(None, Some(Policy::Fifo), None);
        assert!(fifo.validate_params("hackbench", roles).is_ok());
        let empty = TaskAttrs {
            cpus: Some(vec![]),
            ..Default::default()
        };
        assert!(empty.validate_params("hackbench", roles).is_err());
        assert!(a(Some("main"), Some(Policy::Idle), Some(-20))
            .validate_params("hackbench", roles)
            .is_ok());
    }

    #[test]
    fn rt_priority_follows_the_rt_policy() {
        let fifo = |role: Option<&str>, p: Option<u32>| TaskAttrs {
            role: role.map(str::to_string),
            policy: Some(Policy::Fifo),
            rt_priority: p,
            ..Default::default()
        };
        // Later entries override; a later RT policy without a priority
        // keeps the earlier one; a non-RT policy clears it.
        let attrs = [
            fifo(None, Some(5)),
            TaskAttrs {
                role: Some("sender".into()),
                policy: Some(Policy::Rr),
                ..Default::default()
            },
            a(Some("receiver"), Some(Policy::Batch), None),
        ];
        let s = resolve(&attrs, "sender", Policy::Normal, 0, None);
        assert_eq!((s.policy, s.rt_priority), (Policy::Rr, Some(5)));
        let r = resolve(&attrs, "receiver", Policy::Normal, 0, None);
        assert_eq!((r.policy, r.rt_priority), (Policy::Batch, None));
        let m = resolve(&attrs, "main", Policy::Normal, 0, None);
        assert_eq!((m.policy, m.rt_priority), (Policy::Fifo, Some(5)));
    }
}
