//! Unit tests of the 5.5+ balancer's domain-level arithmetic
//! (`fbg_v55`) on hand-built groups.

use super::*;

/// A group of `w` CPUs with full capacity each.
fn grp(w: u64, nr: u64, util: u64, runnable: u64, idle: u64) -> SgLbStats {
    SgLbStats {
        group_weight: w,
        group_capacity: w * 1024,
        sum_nr_running: nr,
        sum_h_nr_running: nr,
        group_util: util,
        group_runnable: runnable,
        idle_cpus: idle,
        group_load: util,
        ..SgLbStats::default()
    }
}

fn ctx(idle: IdleType) -> LbCtx {
    LbCtx {
        idle,
        imbalance_pct: 117,
        share_llc: false,
        numa: false,
        imb_numa_nr: 0,
        asym_cpucapacity: false,
    }
}

#[test]
fn group_types_are_ordered_as_the_kernel_enum() {
    use GroupType::*;
    let order = [
        HasSpare,
        FullyBusy,
        MisfitTask,
        SmtBalance,
        AsymPacking,
        Imbalanced,
        Overloaded,
    ];
    for (i, t) in order.iter().enumerate() {
        assert_eq!(*t as usize, i);
    }
}

/// Hand-built groups, each from one condition of group_classify() and
/// its helpers (imbalance_pct 117).
#[test]
fn group_classify_table() {
    use GroupType::*;
    let smt = |mut s: SgLbStats| {
        s.group_smt_balance = true;
        s
    };
    let asym = |mut s: SgLbStats| {
        s.group_asym_packing = true;
        s
    };
    let misfit = |mut s: SgLbStats| {
        s.group_misfit_task_load = 800;
        s
    };
    #[rustfmt::skip]
    let table: &[(&str, SgLbStats, bool, GroupType)] = &[
        ("idle group", grp(4, 0, 0, 0, 4), false, HasSpare),
        ("fewer tasks than CPUs, util saturated", grp(4, 3, 4096, 4096, 1), false, HasSpare),
        ("one task per CPU, util below capacity/1.17", grp(4, 4, 3000, 3000, 0), false, HasSpare),
        ("one task per CPU, util above capacity/1.17", grp(4, 4, 3600, 3600, 0), false, FullyBusy),
        ("one task per CPU, runnable above 1.17 x capacity", grp(4, 4, 3000, 4900, 0), false, FullyBusy),
        ("more tasks than CPUs, low util and runnable: still spare", grp(4, 5, 3000, 3000, 0), false, HasSpare),
        ("more tasks than CPUs, util above capacity/1.17", grp(4, 5, 3600, 3600, 0), false, Overloaded),
        ("more tasks than CPUs, runnable above 1.17 x capacity", grp(4, 5, 3000, 4900, 0), false, Overloaded),
        ("sgc->imbalance, not overloaded", grp(4, 4, 1000, 1000, 0), true, Imbalanced),
        ("sgc->imbalance loses to overloaded", grp(4, 5, 3600, 3600, 0), true, Overloaded),
        ("asym packing", asym(grp(4, 2, 2048, 2048, 2)), false, AsymPacking),
        ("asym packing loses to imbalanced", asym(grp(4, 2, 2048, 2048, 2)), true, Imbalanced),
        ("smt balance", smt(grp(2, 2, 1024, 1024, 0)), false, SmtBalance),
        ("smt balance loses to asym packing", asym(smt(grp(2, 2, 1024, 1024, 0))), false, AsymPacking),
        ("misfit", misfit(grp(4, 1, 800, 800, 3)), false, MisfitTask),
        ("misfit loses to smt balance", smt(misfit(grp(2, 2, 800, 800, 0))), false, SmtBalance),
    ];
    for (what, sgs, imb, want) in table {
        assert_eq!(group_classify(117, *imb, sgs), *want, "{what}");
    }
    // The two helpers are not complements: exactly full is neither.
    let full = grp(2, 2, 2048, 2048, 0);
    assert!(!group_has_capacity(117, &full) && !group_is_overloaded(117, &full));
}

