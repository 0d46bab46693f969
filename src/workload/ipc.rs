//! Kernel IPC objects with their blocking and wake-up rules, for the
//! workloads (fs/pipe.c, net/unix/af_unix.c, net/core/sock.c; the rules
//! and their sources: docs/guide/workloads.md). They are passive: a
//! workload calls them from a task's step and turns the outcome into an
//! `Action`; wake-ups go through `Ctx::wake`.
//!
//! - `Mutex`: `mutex_lock()` with adaptive spinning (OWNER_SPIN, on in
//!   2.6.36 and 3.8): spin while the owner runs, else sleep; `mutex_unlock()`
//!   releases the lock and wakes the first waiter, which must take it again
//!   (a running task may steal it first, as before 4.10's hand-off); a
//!   waiter that loses keeps its place at the head of the queue.
//! - `Pipe` (fs/pipe.c, the rd_wait/wr_wait form): 16 page slots, small
//!   writes merged into the last page while it fits, readers woken only on
//!   empty → non-empty, one writer woken per slot freed from a full ring
//!   (6.14+; before, per read that began on a full ring:
//!   `Kernel::pipe_still_full_no_wake`), the next writer chained, all
//!   wake-ups sync. The pre-5.5 single wait queue (`pipe->wait`, every
//!   waiter woken, the mutex re-taken before the re-test) is not modelled.
//! - `UnixSock` (net/unix/af_unix.c): every write is one skb charged to
//!   the sending socket's `sk_wmem_alloc`; a writer blocks at `sk_sndbuf`;
//!   the reader is woken on every write; writers are woken (all of them)
//!   once the charge falls to a quarter of `sk_sndbuf`.
//! - `WaitList`: a plain wait queue (poll barrier, Java monitor, wait4).

use super::Ctx;
use crate::sched::task::TaskId;
use std::collections::VecDeque;

/// A spinner's re-check of a mutex still held past its owner's expected
/// release (one pass of `mutex_spin_on_owner()`'s loop over `owner->on_cpu`
/// and a retry of the lock's cmpxchg, with the line bouncing between CPUs).
pub const MUTEX_POLL_NS: u64 = 50;

/// What `Mutex::lock` tells the caller to do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lock {
    Acquired,
    /// Spin this long (system time), then try again.
    Spin(u64),
    /// Queued: block until `unlock` hands the lock over.
    Sleep,
}

#[derive(Clone, Debug, Default)]
pub struct Mutex {
    owner: Option<TaskId>,
    /// When the owner is expected to release it (if it keeps running).
    owner_until: u64,
    waiters: VecDeque<TaskId>,
    /// The waiter last woken by `unlock` (it keeps its place if it loses).
    woken: Option<TaskId>,
    pub spins: u64,
    pub sleeps: u64,
}

impl Mutex {
    /// `mutex_lock()` by `t`, which will hold it for `hold_ns` of CPU time.
    #[inline]
    pub fn lock(&mut self, t: TaskId, hold_ns: u64, ctx: &Ctx) -> Lock {
        let was_woken = self.woken == Some(t);
        if was_woken {
            self.woken = None;
        }
        match self.owner {
            None => {
                self.owner = Some(t);
                self.owner_until = ctx.now + hold_ns;
                Lock::Acquired
            }
            Some(o) => {
                // mutex_optimistic_spin() → mutex_spin_on_owner(): spin
                // while the owner runs — until it is expected to let go, or
                // a poll's worth past that while it still holds the lock
                // (its burst ran longer than the hold it asked for: jitter,
                // an interrupt), as the kernel spins on `owner->on_cpu`, not
                // on a time — unless this CPU must reschedule
                // (`need_resched()` ends the spin: the locker queues and
                // sleeps in __mutex_lock_common()).
                if o != t && ctx.is_running(o) && !ctx.need_resched {
                    self.spins += 1;
                    Lock::Spin(self.owner_until.saturating_sub(ctx.now).max(MUTEX_POLL_NS))
                } else {
                    self.sleeps += 1;
                    if was_woken {
                        self.waiters.push_front(t);
                    } else {
                        self.waiters.push_back(t);
                    }
                    Lock::Sleep
                }
            }
        }
    }

