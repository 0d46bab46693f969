//! VolanoMark loopback (jgneff/volano: `src/COM/volano/chat/test/Mark.java`;
//! docs/guide/workloads.md): `rooms` chat rooms of `users` users; each user
//! has a TCP loopback connection and four Java threads — client receiver
//! and sender, server receiver and sender.
//!
//! - A receive thread reads a packet, handles it on its own thread, then
//!   calls `Thread.yield()` (`sched_yield()`).
//! - A send thread waits on its queue's monitor, takes every queued packet,
//!   writes each (one `send()` per packet), then yields.
//! - `Connection.send()` = `NotifyQueue.putElement()`: append and `notify()`
//!   (a futex wake of the waiting send thread, not a sync wake-up).
//! - The server receiver broadcasts a chat to the other U−1 users' queues and
//!   a confirm to the sender's; a client receiver counts each indication and
//!   sends its next chat when `(sent + received) % U == its index`: strict
//!   turn-taking, one chat in flight per room.
//! - A user done with `messages` chats and all indications closes its
//!   connection; its four threads exit. The run ends when every user is done.
//!
//! Simplifications: Java monitors are uncontended (no lock convoy), TCP
//! never fills (one chat in flight per room), start-up is instantaneous.

use super::ipc::{Chan, ChanStats, Op, UnixSock, WaitList};
use super::params::Given;
use super::{sys, user, Action, Ctx, TaskSpec, Workload};
use crate::error::{CoreError, CoreResult};
use crate::sched::task::TaskId;
use crate::topology::Machine;
use std::collections::VecDeque;

crate::workload_params! {
    /// VolanoMark's parameters, declared once (`workload::params`).
    pub struct VolanoParams for "volano" {
        rooms: u32 = int(1, 10_000, 10, "chat rooms"),
        users: u32 = int(2, 1_000, 20, "users per room"),
        /// Chats each user sends (VolanoMark's `-count`).
        messages: u32 = int(1, 10_000_000, 100, "chats per user (-count)"),
        /// JVM user time to handle one received packet.
        handle_ns: u64 = int(1, MAX_STEP_NS, 3_000, "JVM user time to handle a received packet")
            .taken_as("handle_us", 1000)
            .given(Given::Number(3.0)),
        /// JVM user time to serialise one packet before `send()`.
        send_ns: u64 = int(1, MAX_STEP_NS, 2_000, "JVM user time to serialise a packet to send")
            .taken_as("send_us", 1000)
            .given(Given::Number(2.0)),
        /// JVM user time to enqueue one packet (`putElement`).
        enqueue_ns: u64 = int(1, MAX_STEP_NS, 500, "JVM user time to enqueue a packet")
            .taken_as("enqueue_us", 1000)
            .given(Given::Number(0.5)),
    }
}

/// The longest CPU time of one step, ns (1e12 µs).
const MAX_STEP_NS: i64 = 1_000_000_000_000_000;