#[test]
fn smt_balance_needs_an_idle_destination_and_two_tasks() {
    let two = grp(2, 2, 1024, 1024, 0);
    let one = grp(2, 1, 1024, 1024, 1);
    assert!(smt_balance(IdleType::Idle, true, &two));
    assert!(smt_balance(IdleType::NewlyIdle, true, &two));
    assert!(!smt_balance(IdleType::NotIdle, true, &two));
    assert!(!smt_balance(IdleType::Idle, false, &two));
    assert!(!smt_balance(IdleType::Idle, true, &one));
}

fn sds(local: SgLbStats, busiest: SgLbStats) -> SdLbStats {
    let mut s = SdLbStats::new();
    s.busiest = Some(1);
    s.local_stat = local;
    s.busiest_stat = busiest;
    s.total_load = local.group_load + busiest.group_load;
    s.total_capacity = local.group_capacity + busiest.group_capacity;
    s.local_group.cores = local.group_weight;
    s.busiest_group.cores = busiest.group_weight;
    s
}

fn classified(mut s: SgLbStats) -> SgLbStats {
    s.group_type = group_classify(117, false, &s);
    if s.group_type == GroupType::Overloaded {
        s.avg_load = s.group_load * 1024 / s.group_capacity;
    }
    s
}

#[test]
fn spare_local_fills_util_from_an_overloaded_group_outside_the_llc() {
    let local = classified(grp(4, 2, 1500, 1500, 2));
    let busiest = classified(grp(4, 8, 4096, 8000, 0));
    assert_eq!(busiest.group_type, GroupType::Overloaded);
    let mut s = sds(local, busiest);
    let c = ctx(IdleType::Idle);
    assert_eq!(
        calculate_imbalance(&c, &mut s),
        (MigrationType::Util, 4096 - 1500)
    );
    // Util at capacity on an idle CPU: one task.
    let mut s = sds(classified(grp(4, 3, 4200, 4200, 1)), busiest);
    assert_eq!(s.local_stat.group_type, GroupType::HasSpare);
    assert_eq!(calculate_imbalance(&c, &mut s), (MigrationType::Task, 1));
    // Same but busy: migrate_util of 0, which find_busiest_group()
    // reports as balanced.
    let c_busy = ctx(IdleType::NotIdle);
    let mut s = sds(classified(grp(4, 3, 4200, 4200, 1)), busiest);
    assert_eq!(
        calculate_imbalance(&c_busy, &mut s),
        (MigrationType::Util, 0)
    );
    // Inside the LLC, tasks are spread instead (5.10 16b0a7a1a0af):
    // idle CPUs 2 vs 0, halved.
    let llc = LbCtx {
        share_llc: true,
        ..c
    };
    let mut s = sds(local, busiest);
    assert_eq!(calculate_imbalance(&llc, &mut s), (MigrationType::Task, 1));
}

#[test]
fn spare_local_evens_tasks_with_prefer_sibling() {
    let local = classified(grp(4, 1, 1024, 1024, 3));
    let busiest = classified(grp(4, 4, 3000, 3000, 0));
    assert_eq!(busiest.group_type, GroupType::HasSpare);
    let mut s = sds(local, busiest);
    s.prefer_sibling = true;
    // (4 − 1) >> 1 = 1 task.
    let c = ctx(IdleType::Idle);
    assert_eq!(calculate_imbalance(&c, &mut s), (MigrationType::Task, 1));
    // sibling_imbalance() is 0 for a busy destination.
    let mut s2 = s;
    assert_eq!(
        calculate_imbalance(&ctx(IdleType::NotIdle), &mut s2),
        (MigrationType::Task, 0)
    );
    // Unequal cores: 4 tasks on 4 cores against 1 on 2 cores:
    // 2·4 − 4·1 = 4 → (2·4 + 6) / 6 = 2.
    s.local_group.cores = 2;
    assert_eq!(sibling_imbalance(&c, &s), 2);
    // Against an empty local group: 2·4 = 8 → (2·8 + 6) / 6 = 3.
    let mut e = s;
    e.local_stat.sum_nr_running = 0;
    assert_eq!(sibling_imbalance(&c, &e), 3);
    // 2 tasks on 4 cores against an empty 2-core group: (2·2 + 6)/6 = 1,
    // raised to 2 to use the empty group.
    e.busiest_stat.sum_nr_running = 2;
    assert_eq!(sibling_imbalance(&c, &e), 2);
    // Without prefer_sibling, idle CPUs are evened: (3 − 0) >> 1.
    s.prefer_sibling = false;
    assert_eq!(calculate_imbalance(&c, &mut s), (MigrationType::Task, 1));
}

