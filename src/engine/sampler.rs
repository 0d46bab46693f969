//! The vmstat-style sampler: every interval, the interval's interrupts,
//! context switches and user/system/idle split, the instantaneous run-queue
//! total (`r`), each CPU's busy fraction (the CPU timeline) and each CPU's
//! instantaneous run-queue length (`cfs.nr_running`, the running task
//! included, as `r` counts it).

use crate::sched::rq::Rq;

#[derive(Clone, Debug, Default)]
pub struct Sampler {
    ncpus: usize,
    last_time: u64,
    last_cs: u64,
    last_irq: u64,
    last_user: u64,
    last_sys: u64,
    last_idle: u64,
    last_busy: Vec<u64>,
    pub time_ns: Vec<u64>,
    pub len_ns: Vec<u64>,
    pub r: Vec<u64>,
    pub irqs: Vec<u64>,
    pub cs: Vec<u64>,
    pub user_ns: Vec<u64>,
    pub sys_ns: Vec<u64>,
    pub idle_ns: Vec<u64>,
    /// Row-major (interval, cpu) busy fractions.
    pub busy: Vec<f64>,
    /// Row-major (interval, cpu) run-queue lengths at the interval's end.
    pub nr_running: Vec<u32>,
}

impl Sampler {
    pub fn new(ncpus: usize) -> Self {
        Sampler {
            ncpus,
            last_busy: vec![0; ncpus],
            ..Default::default()
        }
    }

    pub fn ncpus(&self) -> usize {
        self.ncpus
    }

    /// Close the interval ending at `now`. The CPUs must be synced to `now`.
    pub fn sample(&mut self, now: u64, rqs: &[Rq], nr_running: usize) {
        let len = now - self.last_time;
        if len == 0 {
            return;
        }
        let (mut cs, mut irq, mut user, mut sys, mut idle) = (0, 0, 0, 0, 0);
        for (i, rq) in rqs.iter().enumerate() {
            cs += rq.nr_switches;
            irq += rq.irqs;
            user += rq.user_ns;
            sys += rq.sys_ns;
            idle += rq.idle_ns;
            let busy = rq.user_ns + rq.sys_ns;
            self.busy
                .push((busy - self.last_busy[i]) as f64 / len as f64);
            self.last_busy[i] = busy;
            self.nr_running.push(rq.nr_running());
        }
        self.time_ns.push(now);
        self.len_ns.push(len);
        self.r.push(nr_running as u64);
        self.cs.push(cs - self.last_cs);
        self.irqs.push(irq - self.last_irq);
        self.user_ns.push(user - self.last_user);
        self.sys_ns.push(sys - self.last_sys);
        self.idle_ns.push(idle - self.last_idle);
        self.last_time = now;
        self.last_cs = cs;
        self.last_irq = irq;
        self.last_user = user;
        self.last_sys = sys;
        self.last_idle = idle;
    }

    /// Close the last, possibly partial, interval.
    pub fn finish(&mut self, now: u64, rqs: &[Rq], nr_running: usize) {
        self.sample(now, rqs, nr_running);
    }

    pub fn rows(&self) -> usize {
        self.time_ns.len()
    }
}
