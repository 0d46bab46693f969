//! The `Kernel` profile: every tunable and every algorithm variant that
//! differs between kernel versions is a field here; presets are just values.
//! The engine branches on these fields only (one enum per variant point).

use crate::config::{Fields, NamedEnum, Value};
use crate::error::{CoreError, CoreResult};
use crate::named_enum;

named_enum! {
    /// `sysctl_sched_tunable_scaling` (kernel/sched_fair.c, 2.6.36; 3.8 same):
    /// how latency/min_granularity/wakeup_granularity scale with CPU count.
    pub enum TunableScaling { None = "none", Log = "log", Linear = "linear" }
}

named_enum! {
    /// How `idle_balance()` is throttled (kernel-facts §1).
    pub enum NewidleThrottle {
        /// No throttle: every newly idle CPU balances.
        Off = "off",
        /// 2.6.36/2.6.37/3.8: skip when `rq->avg_idle < migration_cost`.
        AvgIdle = "avg_idle",
        /// 2.6.37-rc1 (fab476228): as `avg_idle`, but `pull_task()` re-arms
        /// `avg_idle` of source and destination to 2·migration_cost.
        AvgIdleRearm = "avg_idle_rearm",
        /// 3.13: per-domain `max_newidle_lb_cost` budget with decay.
        MaxLbCost = "max_lb_cost",
    }
}

named_enum! {
    /// Buddy rules of `pick_next_entity()`/`check_preempt_wakeup()`. 2.6.36:
    /// `next` (only with NEXT_BUDDY) then `last`, last wins. 3.8: skip buddy
    /// avoided, then `last`, then `next` wins, and a preempting wakee is
    /// always marked `next`.
    pub enum BuddyRules { V2636 = "2.6.36", V38 = "3.8" }
}

named_enum! {
    /// Per-level sched-domain defaults (include/linux/topology.h): 2.6.36
    /// (MC busy_factor 1, PREFER_SIBLING at MC and CPU, SD_NODE_INIT) or 3.8
    /// (MC busy_factor 64, `sd_numa_init` levels).
    pub enum DomainDefaults { V2636 = "2.6.36", V38 = "3.8" }
}

named_enum! {
    /// `find_busiest_group()`/`load_balance()` rules. 2.6.36: one
    /// imbalance_pct test for every idle type, group_imb when max−min >
    /// 2·avg_load_per_task, NEWLY_IDLE failures count in nr_balance_failed.
    /// 3.8: the CPU_IDLE idle-CPU-count rule, group_imb on load and count,
    /// newidle failures do not count.
    pub enum LbRules { V2636 = "2.6.36", V38 = "3.8" }
}

named_enum! {
    /// `select_idle_sibling()`: 2.6.36 takes any idle allowed CPU in the
    /// SHARE_PKG_RESOURCES domains; 3.8 looks for an all-idle group under
    /// `sd_llc`.
    pub enum IdleSibling { V2636 = "2.6.36", V38 = "3.8" }
}

named_enum! {
    /// NOHZ idle-load-balancer kick: 2.6.36's first/second-pick push model
    /// with a function-call IPI; 3.8's `nohz_kick_needed()` with a
    /// reschedule IPI.
    pub enum NohzKick { V2636 = "2.6.36", V38 = "3.8" }
}

named_enum! {
    /// `sched_balance_policy` of Alex Shi's 2013 power-aware series.
    pub enum BalancePolicy { Performance = "performance", Balance = "balance", Powersaving = "powersaving" }
}

named_enum! {
    /// What the balancer calls a CPU's load: `rq->load.weight` (≤ 3.10) or
    /// the PELT runnable average (3.11+).
    pub enum LoadMetric { Instant = "instant", Pelt = "pelt" }
}

named_enum! {
    /// RT balancing: plain pull (≤ 4.0), RT_PUSH_IPI (b6366f048e0c), or the
    /// 2017 single-iterator IPI chain (4bdced5c9a29).
    pub enum RtPush { Pull = "pull", PushIpi = "push_ipi", PushIpi2017 = "push_ipi_2017" }
}

