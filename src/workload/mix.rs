//! Several workloads side by side in one run (`sl.workloads.mix` in
//! Python): e.g. hackbench in a limited container beside a batch job.
//!
//! Each part keeps its own task numbering: the mix translates between a
//! part's ids (0, 1, … in its own fork order) and the run's, so a part runs
//! exactly as it would alone, and answers for its own tasks' attributes
//! (its `with_tasks`, its group). A part's metrics come out under its name,
//! `<name>.<metric>`; the mix's own `elapsed_s` is its first finite part's.
//! The mix is finite when any part is, and is done when every finite part's
//! tasks have exited (endless parts, such as spinners, are then stopped).

use super::attrs::TaskAttrs;
use super::params::Param;
use super::{Action, Ctx, TaskSpec, Workload};
use crate::error::{CoreError, CoreResult};
use crate::sched::task::TaskId;
use crate::topology::Machine;

/// At most this many parts in one mix.
/// `sl.workloads.mix`'s parameters (`workload::params`).
pub const PARAMS: &[Param] = &[
    Param::other(
        "mix",
        "workloads",
        "a list of 1 to 16 workloads that are not mixes",
        "the workloads run side by side",
    )
    .required(),
    Param::other(
        "mix",
        "names",
        "a list of str, one per workload, or None",
        "each part's metric prefix (None: its kind, numbered when repeated)",
    ),
];

pub const MAX_PARTS: usize = 16;

struct Part {
    name: String,
    w: Box<dyn Workload>,
    /// The run's id of each of the part's tasks, by the part's id.
    global: Vec<TaskId>,
    /// The part's tasks forked and not yet exited.
    live: usize,
    /// Tasks forked.
    forked: bool,
}

/// Workloads run side by side.
pub struct Mix {
    parts: Vec<Part>,
    /// `Mix::beside`: the first part is the run's workload (its name,
    /// roles, metrics unprefixed, task columns), the others run beside it.
    main: bool,
    /// Per run task id: (part, the part's id).
    owner: Vec<(u16, TaskId)>,
    wakes: Vec<(TaskId, bool)>,
    spawns: Vec<TaskSpec>,
}

impl Mix {
    /// `parts` under `names` (unique; letters, digits, `_`, `-`).
    pub fn new(parts: Vec<(String, Box<dyn Workload>)>) -> CoreResult<Self> {
        if parts.is_empty() || parts.len() > MAX_PARTS {
            return Err(CoreError::invalid(
                "workloads",
                format!("a list of {}", parts.len()),
                format!("1 to {MAX_PARTS} workloads"),
            ));
        }
        for (i, (n, _)) in parts.iter().enumerate() {
            let ok = !n.is_empty()
                && n.len() <= 32
                && n.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
            if !ok {
                return Err(CoreError::invalid(
                    "names",
                    format!("{n:?}"),
                    "1 to 32 characters of letters, digits, '_' and '-'",
                ));
            }
            if parts[..i].iter().any(|(m, _)| m == n) {
                return Err(CoreError::invalid(
                    "names",
                    format!("{n:?} twice"),
                    "a unique name per workload",
                ));
            }
        }
        if parts
            .iter()
            .filter(|(_, w)| w.rt_kthreads().is_some())
            .count()
            > 1
        {
            return Err(CoreError::invalid(
                "workloads",
                "two workloads with rt_kthreads",
                "at most one part with RT kernel threads (they are the machine's)",
            ));
        }
        Ok(Mix::from_parts(parts, false))
    }

    /// A mix of `parts` (name, workload), none forked yet; `main`: as
    /// [`Mix::beside`] makes it.
    fn from_parts(parts: Vec<(String, Box<dyn Workload>)>, main: bool) -> Self {
        Mix {
            parts: parts
                .into_iter()
                .map(|(name, w)| Part {
                    name,
                    w,
                    global: Vec::new(),
                    live: 0,
                    forked: false,
                })
                .collect(),
            main,
            owner: Vec::new(),
            wakes: Vec::new(),
            spawns: Vec::new(),
        }
    }