    /// `mutex_unlock()`: release, and wake the first sleeper to retry.
    pub fn unlock(&mut self, ctx: &mut Ctx) {
        self.owner = None;
        if let Some(w) = self.waiters.pop_front() {
            self.woken = Some(w);
            ctx.wake(w, false);
        }
    }
}

/// A wait queue.
#[derive(Clone, Debug, Default)]
pub struct WaitList {
    waiters: Vec<TaskId>,
}

impl WaitList {
    pub fn add(&mut self, t: TaskId) {
        self.waiters.push(t);
    }

    pub fn is_empty(&self) -> bool {
        self.waiters.is_empty()
    }

    /// Wake every waiter.
    pub fn wake_all(&mut self, ctx: &mut Ctx, sync: bool) {
        for t in self.waiters.drain(..) {
            ctx.wake(t, sync);
        }
    }

    /// Wake every waiter, the newest first: the order of a wait queue
    /// that `poll()` joined. `poll_wait()` → `__pollwait()` →
    /// `add_wait_queue()` puts each entry at the head of the queue
    /// (`__add_wait_queue`, include/linux/wait.h, 6.18), and
    /// `__wake_up_common()` (kernel/sched/wait.c) walks it from the
    /// head, so the last task to poll is the first woken.
    pub fn wake_all_newest_first(&mut self, ctx: &mut Ctx, sync: bool) {
        while let Some(t) = self.waiters.pop() {
            ctx.wake(t, sync);
        }
    }

    /// Wake the first waiter (an exclusive wait).
    pub fn wake_one(&mut self, ctx: &mut Ctx, sync: bool) -> bool {
        if self.waiters.is_empty() {
            return false;
        }
        let t = self.waiters.remove(0);
        ctx.wake(t, sync);
        true
    }
}

pub const PIPE_DEF_BUFFERS: usize = 16;
pub const PAGE_SIZE: u32 = 4096;

/// An anonymous pipe.
#[derive(Clone, Debug, Default)]
pub struct Pipe {
    /// Bytes written into each occupied slot's page, oldest first.
    pages: VecDeque<u32>,
    /// Bytes already read from the oldest page.
    read_off: u32,
    bytes: u64,
    pub mutex: Mutex,
    pub rd_wait: WaitList,
    pub wr_wait: WaitList,
    pub reader_wakeups: u64,
    pub writer_wakeups: u64,
    /// The CPU that wrote each message still in the pipe, oldest first
    /// (kept only while the cost model's `xfer_by_distance` is on).
    origins: VecDeque<u32>,
}

impl Pipe {
    pub fn is_empty(&self) -> bool {
        self.pages.is_empty()
    }

    pub fn slots(&self) -> usize {
        self.pages.len()
    }

    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// Can `n` bytes (n ≤ PAGE_SIZE) go in now: merged into the last page,
    /// or into a free slot?
    pub fn has_room(&self, n: u32) -> bool {
        let merge = self.pages.back().is_some_and(|&len| len + n <= PAGE_SIZE);
        merge || self.pages.len() < PIPE_DEF_BUFFERS
    }

    /// `pipe_write()` of `n` bytes (room checked). Wakes readers if the pipe
    /// was empty; a writer that had waited (`woke_from_wait`) wakes the next
    /// writer if room is left.
    #[inline]
    pub fn write(&mut self, n: u32, woke_from_wait: bool, ctx: &mut Ctx) {
        let was_empty = self.pages.is_empty();
        match self.pages.back_mut() {
            Some(len) if !was_empty && *len + n <= PAGE_SIZE => *len += n,
            _ => self.pages.push_back(n),
        }
        self.bytes += n as u64;
        if was_empty && !self.rd_wait.is_empty() {
            self.reader_wakeups += 1;
            self.rd_wait.wake_all(ctx, true);
        }
        if woke_from_wait && self.has_room(n) && self.wr_wait.wake_one(ctx, true) {
            self.writer_wakeups += 1;
        }
    }

