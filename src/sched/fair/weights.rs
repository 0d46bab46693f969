//! Nice levels, load weights and the fixed-point `calc_delta_mine()`
//! arithmetic (kernel/sched.c 2.6.36; `sched_prio_to_weight` in later
//! kernels, unchanged).

/// `prio_to_weight[40]`, nice −20 … +19.
pub const PRIO_TO_WEIGHT: [u64; 40] = [
    88761, 71755, 56483, 46273, 36291, //
    29154, 23254, 18705, 14949, 11916, //
    9548, 7620, 6100, 4904, 3906, //
    3121, 2501, 1991, 1586, 1277, //
    1024, 820, 655, 526, 423, //
    335, 272, 215, 172, 137, //
    110, 87, 70, 56, 45, //
    36, 29, 23, 18, 15,
];

/// `prio_to_wmult[40]`: 2^32 / weight, as the kernel precomputes it.
pub const PRIO_TO_WMULT: [u64; 40] = [
    48388, 59856, 76040, 92818, 118348, //
    147320, 184698, 229616, 287308, 360437, //
    449829, 563644, 704093, 875809, 1099582, //
    1376151, 1717300, 2157191, 2708050, 3363326, //
    4194304, 5237765, 6557202, 8165337, 10153587, //
    12820798, 15790321, 19976592, 24970740, 31350126, //
    39045157, 49367440, 61356676, 76695844, 95443717, //
    119304647, 148102320, 186737708, 238609294, 286331153,
];

pub const NICE_0_LOAD: u64 = 1024;
pub const WMULT_SHIFT: u32 = 32;

/// Weight and inverse weight of a nice level (−20..=19).
pub fn nice_weight(nice: i32) -> (u64, u64) {
    let i = (nice.clamp(-20, 19) + 20) as usize;
    (PRIO_TO_WEIGHT[i], PRIO_TO_WMULT[i])
}

/// `WEIGHT_IDLEPRIO` / `WMULT_IDLEPRIO` (kernel/sched.c 2.6.36,
/// kernel/sched/sched.h 6.18): a SCHED_IDLE task's load weight.
pub const WEIGHT_IDLEPRIO: u64 = 3;
pub const WMULT_IDLEPRIO: u64 = 1_431_655_765;

/// `set_load_weight(p)`: SCHED_IDLE's fixed weight, else the nice level's.
pub fn task_weight(policy: crate::sched::task::Policy, nice: i32) -> (u64, u64) {
    if policy == crate::sched::task::Policy::Idle {
        (WEIGHT_IDLEPRIO, WMULT_IDLEPRIO)
    } else {
        nice_weight(nice)
    }
}

/// `calc_delta_mine(delta_exec, weight, lw)` (kernel/sched.c 2.6.36):
/// `delta_exec · weight / lw.weight` in 32.32 fixed point with the kernel's
/// rounding. Simplification: the product is formed in 128 bits instead of the
/// kernel's split shift when it exceeds 2^32, so very long deltas are exact
/// rather than approximated.
pub fn calc_delta_mine(delta: u64, weight: u64, lw_weight: u64, lw_inv: u64) -> u64 {
    let inv = if lw_inv != 0 {
        lw_inv as u128
    } else {
        ((1u128 << WMULT_SHIFT) / lw_weight.max(1) as u128).max(1)
    };
    let prod = delta as u128 * weight as u128 * inv;
    let rounded = (prod + (1u128 << (WMULT_SHIFT - 1))) >> WMULT_SHIFT;
    rounded.min(u64::MAX as u128) as u64
}

/// `calc_delta_fair(delta, se)`: wall time → virtual time of an entity.
pub fn calc_delta_fair(delta: u64, weight: u64, inv_weight: u64) -> u64 {
    if weight == NICE_0_LOAD {
        delta
    } else {
        calc_delta_mine(delta, NICE_0_LOAD, weight, inv_weight)
    }
}

/// `__update_inv_weight()` (kernel/sched/fair.c, 3.x-6.18): `WMULT_CONST /
/// w` for a weight outside the nice table (a task group's flattened
/// weight, `sched::group`).
pub fn inv_weight(w: u64) -> u64 {
    const WMULT_CONST: u64 = u32::MAX as u64;
    match w {
        0 => WMULT_CONST,
        w if w >= WMULT_CONST => 1,
        w => WMULT_CONST / w,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wmult_is_the_inverse_of_weight() {
        for i in 0..40 {
            let exact = (1u64 << 32) as f64 / PRIO_TO_WEIGHT[i] as f64;
            assert!(
                (PRIO_TO_WMULT[i] as f64 - exact).abs() / exact < 1e-4,
                "{i}"
            );
        }
    }

    #[test]
    fn fair_delta_scales_by_weight() {
        let (w, inv) = nice_weight(5);
        // 1 ms of a nice-5 task is 1024/335 ms of virtual time.
        let v = calc_delta_fair(1_000_000, w, inv);
        assert!((v as f64 - 1_000_000.0 * 1024.0 / 335.0).abs() < 2.0);
        assert_eq!(calc_delta_fair(1234, 1024, 4194304), 1234);
    }
}