    /// `main` as the run's workload with `other` beside it (the machine's
    /// RT kernel threads, `kthreads::Kthreads`): the run looks like `main`
    /// alone — its name, roles, task attributes, metrics (unprefixed) and
    /// task columns — with `other`'s tasks added. `main`'s tasks keep their
    /// own numbering, as in any mix.
    pub fn beside(main: Box<dyn Workload>, other: Box<dyn Workload>) -> Self {
        let other_name = other.name().to_string();
        Mix::from_parts(vec![("main".into(), main), (other_name, other)], true)
    }

    /// Run part `p`'s `init` (task `None`) or `step` with a context of its
    /// own ids, then hand its wake-ups and forks to the run's context.
    fn with_part(&mut self, p: usize, task: Option<TaskId>, ctx: &mut Ctx) -> Action {
        let mut wakes = std::mem::take(&mut self.wakes);
        let mut spawns = std::mem::take(&mut self.spawns);
        let action = {
            let part = &mut self.parts[p];
            let next_local = part.global.len() as TaskId;
            let outer: &dyn Fn(TaskId) -> bool = ctx.running;
            let global = &part.global;
            let running = |x: TaskId| global.get(x as usize).is_some_and(|&g| outer(g));
            let mut sub = Ctx::part_of(ctx, &running, &mut wakes, &mut spawns, next_local);
            match task {
                None => {
                    part.w.init(&mut sub);
                    Action::Block
                }
                Some(t) => part.w.step(t, &mut sub),
            }
        };
        for spec in spawns.drain(..) {
            let id = ctx.spawn(spec);
            let part = &mut self.parts[p];
            part.global.push(id);
            part.live += 1;
            part.forked = true;
            debug_assert_eq!(self.owner.len(), id as usize);
            self.owner.push((p as u16, part.global.len() as TaskId - 1));
        }
        for (t, sync) in wakes.drain(..) {
            if let Some(&g) = self.parts[p].global.get(t as usize) {
                ctx.wake(g, sync);
            }
        }
        self.wakes = wakes;
        self.spawns = spawns;
        if matches!(action, Action::Exit) {
            self.parts[p].live -= 1;
        }
        action
    }
}