#[test]
fn numa_allows_a_small_imbalance_while_the_destination_is_light() {
    assert_eq!(adjust_numa_imbalance(2, 1, 4), 0);
    assert_eq!(adjust_numa_imbalance(3, 1, 4), 3);
    assert_eq!(adjust_numa_imbalance(2, 5, 4), 2);
    let local = classified(grp(4, 0, 0, 0, 4));
    let busiest = classified(grp(4, 2, 2048, 2048, 2));
    let mut s = sds(local, busiest);
    s.prefer_sibling = true;
    let numa = LbCtx {
        numa: true,
        imb_numa_nr: 2,
        ..ctx(IdleType::Idle)
    };
    // 2 tasks apart: ignored, a communicating pair stays together.
    assert_eq!(calculate_imbalance(&numa, &mut s), (MigrationType::Task, 0));
}

#[test]
fn overloaded_groups_move_load_on_avg_load() {
    // Local: 5 tasks on 4 CPUs, load 5·1024; busiest: 8 tasks, 8·1024.
    let mut l = grp(4, 5, 4096, 5000, 0);
    l.group_load = 5 * 1024;
    let mut b = grp(4, 8, 4096, 8000, 0);
    b.group_load = 8 * 1024;
    let (l, b) = (classified(l), classified(b));
    assert_eq!(l.group_type, GroupType::Overloaded);
    assert_eq!((l.avg_load, b.avg_load), (1280, 2048));
    let mut s = sds(l, b);
    let c = ctx(IdleType::NotIdle);
    let got = fbg_decision(&c, &mut s);
    // Domain average 13·1024·1024/8192 = 1664; min((2048 − 1664)·4096,
    // (1664 − 1280)·4096) / 1024 = 1536.
    assert_eq!(s.avg_load, 1664);
    assert_eq!(got, Some((MigrationType::Load, 1536)));
    // Within imbalance_pct: 100·busiest <= 117·local is balanced.
    let mut b2 = grp(4, 6, 4096, 6000, 0);
    b2.group_load = 5800;
    let mut s = sds(l, classified(b2));
    assert_eq!(fbg_decision(&c, &mut s), None);
}

#[test]
fn fully_busy_local_takes_load_only_below_average() {
    let mut l = grp(4, 4, 3600, 3600, 0);
    l.group_load = 4 * 1024;
    let mut b = grp(4, 8, 4096, 8000, 0);
    b.group_load = 8 * 1024;
    let (l, b) = (classified(l), classified(b));
    assert_eq!(l.group_type, GroupType::FullyBusy);
    let mut s = sds(l, b);
    // local avg 1024, domain 1536, busiest 2048: min(512, 512)·4 = 2048.
    assert_eq!(
        calculate_imbalance(&ctx(IdleType::NotIdle), &mut s),
        (MigrationType::Load, 2048)
    );
    assert_eq!(s.local_stat.avg_load, 1024);
}