named_enum! {
    /// Fair-class pick: CFS (vruntime + buddies) or EEVDF (6.6+).
    pub enum Pick { Cfs = "cfs", Eevdf = "eevdf" }
}

named_enum! {
    /// `yield_task_fair()`: 2.6.36 keeps the yielder's vruntime (`compat_yield`
    /// moves it to the rightmost position); 2.6.39+ (ac53db596cc0) marks it
    /// the skip buddy.
    pub enum YieldImpl { UpdateCurr = "update_curr", SkipBuddy = "skip_buddy" }
}

/// A kernel version's scheduler behaviour. Times in nanoseconds.
#[derive(Clone, Debug, PartialEq)]
pub struct Kernel {
    /// The preset this profile started from; `replace()` keeps it, so a
    /// result records its base version beside the changed fields.
    pub name: String,
    /// `sysctl_sched_migration_cost` (not scaled by CPU count).
    pub migration_cost_ns: u64,
    /// `sysctl_sched_nr_migrate`.
    pub nr_migrate: u32,
    /// `normalized_sysctl_sched_latency` (before tunable scaling).
    pub latency_ns: u64,
    /// `normalized_sysctl_sched_min_granularity`.
    pub min_granularity_ns: u64,
    /// `normalized_sysctl_sched_wakeup_granularity`.
    pub wakeup_granularity_ns: u64,
    pub tunable_scaling: TunableScaling,
    /// CONFIG_HZ.
    pub hz: u32,
    pub newidle_throttle: NewidleThrottle,
    /// False removes newidle balancing (the 2013 RFC).
    pub idle_balance: bool,
    /// fab476228 (2.6.37-rc1): NEWLY_IDLE forces a balance when the local
    /// group has capacity and the busiest has none.
    pub newidle_force: bool,
    /// d5ad140bc150 (2.6.37): `idle_balance()` clears `idle_stamp` when it
    /// pulls a task.
    pub newidle_clear_stamp: bool,
    pub domain_defaults: DomainDefaults,
    pub lb_rules: LbRules,
    pub idle_sibling: IdleSibling,
    pub nohz_kick: NohzKick,
    /// `sysctl_sched_compat_yield` (2.6.23–2.6.38).
    pub compat_yield: bool,
    pub yield_impl: YieldImpl,
    pub buddy_rules: BuddyRules,
    pub balance_policy: BalancePolicy,
    pub load_metric: LoadMetric,
    pub rt_push: RtPush,
    pub pick: Pick,
    /// Feature GENTLE_FAIR_SLEEPERS: sleeper credit is half the latency.
    pub gentle_fair_sleepers: bool,
    /// Feature START_DEBIT: a new task starts one vslice to the right.
    pub start_debit: bool,
    /// Feature WAKEUP_PREEMPT (2.6.36 name; WAKEUP_PREEMPTION in 3.8).
    pub wakeup_preemption: bool,
    /// Feature LAST_BUDDY.
    pub last_buddy: bool,
    /// Feature NEXT_BUDDY.
    pub next_buddy: bool,
}

pub const KERNEL_PRESETS: &[&str] = &["v2.6.36", "v2.6.37-rc1", "v2.6.37", "v3.8", "v3.13"];