    /// `pipe_read()` (fs/pipe.c, 6.18) of up to `n` bytes; returns the
    /// bytes read. A page is released once fully read; freeing a slot of a
    /// full ring wakes one writer (`wake_writer |= pipe_full()`, 6.14's
    /// aaec5a95d596). Under `Kernel::pipe_still_full_no_wake = false`
    /// (5.5-6.13) a read that began on a full ring wakes one writer whether
    /// or not it freed a slot (`was_full`).
    #[inline]
    pub fn read(&mut self, n: u32, ctx: &mut Ctx) -> u32 {
        let was_full = self.pages.len() == PIPE_DEF_BUFFERS;
        let mut freed = false;
        let mut got = 0;
        while got < n {
            let Some(&len) = self.pages.front() else {
                break;
            };
            let take = (len - self.read_off).min(n - got);
            got += take;
            self.read_off += take;
            if self.read_off == len {
                self.pages.pop_front();
                self.read_off = 0;
                freed = true;
            }
        }
        self.bytes -= got as u64;
        let wake_writer = freed || ctx.kernel.is_some_and(|k| !k.pipe_still_full_no_wake);
        if was_full && wake_writer && self.wr_wait.wake_one(ctx, true) {
            self.writer_wakeups += 1;
        }
        got
    }
}

/// One direction of an AF_UNIX stream socketpair: the receive queue of the
/// reading end and the send-buffer charge of the writing end.
#[derive(Clone, Debug)]
pub struct UnixSock {
    queue: VecDeque<u32>,
    wmem: u64,
    pub sndbuf: u64,
    pub reader: WaitList,
    pub wmem_wait: WaitList,
    pub reader_wakeups: u64,
    pub writer_wakeups: u64,
    /// As `Pipe::origins`, per queued skb.
    origins: VecDeque<u32>,
}

impl UnixSock {
    pub fn new(sndbuf: u64) -> Self {
        UnixSock {
            queue: VecDeque::new(),
            wmem: 0,
            sndbuf,
            reader: WaitList::default(),
            wmem_wait: WaitList::default(),
            reader_wakeups: 0,
            writer_wakeups: 0,
            origins: VecDeque::new(),
        }
    }

    pub fn queued(&self) -> usize {
        self.queue.len()
    }

    pub fn wmem(&self) -> u64 {
        self.wmem
    }

    /// `sock_alloc_send_pskb()`: charge an skb of `truesize` if
    /// `sk_wmem_alloc < sk_sndbuf`; false means the writer must wait.
    pub fn alloc(&mut self, truesize: u32) -> bool {
        if self.wmem >= self.sndbuf {
            return false;
        }
        self.wmem += truesize as u64;
        true
    }

    /// Queue the charged skb and `sk_data_ready()`: wake the reader (sync).
    pub fn send(&mut self, truesize: u32, ctx: &mut Ctx) {
        self.queue.push_back(truesize);
        if !self.reader.is_empty() {
            self.reader_wakeups += 1;
            self.reader.wake_all(ctx, true);
        }
    }

    /// Consume one skb; `unix_write_space()` wakes all writers once
    /// `4·wmem ≤ sndbuf`. Returns false if the queue was empty.
    pub fn recv(&mut self, ctx: &mut Ctx) -> bool {
        let Some(ts) = self.queue.pop_front() else {
            return false;
        };
        self.wmem -= ts as u64;
        if self.wmem * 4 <= self.sndbuf && !self.wmem_wait.is_empty() {
            self.writer_wakeups += 1;
            self.wmem_wait.wake_all(ctx, true);
        }
        true
    }
}

/// A channel a workload reads and writes fixed-size messages through.
#[derive(Clone, Debug)]
pub enum Chan {
    Pipe(Pipe),
    Sock(UnixSock),
}

/// Where a task is in one read or write.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum OpState {
    #[default]
    Idle,
    Spinning,
    WaitLock,
    WaitData,
    WaitRoom,
    Copying,
}

/// One task's progress through its current channel operation.
#[derive(Clone, Copy, Debug, Default)]
pub struct Op {
    pub state: OpState,
    /// The writer slept for room (it then wakes the next writer, pipes).
    pub waited: bool,
}

/// Counters of the blocking points, summed over channels.
#[derive(Clone, Copy, Debug, Default)]
pub struct ChanStats {
    pub reader_blocks: u64,
    pub writer_blocks: u64,
}