#[test]
fn decision_matrix() {
    let spare = classified(grp(4, 1, 1024, 1024, 3));
    let spare_busier = classified(grp(4, 4, 3000, 3000, 0));
    let full = classified(grp(4, 4, 3600, 3600, 0));
    // A busy CPU never pulls from a group that is not overloaded.
    let mut s = sds(spare, spare_busier);
    assert_eq!(fbg_decision(&ctx(IdleType::NotIdle), &mut s), None);
    // Idle: 3 idle CPUs against 0 is an imbalance: (3 − 0) >> 1 = 1.
    let mut s = sds(spare, spare_busier);
    assert_eq!(
        fbg_decision(&ctx(IdleType::Idle), &mut s),
        Some((MigrationType::Task, 1))
    );
    // One idle CPU apart is balanced.
    let mut s = sds(classified(grp(4, 3, 3000, 3000, 1)), spare_busier);
    assert_eq!(fbg_decision(&ctx(IdleType::Idle), &mut s), None);
    // Local busier than busiest: balanced.
    let mut s = sds(full, spare);
    assert_eq!(fbg_decision(&ctx(IdleType::Idle), &mut s), None);
    // Imbalanced busiest forces one task.
    let mut imb = spare;
    imb.group_type = GroupType::Imbalanced;
    let mut s = sds(full, imb);
    assert_eq!(
        fbg_decision(&ctx(IdleType::NotIdle), &mut s),
        Some((MigrationType::Task, 1))
    );
    // No busiest group.
    let mut s = sds(spare, spare);
    s.busiest = None;
    assert_eq!(fbg_decision(&ctx(IdleType::Idle), &mut s), None);
}

#[test]
fn pick_busiest_prefers_higher_types_then_type_rules() {
    let c = ctx(IdleType::Idle);
    let s = SdLbStats::new();
    let g = GroupFacts::default();
    let spare = classified(grp(4, 1, 1024, 1024, 3));
    // Anything with a task beats the initial has_spare/∞ idle slot.
    assert!(update_sd_pick_busiest(&c, &s, g, &spare));
    // No task to pull.
    assert!(!update_sd_pick_busiest(&c, &s, g, &grp(4, 0, 0, 0, 4)));
    let mut s = sds(spare, spare);
    // has_spare: fewer idle CPUs wins; equal idle needs more tasks.
    let fewer_idle = classified(grp(4, 2, 2048, 2048, 2));
    assert!(update_sd_pick_busiest(&c, &s, g, &fewer_idle));
    assert!(!update_sd_pick_busiest(&c, &s, g, &spare));
    // Overloaded beats has_spare; among overloaded the higher avg_load.
    let mut o1 = grp(4, 6, 4096, 6000, 0);
    o1.group_load = 6000;
    let o1 = classified(o1);
    assert!(update_sd_pick_busiest(&c, &s, g, &o1));
    s.busiest_stat = o1;
    let mut o2 = grp(4, 6, 4096, 6000, 0);
    o2.group_load = 5000;
    assert!(!update_sd_pick_busiest(&c, &s, g, &classified(o2)));
    // Imbalanced: the first one stays.
    let mut i = spare;
    i.group_type = GroupType::Imbalanced;
    s.busiest_stat = i;
    assert!(!update_sd_pick_busiest(&c, &s, g, &i));
    // has_spare SMT vs non-SMT: a lone task on an SMT core stays.
    let mut s = sds(spare, spare);
    s.busiest_group.smt = false;
    let smt = GroupFacts { smt: true, ..g };
    let lone = classified(grp(2, 1, 1024, 1024, 1));
    assert!(!update_sd_pick_busiest(&c, &s, smt, &lone));
    assert!(update_sd_pick_busiest(
        &c,
        &s,
        smt,
        &classified(grp(2, 2, 1500, 1500, 0))
    ));
}

#[test]
fn shr_bound_relaxes_with_failures() {
    assert_eq!(shr_bound(1024, 0), 1024);
    assert_eq!(shr_bound(1024, 2), 256);
    assert_eq!(shr_bound(1024, 200), 0);
}