impl VolanoParams {
    /// `rooms × users × messages` with the JVM costs `sl.workloads.volano`
    /// defaults to (3 µs to handle a packet, 2 µs to send one, 0.5 µs to
    /// enqueue one).
    pub fn new(rooms: u32, users: u32, messages: u32) -> Self {
        VolanoParams {
            rooms,
            users,
            messages,
            handle_ns: 3_000,
            send_ns: 2_000,
            enqueue_ns: 500,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Packet {
    Chat,
    Confirm,
    Close,
}

/// A packet in a queue or in flight, with the last-level cache of the CPU
/// that produced it (its lines are in that cache).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Item {
    pkt: Packet,
    llc: u32,
    /// The CPU that produced it (for `CostModel::xfer_by_distance`).
    cpu: u32,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    ClientRecv,
    ClientSend,
    ServerRecv,
    ServerSend,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum St {
    /// Client receiver's first step: user 0 starts its room.
    Begin,
    Read,
    Handle(Packet),
    /// System time (futex wakes) still to charge after the JVM work.
    Futex(u64),
    AfterHandle,
    Wait,
    Send(Packet),
    Sent,
    Exit,
    Gone,
}

#[derive(Clone, Debug)]
struct Th {
    kind: Kind,
    /// Global user index (room · users + user).
    user: usize,
    st: St,
    op: Op,
    batch: VecDeque<Item>,
}

#[derive(Clone, Debug)]
struct User {
    sent: u64,
    received: u64,
    /// Client and server send queues (`NotifyQueue`s).
    cq: VecDeque<Item>,
    sq: VecDeque<Item>,
    cq_wait: WaitList,
    sq_wait: WaitList,
}

#[derive(Clone, Debug)]
pub struct Volano {
    p: VolanoParams,
    /// Client→server and server→client connection of each user.
    c2s: Vec<Chan>,
    s2c: Vec<Chan>,
    users: Vec<User>,
    th: Vec<Th>,
    stats: ChanStats,
    /// Packets handed from one thread to another (queue and socket), and
    /// how many of them the consumer read on another last-level cache than
    /// the producer wrote them on.
    handoffs: (u64, u64),
    end: u64,
    live: usize,
}

const CLIENT_MM: u32 = 1;
const SERVER_MM: u32 = 2;
/// A chat packet on the wire (about 100 bytes, per the LSE description).
const PACKET_BYTES: u32 = 100;
/// Loopback TCP never blocks here: one chat per room is in flight.
const TCP_SNDBUF: u64 = 1 << 40;

impl Volano {
    pub fn new(p: VolanoParams) -> CoreResult<Self> {
        for (param, v) in VolanoParams::PARAMS
            .iter()
            .zip([p.rooms, p.users, p.messages])
        {
            param.check(i64::from(v))?;
        }
        if p.rooms as u64 * p.users as u64 > 100_000 {
            return Err(CoreError::invalid(
                "rooms*users",
                p.rooms as u64 * p.users as u64,
                "at most 100000 connections (4 threads each)",
            ));
        }
        let n = (p.rooms * p.users) as usize;
        let chan = || Chan::Sock(UnixSock::new(TCP_SNDBUF));
        Ok(Volano {
            c2s: (0..n).map(|_| chan()).collect(),
            s2c: (0..n).map(|_| chan()).collect(),
            users: (0..n)
                .map(|_| User {
                    sent: 0,
                    received: 0,
                    cq: VecDeque::new(),
                    sq: VecDeque::new(),
                    cq_wait: WaitList::default(),
                    sq_wait: WaitList::default(),
                })
                .collect(),
            th: Vec::with_capacity(4 * n),
            stats: ChanStats::default(),
            handoffs: (0, 0),
            end: 0,
            live: 0,
            p,
        })
    }

    fn user_in_room(&self, u: usize) -> usize {
        u % self.p.users as usize
    }

    fn room_of(&self, u: usize) -> usize {
        u / self.p.users as usize
    }

    /// `NotifyQueue.putElement()`: append, and `notify()` the waiting send
    /// thread (a futex wake, not sync). Returns the system time to charge.
    fn put(&mut self, u: usize, server: bool, pkt: Packet, ctx: &mut Ctx) -> u64 {
        let usr = &mut self.users[u];
        let (q, w) = if server {
            (&mut usr.sq, &mut usr.sq_wait)
        } else {
            (&mut usr.cq, &mut usr.cq_wait)
        };
        q.push_back(Item {
            pkt,
            llc: ctx.llc,
            cpu: ctx.cpu,
        });
        if w.is_empty() {
            0
        } else {
            w.wake_all(ctx, false);
            ctx.cost.futex_ns
        }
    }

    fn handoff(&mut self, from: u32, to: u32) {
        self.handoffs.0 += 1;
        self.handoffs.1 += u64::from(from != to);
    }

    fn done(&self, u: usize) -> bool {
        let m = self.p.messages as u64;
        let usr = &self.users[u];
        usr.sent >= m && usr.received >= m * (self.p.users as u64 - 1)
    }

    /// Client receiver: maybe send the next chat (its turn).
    fn maybe_send(&mut self, u: usize, ctx: &mut Ctx) -> u64 {
        let usr = &self.users[u];
        let turn = (usr.sent + usr.received) % self.p.users as u64 == self.user_in_room(u) as u64;
        if turn && usr.sent < self.p.messages as u64 {
            self.users[u].sent += 1;
            self.p.enqueue_ns + self.put(u, false, Packet::Chat, ctx)
        } else {
            0
        }
    }

    fn recv_step(&mut self, t: TaskId, ctx: &mut Ctx) -> Action {
        let i = t as usize;
        let u = self.th[i].user;
        let server = self.th[i].kind == Kind::ServerRecv;
        let c = ctx.cost;
        loop {
            match self.th[i].st {
                St::Begin => {
                    self.th[i].st = St::Read;
                    let futex = self.maybe_send(u, ctx);
                    if futex > 0 {
                        return sys(futex);
                    }
                }
                St::Read => {
                    let chan = if server {
                        &mut self.c2s[u]
                    } else {
                        &mut self.s2c[u]
                    };
                    let mut op = self.th[i].op;
                    let r = chan.read_step(
                        t,
                        &mut op,
                        PACKET_BYTES,
                        c.tcp_read_ns,
                        &mut self.stats,
                        ctx,
                    );
                    self.th[i].op = op;
                    if let Some(a) = r {
                        return a;
                    }
                    let item = self.th[i].batch.pop_front();
                    if let Some(it) = item {
                        self.handoff(it.llc, ctx.llc);
                    }
                    let pkt = item.map_or(Packet::Chat, |it| it.pkt);
                    self.th[i].st = St::Handle(pkt);
                    return user(self.p.handle_ns);
                }
                St::Handle(pkt) => {
                    let mut futex = 0;
                    if server {
                        match pkt {
                            Packet::Chat => {
                                // PublicChat.broadcast(): the other users, then the confirm
                                let room = self.room_of(u);
                                let n = self.p.users as usize;
                                for j in room * n..(room + 1) * n {
                                    if j != u {
                                        futex += self.put(j, true, Packet::Chat, ctx);
                                    }
                                }
                                futex += self.put(u, true, Packet::Confirm, ctx);
                                self.th[i].st = St::Futex(futex);
                                return user(self.p.enqueue_ns * n as u64);
                            }
                            Packet::Close => {
                                futex += self.put(u, true, Packet::Close, ctx);
                                self.th[i].st = St::Exit;
                                return sys(futex);
                            }
                            Packet::Confirm => self.th[i].st = St::AfterHandle,
                        }
                    } else {
                        match pkt {
                            Packet::Chat => {
                                self.users[u].received += 1;
                                futex += self.maybe_send(u, ctx);
                            }
                            Packet::Confirm => {}
                            Packet::Close => unreachable!("clients receive no close"),
                        }
                        if self.done(u) {
                            futex += self.put(u, false, Packet::Close, ctx);
                            self.th[i].st = St::Exit;
                            return sys(futex);
                        }
                        self.th[i].st = St::AfterHandle;
                        if futex > 0 {
                            return sys(futex);
                        }
                    }
                }
                St::Futex(ns) => {
                    self.th[i].st = St::AfterHandle;
                    if ns > 0 {
                        return sys(ns);
                    }
                }
                St::AfterHandle => {
                    // Connection.pause(): Thread.yield()
                    self.th[i].st = St::Read;
                    return Action::Yield;
                }
                St::Exit => {
                    self.th[i].st = St::Gone;
                    return sys(c.exit_thread_ns);
                }
                _ => return self.exit(ctx),
            }
        }
    }

    fn send_step(&mut self, t: TaskId, ctx: &mut Ctx) -> Action {
        let i = t as usize;
        let u = self.th[i].user;
        let server = self.th[i].kind == Kind::ServerSend;
        let c = ctx.cost;
        loop {
            match self.th[i].st {
                St::Begin | St::Wait => {
                    // SendQueue.run(): getElements() waits for the monitor.
                    let usr = &mut self.users[u];
                    let (q, w) = if server {
                        (&mut usr.sq, &mut usr.sq_wait)
                    } else {
                        (&mut usr.cq, &mut usr.cq_wait)
                    };
                    if q.is_empty() {
                        w.add(t);
                        self.th[i].st = St::Wait;
                        return Action::Block;
                    }
                    let batch = std::mem::take(q);
                    let mut xfer = 0;
                    for it in &batch {
                        self.handoff(it.llc, ctx.llc);
                        xfer += ctx.xfer_from(it.cpu, PACKET_BYTES as u64);
                    }
                    self.th[i].batch = batch;
                    self.th[i].st = St::Sent;
                    // the packets' lines come from the producers' caches
                    if xfer > 0 {
                        return sys(xfer);
                    }
                }
                St::Sent => match self.th[i].batch.pop_front().map(|it| it.pkt) {
                    Some(Packet::Close) if server => self.th[i].st = St::Exit,
                    Some(pkt) => {
                        self.th[i].st = St::Send(pkt);
                        return user(self.p.send_ns);
                    }
                    None => {
                        self.th[i].st = St::Wait;
                        return Action::Yield;
                    }
                },
                St::Send(pkt) => {
                    let chan = if server {
                        &mut self.s2c[u]
                    } else {
                        &mut self.c2s[u]
                    };
                    let mut op = self.th[i].op;
                    let r = chan.write_step(
                        t,
                        &mut op,
                        PACKET_BYTES,
                        PACKET_BYTES + 668,
                        c.tcp_write_ns,
                        &mut self.stats,
                        ctx,
                    );
                    self.th[i].op = op;
                    if let Some(a) = r {
                        return a;
                    }
                    // the reader learns the packet's kind from this queue
                    let reader = self.reader_of(u, !server);
                    self.th[reader].batch.push_back(Item {
                        pkt,
                        llc: ctx.llc,
                        cpu: ctx.cpu,
                    });
                    self.th[i].st = if pkt == Packet::Close {
                        St::Exit
                    } else {
                        St::Sent
                    };
                }
                St::Exit => {
                    self.th[i].st = St::Gone;
                    return sys(c.exit_thread_ns);
                }
                _ => return self.exit(ctx),
            }
        }
    }

    /// The receive thread at the other end of user `u`'s connection.
    fn reader_of(&self, u: usize, server_side: bool) -> usize {
        4 * u + if server_side { 2 } else { 0 }
    }

    fn exit(&mut self, ctx: &mut Ctx) -> Action {
        self.live -= 1;
        if self.live == 0 {
            self.end = ctx.now;
        }
        Action::Exit
    }
}

/// VolanoMark's roles: the chat server's threads (`server`: a reader and
/// a writer per connection, in the server JVM) and the client's (`client`:
/// the same pair per simulated user, in the client JVM).
pub const ROLES: &[&str] = &["server", "client"];

impl Workload for Volano {
    fn name(&self) -> &'static str {
        "volano"
    }
    fn roles(&self) -> &'static [&'static str] {
        ROLES
    }

    fn validate(&self, _machine: &Machine) -> CoreResult<()> {
        Ok(())
    }

    /// The server and the client are each one JVM: `java`.
    fn process_name(&self, _leader: &str) -> String {
        "java".to_string()
    }

    fn init(&mut self, ctx: &mut Ctx) {
        let n = (self.p.rooms * self.p.users) as usize;
        for u in 0..n {
            for (kind, mm, name, role) in [
                (Kind::ClientRecv, CLIENT_MM, "client-recv", ROLES[1]),
                (Kind::ClientSend, CLIENT_MM, "client-send", ROLES[1]),
                (Kind::ServerRecv, SERVER_MM, "server-recv", ROLES[0]),
                (Kind::ServerSend, SERVER_MM, "server-send", ROLES[0]),
            ] {
                ctx.spawn(TaskSpec {
                    role,
                    name: format!("{name}/{u}"),
                    nice: 0,
                    cpus: None,
                    mm: Some(mm),
                    policy: crate::sched::task::Policy::Normal,
                    rt_priority: None,
                });
                let st = if kind == Kind::ServerRecv {
                    St::Read
                } else {
                    St::Begin
                };
                self.th.push(Th {
                    kind,
                    user: u,
                    st,
                    op: Op::default(),
                    batch: VecDeque::new(),
                });
            }
        }
        self.live = self.th.len();
    }

    fn step(&mut self, task: TaskId, ctx: &mut Ctx) -> Action {
        match self.th[task as usize].kind {
            Kind::ClientRecv | Kind::ServerRecv => self.recv_step(task, ctx),
            Kind::ClientSend | Kind::ServerSend => self.send_step(task, ctx),
        }
    }

    fn nr_tasks(&self) -> u64 {
        4 * self.p.rooms as u64 * self.p.users as u64
    }

    fn finite(&self) -> bool {
        true
    }

    fn metrics(&self, end_ns: u64) -> Vec<(&'static str, f64)> {
        let end = if self.live == 0 { self.end } else { end_ns };
        let elapsed = end as f64 / 1e9;
        let sent: u64 = self.users.iter().map(|u| u.sent).sum();
        let received: u64 = self.users.iter().map(|u| u.received).sum();
        let total = (sent + received) as f64;
        vec![
            ("elapsed_s", elapsed),
            ("messages_sent", sent as f64),
            ("messages_received", received as f64),
            ("messages", total),
            (
                "throughput",
                if elapsed > 0.0 {
                    (total / elapsed).round()
                } else {
                    0.0
                },
            ),
            ("handoffs", self.handoffs.0 as f64),
            ("handoffs_cross_llc", self.handoffs.1 as f64),
            (
                "cross_llc_fraction",
                if self.handoffs.0 > 0 {
                    self.handoffs.1 as f64 / self.handoffs.0 as f64
                } else {
                    0.0
                },
            ),
        ]
    }
}