use super::{sys, Action};

/// Take `p.mutex` for `t`, or say what to do meanwhile (spin or sleep).
#[inline]
fn lock_pipe(p: &mut Pipe, t: TaskId, hold: u64, op: &mut Op, ctx: &Ctx) -> Result<(), Action> {
    match p.mutex.lock(t, hold, ctx) {
        Lock::Spin(d) => {
            op.state = OpState::Spinning;
            Err(sys(d))
        }
        Lock::Sleep => {
            op.state = OpState::WaitLock;
            Err(Action::Block)
        }
        Lock::Acquired => Ok(()),
    }
}

impl Chan {
    /// The writers' CPUs of the messages queued, oldest first.
    fn origins(&mut self) -> &mut VecDeque<u32> {
        match self {
            Chan::Pipe(p) => &mut p.origins,
            Chan::Sock(s) => &mut s.origins,
        }
    }

    /// The transfer cost of the oldest queued message of `n` bytes for the
    /// stepping task (0 while `xfer_by_distance` is off).
    fn xfer_next(&mut self, n: u32, ctx: &Ctx) -> u64 {
        if !ctx.cost.xfer_by_distance {
            return 0;
        }
        let from = self.origins().front().copied().unwrap_or(u32::MAX);
        ctx.xfer_from(from, n as u64)
    }

    /// Advance task `t`'s write of an `n`-byte message (skb `truesize` on a
    /// socket) costing `cost_ns` plus the copy. `Some(action)`: do it and
    /// call again when done; `None`: the message is delivered.
    #[inline]
    #[allow(clippy::too_many_arguments)]
    pub fn write_step(
        &mut self,
        t: TaskId,
        op: &mut Op,
        n: u32,
        truesize: u32,
        cost_ns: u64,
        stats: &mut ChanStats,
        ctx: &mut Ctx,
    ) -> Option<Action> {
        let hold = cost_ns + ctx.cost.copy(n as u64);
        match self {
            Chan::Pipe(p) => {
                if op.state == OpState::Copying {
                    if ctx.cost.xfer_by_distance {
                        p.origins.push_back(ctx.cpu);
                    }
                    p.write(n, op.waited, ctx);
                    p.mutex.unlock(ctx);
                    *op = Op::default();
                    return None;
                }
                if op.state == OpState::WaitRoom && !p.has_room(n) {
                    // woken on a ring that is full (again): 5.5+'s
                    // wait_event_interruptible_exclusive() re-tests
                    // pipe_writable() without the mutex and sleeps again,
                    // at the queue's tail (5.5-6.13's was_full wake-ups;
                    // under 6.14 when another writer took the freed slot
                    // first). Before 5.5 pipe_wait() re-took the mutex
                    // first: not modelled.
                    p.wr_wait.add(t);
                    stats.writer_blocks += 1;
                    return Some(Action::Block);
                }
                if let Err(a) = lock_pipe(p, t, hold, op, ctx) {
                    return Some(a);
                }
                if !p.has_room(n) {
                    p.mutex.unlock(ctx);
                    p.wr_wait.add(t);
                    op.state = OpState::WaitRoom;
                    op.waited = true;
                    stats.writer_blocks += 1;
                    return Some(Action::Block);
                }
                op.state = OpState::Copying;
                Some(sys(hold))
            }
            Chan::Sock(s) => {
                if op.state == OpState::Copying {
                    if ctx.cost.xfer_by_distance {
                        s.origins.push_back(ctx.cpu);
                    }
                    s.send(truesize, ctx);
                    *op = Op::default();
                    return None;
                }
                if !s.alloc(truesize) {
                    s.wmem_wait.add(t);
                    op.state = OpState::WaitRoom;
                    stats.writer_blocks += 1;
                    return Some(Action::Block);
                }
                op.state = OpState::Copying;
                Some(sys(hold))
            }
        }
    }

