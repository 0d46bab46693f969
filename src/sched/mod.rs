//! The scheduler model, after `kernel/sched/`: runqueue and task state
//! (`rq`, `task`: the analogue of `sched.h`; `rq->cfs_tasks` in
//! `tasklist`), CFS runqueues (`fair`),
//! the EEVDF pick (`eevdf`, 6.6+), CPU bitsets (`cpumask`), weights, per-entity
//! load tracking (`pelt`), running sums per sched group (`sg_sums`), Alex
//! Shi's power-aware balance policies (`power`, never merged), wake-up
//! placement (`wakeup`), load balancing (`balance`, and the 5.5+ balancer
//! `lb_group`), the 5.16–6.18 newidle balance (`newidle`), the cfs_rq's
//! ordered timeline (`timeline`), the balancer and PELT trace hooks
//! (`trace_hooks`) and the
//! core entry points (`core`) the engine calls. Nothing here knows the
//! workload interface: the system-call layer that interprets a workload's
//! actions is `engine::syscall`.

pub mod balance;
pub mod core;
pub mod cpumask;
pub mod eevdf;
pub mod fair;
pub mod lb_group;
pub mod newidle;
pub mod pelt;
pub mod power;
pub mod rq;
pub mod rt;
pub mod rt_class;
pub mod sg_sums;
pub mod task;
pub mod tasklist;
pub mod timeline;
pub mod trace_hooks;
pub mod wakeup;
pub mod weights;