impl Kernel {
    /// 2.6.36 (kernel/sched_fair.c, kernel/sched.c as read in kernel-facts
    /// K36-F/K36-C): 6 ms latency, 0.75 ms min granularity (the 2.6.36.3
    /// tree's values, see kernel-facts §13.1), 1 ms wakeup granularity,
    /// 0.5 ms migration cost, LOG scaling.
    pub fn v2_6_36() -> Self {
        Kernel {
            name: "v2.6.36".into(),
            migration_cost_ns: 500_000,
            nr_migrate: 32,
            latency_ns: 6_000_000,
            min_granularity_ns: 750_000,
            wakeup_granularity_ns: 1_000_000,
            tunable_scaling: TunableScaling::Log,
            hz: 1000,
            newidle_throttle: NewidleThrottle::AvgIdle,
            idle_balance: true,
            newidle_force: false,
            // Upstream 2.6.36 did not clear it; the 2.6.36.3 vendor tree read
            // for kernel-facts had the back-port (§13.2).
            newidle_clear_stamp: false,
            domain_defaults: DomainDefaults::V2636,
            lb_rules: LbRules::V2636,
            idle_sibling: IdleSibling::V2636,
            nohz_kick: NohzKick::V2636,
            compat_yield: false,
            yield_impl: YieldImpl::UpdateCurr,
            buddy_rules: BuddyRules::V2636,
            balance_policy: BalancePolicy::Performance,
            load_metric: LoadMetric::Instant,
            rt_push: RtPush::Pull,
            pick: Pick::Cfs,
            gentle_fair_sleepers: true,
            start_debit: true,
            wakeup_preemption: true,
            last_buddy: true,
            next_buddy: false,
        }
    }

    /// 2.6.37-rc1: fab476228 adds the NEWLY_IDLE forced balance and makes
    /// `pull_task()` re-arm `avg_idle` (seed case 1).
    pub fn v2_6_37_rc1() -> Self {
        Kernel {
            name: "v2.6.37-rc1".into(),
            newidle_force: true,
            newidle_throttle: NewidleThrottle::AvgIdleRearm,
            ..Self::v2_6_36()
        }
    }

    /// 2.6.37: the forced balance stays; b5482cfa1c95 removes the re-arm and
    /// d5ad140bc150 clears `idle_stamp` on a newidle pull.
    pub fn v2_6_37() -> Self {
        Kernel {
            name: "v2.6.37".into(),
            newidle_force: true,
            newidle_clear_stamp: true,
            ..Self::v2_6_36()
        }
    }

    /// 3.8 (kernel/sched/fair.c, core.c, features.h; kernel-facts K38-*):
    /// yield via the skip buddy (`sched_compat_yield` gone), 3.8 buddies,
    /// domain defaults, balancer rules, `select_idle_sibling` and NOHZ kick.
    pub fn v3_8() -> Self {
        Kernel {
            name: "v3.8".into(),
            yield_impl: YieldImpl::SkipBuddy,
            buddy_rules: BuddyRules::V38,
            newidle_force: true,
            newidle_clear_stamp: true,
            domain_defaults: DomainDefaults::V38,
            lb_rules: LbRules::V38,
            idle_sibling: IdleSibling::V38,
            nohz_kick: NohzKick::V38,
            ..Self::v2_6_36()
        }
    }

    /// 3.13: Jason Low's per-domain `max_newidle_lb_cost` budget (9bd721c55c8a,
    /// f48627e686a6) on top of 3.8.
    pub fn v3_13() -> Self {
        Kernel {
            name: "v3.13".into(),
            newidle_throttle: NewidleThrottle::MaxLbCost,
            ..Self::v3_8()
        }
    }

    pub fn preset(name: &str) -> CoreResult<Self> {
        match name {
            "v2.6.36" => Ok(Self::v2_6_36()),
            "v2.6.37-rc1" => Ok(Self::v2_6_37_rc1()),
            "v2.6.37" => Ok(Self::v2_6_37()),
            "v3.8" => Ok(Self::v3_8()),
            "v3.13" => Ok(Self::v3_13()),
            _ => Err(CoreError::invalid(
                "name",
                format!("{name:?}"),
                format!("one of {}", KERNEL_PRESETS.join(", ")),
            )),
        }
    }

    /// `get_update_sysctl_factor()` (kernel/sched.c 2.6.36): 1, 1+ilog2(n)
    /// or n, with n = min(ncpus, 8).
    pub fn scaling_factor(&self, ncpus: usize) -> u64 {
        let n = ncpus.clamp(1, 8) as u64;
        match self.tunable_scaling {
            TunableScaling::None => 1,
            TunableScaling::Log => 1 + (63 - n.leading_zeros() as u64),
            TunableScaling::Linear => n,
        }
    }
}

