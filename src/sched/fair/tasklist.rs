//! `rq->cfs_tasks`, the runqueue's list of its queued fair tasks (kernel
//! `struct list_head` linked through each task's `se.group_node`, 3.4+), as
//! an intrusive doubly-linked list: O(1) add, delete and move, where a
//! `Vec` paid a search and a shift per dequeue.
//!
//! The model keeps the list in enqueue order, least recently enqueued at the
//! front, most recently enqueued at the back: the kernel's `list_add()` to
//! the head is [`TaskLinks::push_back`], its tail (`list_last_entry()`, where
//! `detach_tasks()` starts) is [`TaskLinks::front`]. A runqueue owns a
//! [`TaskList`] (its ends and length); the links (`se.group_node`) are one
//! per task in [`TaskLinks`], owned by the `Sched`, since a task is on at most
//! one runqueue's list.

use crate::sched::task::TaskId;

/// No task (the end of a list).
const NIL: TaskId = TaskId::MAX;

/// The `prev` of a task on no list (`list_del_init()`'s state; the model's
/// task ids never come near it).
const OFF_LIST: TaskId = TaskId::MAX - 1;

/// A runqueue's `cfs_tasks` list head: its two ends and its length.
#[derive(Clone, Copy, Debug)]
pub struct TaskList {
    /// Least recently enqueued (the kernel list's tail).
    front: TaskId,
    /// Most recently enqueued (the kernel list's head).
    back: TaskId,
    len: u32,
}

impl Default for TaskList {
    /// `INIT_LIST_HEAD()`.
    fn default() -> Self {
        TaskList {
            front: NIL,
            back: NIL,
            len: 0,
        }
    }
}

impl TaskList {
    pub fn len(&self) -> usize {
        self.len as usize
    }

    /// `list_empty()`.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// One task's `se.group_node`: its neighbours towards the front (`prev`,
/// less recently enqueued) and the back (`next`); `prev` is `OFF_LIST` when
/// the task is on no list.
#[derive(Clone, Copy, Debug)]
struct Link {
    prev: TaskId,
    next: TaskId,
}

const UNLINKED: Link = Link {
    prev: OFF_LIST,
    next: NIL,
};

fn opt(t: TaskId) -> Option<TaskId> {
    (t != NIL).then_some(t)
}

/// Every task's `se.group_node`, indexed by task id (grown on first use).
#[derive(Clone, Debug, Default)]
pub struct TaskLinks {
    links: Vec<Link>,
}

impl TaskLinks {
    /// Whether `t` is on some runqueue's list.
    pub fn is_linked(&self, t: TaskId) -> bool {
        self.links
            .get(t as usize)
            .is_some_and(|l| l.prev != OFF_LIST)
    }

    /// The least recently enqueued task (`list_last_entry()`).
    pub fn front(&self, l: &TaskList) -> Option<TaskId> {
        opt(l.front)
    }

    /// The most recently enqueued task (`list_first_entry()`).
    pub fn back(&self, l: &TaskList) -> Option<TaskId> {
        opt(l.back)
    }

    /// The task enqueued just before `t` on its list (towards the front).
    pub fn prev(&self, t: TaskId) -> Option<TaskId> {
        opt(self.links[t as usize].prev)
    }

    /// The task enqueued just after `t` on its list (towards the back).
    pub fn next(&self, t: TaskId) -> Option<TaskId> {
        opt(self.links[t as usize].next)
    }

    /// `list_add(&p->se.group_node, &rq->cfs_tasks)`: `t` becomes the most
    /// recently enqueued task. `t` must not be on any list.
    pub fn push_back(&mut self, l: &mut TaskList, t: TaskId) {
        let i = t as usize;
        if i >= self.links.len() {
            self.links.resize(i + 1, UNLINKED);
        }
        assert!(
            self.links[i].prev == OFF_LIST,
            "task {t} is already on a cfs_tasks list"
        );
        self.links[i] = Link {
            prev: l.back,
            next: NIL,
        };
        match l.back {
            NIL => l.front = t,
            b => self.links[b as usize].next = t,
        }
        l.back = t;
        l.len += 1;
    }

    /// `list_add_tail()` (the model's front): `t` becomes the least recently
    /// enqueued task. `t` must not be on any list.
    fn push_front(&mut self, l: &mut TaskList, t: TaskId) {
        let i = t as usize;
        debug_assert!(self.links[i].prev == OFF_LIST);
        self.links[i] = Link {
            prev: NIL,
            next: l.front,
        };
        match l.front {
            NIL => l.back = t,
            f => self.links[f as usize].prev = t,
        }
        l.front = t;
        l.len += 1;
    }

    /// `list_del_init(&p->se.group_node)`: unlink `t`, which must be on `l`.
    pub fn remove(&mut self, l: &mut TaskList, t: TaskId) {
        let i = t as usize;
        let Link { prev, next } = self.links[i];
        debug_assert!(prev != OFF_LIST, "task {t} is on no cfs_tasks list");
        if prev == OFF_LIST {
            // As the Vec this replaced did: a task on no list is left alone
            // (release builds must not corrupt the list or panic).
            return;
        }
        match prev {
            NIL => l.front = next,
            p => self.links[p as usize].next = next,
        }
        match next {
            NIL => l.back = prev,
            n => self.links[n as usize].prev = prev,
        }
        self.links[i] = UNLINKED;
        l.len -= 1;
    }

    /// `list_move_tail(&p->se.group_node, &rq->cfs_tasks)`: `t` (on `l`)
    /// becomes the least recently enqueued task.
    pub fn move_to_front(&mut self, l: &mut TaskList, t: TaskId) {
        self.remove(l, t);
        self.push_front(l, t);
    }