impl Workload for Mix {
    fn name(&self) -> &'static str {
        if self.main {
            self.parts[0].w.name()
        } else {
            "mix"
        }
    }
    fn roles(&self) -> &'static [&'static str] {
        if self.main {
            self.parts[0].w.roles()
        } else {
            &[]
        }
    }
    fn task_attrs(&self) -> &[TaskAttrs] {
        if self.main {
            self.parts[0].w.task_attrs()
        } else {
            &[]
        }
    }
    fn kthread(&self, task: TaskId) -> bool {
        self.owner
            .get(task as usize)
            .is_some_and(|&(p, local)| self.parts[p as usize].w.kthread(local))
    }
    fn start_asleep_ns(&self, task: TaskId) -> Option<u64> {
        let &(p, local) = self.owner.get(task as usize)?;
        self.parts[p as usize].w.start_asleep_ns(local)
    }
    fn stall_reason(&self, task: TaskId) -> Option<String> {
        let &(p, local) = self.owner.get(task as usize)?;
        let part = &self.parts[p as usize];
        let reason = part.w.stall_reason(local)?;
        // Beside a workload, its own reasons are the run's.
        Some(if self.main && p == 0 {
            reason
        } else {
            format!("{} (workload {:?})", reason, part.name)
        })
    }
    fn task_attrs_of(&self, task: TaskId) -> &[TaskAttrs] {
        match self.owner.get(task as usize) {
            Some(&(p, local)) => self.parts[p as usize].w.task_attrs_of(local),
            None => &[],
        }
    }
    fn initial_wakee_flips(&self, task: TaskId) -> u32 {
        self.owner.get(task as usize).map_or(0, |&(p, local)| {
            self.parts[p as usize].w.initial_wakee_flips(local)
        })
    }
    fn all_task_attrs(&self) -> Vec<&TaskAttrs> {
        self.parts
            .iter()
            .flat_map(|p| p.w.all_task_attrs())
            .collect()
    }
    fn for_machine(&mut self, machine: &Machine) {
        for p in &mut self.parts {
            p.w.for_machine(machine);
        }
    }
    fn validate(&self, machine: &Machine) -> CoreResult<()> {
        self.parts.iter().try_for_each(|p| p.w.validate(machine))
    }
    fn init(&mut self, ctx: &mut Ctx) {
        for p in 0..self.parts.len() {
            self.with_part(p, None, ctx);
        }
    }
    fn step(&mut self, task: TaskId, ctx: &mut Ctx) -> Action {
        let (p, local) = self.owner[task as usize];
        self.with_part(p as usize, Some(local), ctx)
    }
    fn nr_tasks(&self) -> u64 {
        self.parts.iter().map(|p| p.w.nr_tasks()).sum()
    }
    fn nr_tasks_on(&self, nr_cpus: usize) -> u64 {
        self.parts.iter().map(|p| p.w.nr_tasks_on(nr_cpus)).sum()
    }
    fn finite(&self) -> bool {
        self.parts.iter().any(|p| p.w.finite())
    }
    fn done(&self) -> bool {
        self.parts
            .iter()
            .filter(|p| p.w.finite())
            .all(|p| p.forked && (p.live == 0 || p.w.done()))
    }
    fn metrics(&self, elapsed_ns: u64) -> Vec<(&'static str, f64)> {
        let _ = elapsed_ns;
        Vec::new()
    }
    fn named_metrics(&self, elapsed_ns: u64, task_cpu: &[(u64, u64)]) -> Vec<(String, f64)> {
        if self.main {
            let p = &self.parts[0];
            let own: Vec<(u64, u64)> = p
                .global
                .iter()
                .map(|&g| task_cpu.get(g as usize).copied().unwrap_or((0, 0)))
                .collect();
            return p.w.named_metrics(elapsed_ns, &own);
        }
        let mut out = Vec::new();
        let mut elapsed = None;
        for p in &self.parts {
            let own: Vec<(u64, u64)> = p
                .global
                .iter()
                .map(|&g| task_cpu.get(g as usize).copied().unwrap_or((0, 0)))
                .collect();
            for (k, v) in p.w.named_metrics(elapsed_ns, &own) {
                if k == "elapsed_s" && elapsed.is_none() && p.w.finite() {
                    elapsed = Some(v);
                }
                out.push((format!("{}.{k}", p.name), v));
            }
        }
        if let Some(e) = elapsed {
            out.insert(0, ("elapsed_s".to_string(), e));
        }
        out
    }
    fn process_name(&self, leader: &str) -> String {
        self.parts
            .first()
            .map_or_else(|| leader.to_string(), |p| p.w.process_name(leader))
    }
    fn rt_kthreads(&self) -> Option<&crate::workload::rt_kthreads::RtKthreads> {
        self.parts.iter().find_map(|p| p.w.rt_kthreads())
    }
    fn task_columns(&self, nr_tasks: usize) -> Vec<(&'static str, Vec<f64>)> {
        if !self.main {
            return Vec::new();
        }
        // The main part's columns, by run task id (NaN for the others).
        let p = &self.parts[0];
        p.w.task_columns(p.global.len())
            .into_iter()
            .map(|(name, local)| {
                let mut col = vec![f64::NAN; nr_tasks];
                for (l, &g) in p.global.iter().enumerate() {
                    if let (Some(v), Some(slot)) = (local.get(l), col.get_mut(g as usize)) {
                        *slot = *v;
                    }
                }
                (name, col)
            })
            .collect()
    }
}