    /// Advance task `t`'s read of one `n`-byte message; as `write_step`.
    #[inline]
    pub fn read_step(
        &mut self,
        t: TaskId,
        op: &mut Op,
        n: u32,
        cost_ns: u64,
        stats: &mut ChanStats,
        ctx: &mut Ctx,
    ) -> Option<Action> {
        // Communication by distance: the lines of the message this read
        // would take come from its writer's cache (0 while off).
        let xfer = if op.state == OpState::Copying {
            0
        } else {
            self.xfer_next(n, ctx)
        };
        let hold = cost_ns + ctx.cost.copy(n as u64) + xfer;
        match self {
            Chan::Pipe(p) => {
                if op.state == OpState::Copying {
                    if ctx.cost.xfer_by_distance {
                        p.origins.pop_front();
                    }
                    let got = p.read(n, ctx);
                    debug_assert_eq!(got, n, "messages are atomic");
                    p.mutex.unlock(ctx);
                    *op = Op::default();
                    return None;
                }
                if let Err(a) = lock_pipe(p, t, hold, op, ctx) {
                    return Some(a);
                }
                if p.bytes() < n as u64 {
                    p.mutex.unlock(ctx);
                    p.rd_wait.add(t);
                    op.state = OpState::WaitData;
                    stats.reader_blocks += 1;
                    return Some(Action::Block);
                }
                op.state = OpState::Copying;
                Some(sys(hold))
            }
            Chan::Sock(s) => {
                if op.state == OpState::Copying {
                    if ctx.cost.xfer_by_distance {
                        s.origins.pop_front();
                    }
                    s.recv(ctx);
                    *op = Op::default();
                    return None;
                }
                if s.queued() == 0 {
                    s.reader.add(t);
                    op.state = OpState::WaitData;
                    stats.reader_blocks += 1;
                    return Some(Action::Block);
                }
                op.state = OpState::Copying;
                Some(sys(hold))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cost::CostModel;
    use crate::kernel::Kernel;
    use crate::rng::Rng;

    /// Run `f` with a context at time 0; returns the wake-ups it asked for.
    fn with_ctx(f: impl FnOnce(&mut Ctx)) -> Vec<(TaskId, bool)> {
        in_ctx(0, &|_| false, None, f).1
    }

    /// `with_ctx` under `kernel`'s IPC rules.
    fn with_kernel_ctx(kernel: Option<&Kernel>, f: impl FnOnce(&mut Ctx)) -> Vec<(TaskId, bool)> {
        in_ctx(0, &|_| false, kernel, f).1
    }

    /// Run `f` with a context at `now` in which the tasks `running` says
    /// are on a CPU, under `kernel` (`None`: the 6.18 rules); returns what
    /// `f` returned and the wake-ups it asked for.
    fn in_ctx<R>(
        now: u64,
        running: &dyn Fn(TaskId) -> bool,
        kernel: Option<&Kernel>,
        f: impl FnOnce(&mut Ctx) -> R,
    ) -> (R, Vec<(TaskId, bool)>) {
        let mut rng = Rng::new(0);
        let cost = CostModel::default();
        let mut wakes = Vec::new();
        let mut spawns = Vec::new();
        let mut ctx = Ctx::new(now, &mut rng, &cost, running, &mut wakes, &mut spawns, 0);
        ctx.kernel = kernel;
        let r = f(&mut ctx);
        (r, wakes)
    }

    #[test]
    fn small_writes_pack_40_to_a_page_and_16_pages_fill_the_pipe() {
        let mut p = Pipe::default();
        with_ctx(|ctx| {
            for _ in 0..640 {
                assert!(p.has_room(100));
                p.write(100, false, ctx);
            }
        });
        assert_eq!(p.slots(), 16);
        assert!(!p.has_room(100), "a sender blocks when 16 slots are full");
    }

    #[test]
    fn a_reader_frees_a_slot_and_wakes_a_writer_once_per_40_messages() {
        let mut p = Pipe::default();
        with_ctx(|ctx| {
            for _ in 0..640 {
                p.write(100, false, ctx);
            }
        });
        p.wr_wait.add(7);
        p.wr_wait.add(8);
        let mut woken = Vec::new();
        for k in 1..=80 {
            let w = with_ctx(|ctx| {
                assert_eq!(p.read(100, ctx), 100);
            });
            if !w.is_empty() {
                woken.push((k, w));
            }
        }
        // the 40th read empties the first page of a full ring: one writer
        assert_eq!(woken, vec![(40, vec![(7, true)])]);
        assert_eq!(p.slots(), 14);
    }

    #[test]
    fn before_6_14_every_read_of_a_full_ring_wakes_a_writer() {
        let k = Kernel::preset("v6.6").unwrap();
        assert!(!k.pipe_still_full_no_wake);
        let mut p = Pipe::default();
        with_ctx(|ctx| {
            for _ in 0..640 {
                p.write(100, false, ctx);
            }
        });
        p.wr_wait.add(7);
        let mut woken = Vec::new();
        for k_read in 1..=3 {
            let w = with_kernel_ctx(Some(&k), |ctx| {
                assert_eq!(p.read(100, ctx), 100);
            });
            woken.push((k_read, w));
            p.wr_wait.add(7); // it found the ring still full and slept again
        }
        // the ring was full at each read's start: a wake-up each time,
        // though no slot was freed
        assert_eq!(
            woken,
            (1..=3).map(|k| (k, vec![(7, true)])).collect::<Vec<_>>()
        );
        assert_eq!(p.slots(), PIPE_DEF_BUFFERS);
    }

    #[test]
    fn readers_are_woken_only_on_empty_to_non_empty() {
        let mut p = Pipe::default();
        p.rd_wait.add(3);
        let w1 = with_ctx(|ctx| p.write(100, false, ctx));
        p.rd_wait.add(3);
        let w2 = with_ctx(|ctx| p.write(100, false, ctx));
        assert_eq!(w1, vec![(3, true)]);
        assert!(w2.is_empty());
    }

    #[test]
    fn socket_wakes_the_reader_on_every_write_and_writers_below_a_quarter() {
        let mut s = UnixSock::new(10_000);
        s.reader.add(1);
        let mut n = 0;
        while s.alloc(768) {
            n += 1;
            // the (re-)sleeping reader is woken by every write, sync
            let w = with_ctx(|ctx| s.send(768, ctx));
            assert_eq!(w, vec![(1, true)]);
            s.reader.add(1);
        }
        assert_eq!(n, 14, "charges until wmem >= sndbuf");
        s.wmem_wait.add(5);
        s.wmem_wait.add(6);
        let mut woke_at = None;
        for k in 1..=14 {
            let w = with_ctx(|ctx| assert!(s.recv(ctx)));
            if !w.is_empty() && woke_at.is_none() {
                woke_at = Some((k, w));
            }
        }
        // 4·wmem ≤ sndbuf once 3 skbs (2304 B) are left: after the 11th read
        assert_eq!(woke_at, Some((11, vec![(5, true), (6, true)])));
    }

    #[test]
    fn mutex_hands_over_to_sleepers_in_order() {
        let mut m = Mutex::default();
        with_ctx(|ctx| {
            assert_eq!(m.lock(1, 100, ctx), Lock::Acquired);
            assert_eq!(m.lock(2, 100, ctx), Lock::Sleep);
            assert_eq!(m.lock(3, 100, ctx), Lock::Sleep);
        });
        let w = with_ctx(|ctx| m.unlock(ctx));
        assert_eq!(w, vec![(2, false)]);
        with_ctx(|ctx| assert_eq!(m.lock(2, 100, ctx), Lock::Acquired));
    }

    #[test]
    fn a_spinner_keeps_polling_while_the_owner_runs_past_its_hold() {
        let mut m = Mutex::default();
        let owner_runs = |t: TaskId| t == 1;
        let mut at =
            |now: u64, t: TaskId| in_ctx(now, &owner_runs, None, |ctx| m.lock(t, 100, ctx)).0;
        assert_eq!(at(0, 1), Lock::Acquired);
        // spin until the owner's expected release ...
        assert_eq!(at(40, 2), Lock::Spin(60));
        // ... and on while it still runs with the lock (it was expected at 100)
        assert_eq!(at(130, 2), Lock::Spin(MUTEX_POLL_NS));
        assert_eq!(m.sleeps, 0);
        // an owner that is not running: sleep
        let nobody = |_t: TaskId| false;
        assert_eq!(
            in_ctx(140, &nobody, None, |ctx| m.lock(3, 100, ctx)).0,
            Lock::Sleep
        );
    }
}