    /// `list_move(&p->se.group_node, &rq->cfs_tasks)`: `t` (on `l`) becomes
    /// the most recently enqueued task.
    pub fn move_to_back(&mut self, l: &mut TaskList, t: TaskId) {
        self.remove(l, t);
        self.push_back(l, t);
    }

    /// The tasks of `l` from the front (least recently enqueued); `.rev()`
    /// walks from the back (`list_for_each_entry()`). No allocation; the
    /// list cannot change during the walk (the borrow sees to it).
    pub fn iter<'a>(&'a self, l: &TaskList) -> Iter<'a> {
        Iter {
            links: self,
            front: l.front,
            back: l.back,
            left: l.len,
        }
    }
}

/// A walk of one `cfs_tasks` list, from either end.
pub struct Iter<'a> {
    links: &'a TaskLinks,
    front: TaskId,
    back: TaskId,
    left: u32,
}

impl Iterator for Iter<'_> {
    type Item = TaskId;

    fn next(&mut self) -> Option<TaskId> {
        if self.left == 0 {
            return None;
        }
        let t = self.front;
        self.front = self.links.links[t as usize].next;
        self.left -= 1;
        Some(t)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.left as usize, Some(self.left as usize))
    }
}

impl DoubleEndedIterator for Iter<'_> {
    fn next_back(&mut self) -> Option<TaskId> {
        if self.left == 0 {
            return None;
        }
        let t = self.back;
        self.back = self.links.links[t as usize].prev;
        self.left -= 1;
        Some(t)
    }
}

impl ExactSizeIterator for Iter<'_> {}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Rng;

    /// Checks every list against its `Vec` model: both walks, the ends, the
    /// lengths, and the per-task neighbours.
    fn check(links: &TaskLinks, lists: &[TaskList], model: &[Vec<TaskId>]) {
        for (l, m) in lists.iter().zip(model) {
            assert_eq!(l.len(), m.len());
            assert_eq!(l.is_empty(), m.is_empty());
            assert_eq!(links.iter(l).collect::<Vec<_>>(), *m);
            let rev: Vec<TaskId> = links.iter(l).rev().collect();
            assert!(rev.iter().eq(m.iter().rev()));
            assert_eq!(links.front(l), m.first().copied());
            assert_eq!(links.back(l), m.last().copied());
            for (i, &t) in m.iter().enumerate() {
                assert!(links.is_linked(t));
                assert_eq!(links.prev(t), i.checked_sub(1).map(|j| m[j]));
                assert_eq!(links.next(t), m.get(i + 1).copied());
            }
        }
    }

    /// Random push / remove / rotate (both ways) / migrate on a few lists,
    /// against the `Vec` model the runqueues used before (push = `push`,
    /// remove = `rposition` + `remove`, move_to_front = `remove` +
    /// `insert(0)`, move_to_back = `remove` + `push`), and a mixed
    /// front/back walk.
    #[test]
    fn tasklist_matches_vec_model() {
        const TASKS: usize = 300;
        const LISTS: usize = 3;
        let mut rng = Rng::new(22);
        let mut links = TaskLinks::default();
        let mut lists = [TaskList::default(); LISTS];
        let mut model: Vec<Vec<TaskId>> = vec![Vec::new(); LISTS];
        let mut on: Vec<Option<usize>> = vec![None; TASKS];
        for step in 0..40_000 {
            let t = (rng.next_u64() % TASKS as u64) as TaskId;
            let op = rng.next_u64() % 6;
            let c = (rng.next_u64() % LISTS as u64) as usize;
            match on[t as usize] {
                None => {
                    links.push_back(&mut lists[c], t);
                    model[c].push(t);
                    on[t as usize] = Some(c);
                }
                Some(o) => {
                    let m = &mut model[o];
                    let i = m.iter().rposition(|&x| x == t).unwrap();
                    match op {
                        0 | 1 => {
                            links.remove(&mut lists[o], t);
                            m.remove(i);
                            on[t as usize] = None;
                        }
                        2 => {
                            links.move_to_front(&mut lists[o], t);
                            m.remove(i);
                            m.insert(0, t);
                        }
                        3 => {
                            links.move_to_back(&mut lists[o], t);
                            m.remove(i);
                            m.push(t);
                        }
                        _ => {
                            // A migration: off one list, onto another.
                            links.remove(&mut lists[o], t);
                            m.remove(i);
                            links.push_back(&mut lists[c], t);
                            model[c].push(t);
                            on[t as usize] = Some(c);
                        }
                    }
                }
            }
            if step % 97 == 0 {
                check(&links, &lists, &model);
                // Alternate ends: the iterator's two cursors meet exactly.
                let mut it = links.iter(&lists[c]);
                let mut got = (Vec::new(), Vec::new());
                while let Some(t) = it.next() {
                    got.0.push(t);
                    match it.next_back() {
                        Some(t) => got.1.push(t),
                        None => break,
                    }
                }
                got.1.reverse();
                got.0.extend(got.1);
                assert_eq!(got.0, model[c]);
            }
        }
        check(&links, &lists, &model);
        assert!((0..TASKS as TaskId)
            .filter(|&t| on[t as usize].is_none())
            .all(|t| !links.is_linked(t)));
    }

    #[test]
    #[should_panic(expected = "already on a cfs_tasks list")]
    fn double_add_panics() {
        let mut links = TaskLinks::default();
        let (mut a, mut b) = (TaskList::default(), TaskList::default());
        links.push_back(&mut a, 5);
        links.push_back(&mut b, 5);
    }
}