const FIELDS: &[&str] = &[
    "migration_cost_ns",
    "nr_migrate",
    "latency_ns",
    "min_granularity_ns",
    "wakeup_granularity_ns",
    "tunable_scaling",
    "hz",
    "newidle_throttle",
    "idle_balance",
    "newidle_force",
    "newidle_clear_stamp",
    "domain_defaults",
    "lb_rules",
    "idle_sibling",
    "nohz_kick",
    "compat_yield",
    "yield_impl",
    "buddy_rules",
    "balance_policy",
    "load_metric",
    "rt_push",
    "pick",
    "gentle_fair_sleepers",
    "start_debit",
    "wakeup_preemption",
    "last_buddy",
    "next_buddy",
];

/// 10 s: far above any sane scheduler time tunable, small enough that
/// vruntime arithmetic cannot overflow.
const MAX_TUNABLE_NS: u64 = 10_000_000_000;

impl Fields for Kernel {
    const KIND: &'static str = "Kernel";

    fn field_names() -> &'static [&'static str] {
        FIELDS
    }

    fn get(&self, name: &str) -> Option<Value> {
        let i = |v: u64| Some(Value::Int(v as i64));
        let s = |v: &'static str| Some(Value::Str(v.to_string()));
        match name {
            "migration_cost_ns" => i(self.migration_cost_ns),
            "nr_migrate" => i(self.nr_migrate as u64),
            "latency_ns" => i(self.latency_ns),
            "min_granularity_ns" => i(self.min_granularity_ns),
            "wakeup_granularity_ns" => i(self.wakeup_granularity_ns),
            "tunable_scaling" => s(self.tunable_scaling.name()),
            "hz" => i(self.hz as u64),
            "newidle_throttle" => s(self.newidle_throttle.name()),
            "idle_balance" => Some(Value::Bool(self.idle_balance)),
            "newidle_force" => Some(Value::Bool(self.newidle_force)),
            "newidle_clear_stamp" => Some(Value::Bool(self.newidle_clear_stamp)),
            "domain_defaults" => s(self.domain_defaults.name()),
            "lb_rules" => s(self.lb_rules.name()),
            "idle_sibling" => s(self.idle_sibling.name()),
            "nohz_kick" => s(self.nohz_kick.name()),
            "compat_yield" => Some(Value::Bool(self.compat_yield)),
            "yield_impl" => s(self.yield_impl.name()),
            "buddy_rules" => s(self.buddy_rules.name()),
            "balance_policy" => s(self.balance_policy.name()),
            "load_metric" => s(self.load_metric.name()),
            "rt_push" => s(self.rt_push.name()),
            "pick" => s(self.pick.name()),
            "gentle_fair_sleepers" => Some(Value::Bool(self.gentle_fair_sleepers)),
            "start_debit" => Some(Value::Bool(self.start_debit)),
            "wakeup_preemption" => Some(Value::Bool(self.wakeup_preemption)),
            "last_buddy" => Some(Value::Bool(self.last_buddy)),
            "next_buddy" => Some(Value::Bool(self.next_buddy)),
            _ => None,
        }
    }

    fn set(&mut self, name: &str, v: &Value) -> CoreResult<()> {
        match name {
            "migration_cost_ns" => self.migration_cost_ns = v.as_u64(name, 0, MAX_TUNABLE_NS)?,
            "nr_migrate" => self.nr_migrate = v.as_u64(name, 1, 1_000_000)? as u32,
            "latency_ns" => self.latency_ns = v.as_u64(name, 100_000, MAX_TUNABLE_NS)?,
            "min_granularity_ns" => {
                self.min_granularity_ns = v.as_u64(name, 100_000, MAX_TUNABLE_NS)?
            }
            "wakeup_granularity_ns" => {
                self.wakeup_granularity_ns = v.as_u64(name, 0, MAX_TUNABLE_NS)?
            }
            "tunable_scaling" => self.tunable_scaling = TunableScaling::parse(name, v)?,
            "hz" => {
                let hz = v.as_u64(name, 1, 10_000)?;
                if ![100, 250, 300, 1000].contains(&hz) {
                    return Err(CoreError::invalid(name, hz, "one of 100, 250, 300, 1000"));
                }
                self.hz = hz as u32
            }
            "newidle_throttle" => self.newidle_throttle = NewidleThrottle::parse(name, v)?,
            "idle_balance" => self.idle_balance = v.as_bool(name)?,
            "newidle_force" => self.newidle_force = v.as_bool(name)?,
            "newidle_clear_stamp" => self.newidle_clear_stamp = v.as_bool(name)?,
            "domain_defaults" => self.domain_defaults = DomainDefaults::parse(name, v)?,
            "lb_rules" => self.lb_rules = LbRules::parse(name, v)?,
            "idle_sibling" => self.idle_sibling = IdleSibling::parse(name, v)?,
            "nohz_kick" => self.nohz_kick = NohzKick::parse(name, v)?,
            "compat_yield" => self.compat_yield = v.as_bool(name)?,
            "yield_impl" => self.yield_impl = YieldImpl::parse(name, v)?,
            "buddy_rules" => self.buddy_rules = BuddyRules::parse(name, v)?,
            "balance_policy" => self.balance_policy = BalancePolicy::parse(name, v)?,
            "load_metric" => self.load_metric = LoadMetric::parse(name, v)?,
            "rt_push" => self.rt_push = RtPush::parse(name, v)?,
            "pick" => self.pick = Pick::parse(name, v)?,
            "gentle_fair_sleepers" => self.gentle_fair_sleepers = v.as_bool(name)?,
            "start_debit" => self.start_debit = v.as_bool(name)?,
            "wakeup_preemption" => self.wakeup_preemption = v.as_bool(name)?,
            "last_buddy" => self.last_buddy = v.as_bool(name)?,
            "next_buddy" => self.next_buddy = v.as_bool(name)?,
            _ => return Err(Self::unknown(name)),
        }
        Ok(())
    }

    fn validate(&self) -> CoreResult<()> {
        if self.min_granularity_ns > self.latency_ns {
            return Err(CoreError::invalid(
                "min_granularity_ns",
                self.min_granularity_ns,
                format!("at most latency_ns ({})", self.latency_ns),
            ));
        }
        if self.pick == Pick::Eevdf {
            return Err(CoreError::invalid(
                "pick",
                "\"eevdf\"",
                "\"cfs\" (EEVDF is not modelled yet)",
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_scaling_matches_the_kernel() {
        let k = Kernel::v2_6_36();
        let f: Vec<u64> = [1, 2, 3, 4, 8, 64]
            .iter()
            .map(|&n| k.scaling_factor(n))
            .collect();
        assert_eq!(f, vec![1, 2, 2, 3, 4, 4]);
    }

    #[test]
    fn replace_validates_and_keeps_the_base_name() {
        let k = Kernel::v3_8();
        let k2 = k
            .replaced(&[("migration_cost_ns".into(), Value::Int(250_000))])
            .unwrap();
        assert_eq!(k2.migration_cost_ns, 250_000);
        assert_eq!(k2.name, "v3.8");
        assert!(k.replaced(&[("bogus".into(), Value::Int(1))]).is_err());
        assert!(k
            .replaced(&[("newidle_throttle".into(), Value::Str("sometimes".into()))])
            .is_err());
        assert!(k
            .replaced(&[("migration_cost_ns".into(), Value::Int(-1))])
            .is_err());
        assert!(k
            .replaced(&[("idle_balance".into(), Value::Int(1))])
            .is_err());
    }

    #[test]
    fn every_field_round_trips() {
        let k = Kernel::v2_6_36();
        for (name, v) in k.items() {
            let k2 = k.replaced(&[(name.to_string(), v.clone())]).unwrap();
            assert_eq!(k2.get(name), Some(v));
        }
    }
}
