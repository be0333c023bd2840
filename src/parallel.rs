//! Independent work on the machine's cores: two stages side by side, a list of tasks,
//! one function over many items, or tasks handed to a helper started before they
//! exist. Not a stage: any stage may use it, and it uses none.
//!
//! Every helper thread is scoped (it borrows what the caller owns and ends before the
//! call returns), has the main thread's usual 8 MiB of stack (the stages recurse as
//! deep as the values and objects nest), and hands a panic to the caller. When no
//! thread can be started, the work runs on the calling thread, in order.
//!
//! The threads of one call share the caller's cores ([`cores_here`]): work nested in
//! a thread starts threads only for the cores its share leaves, so that no more
//! threads work at once than there are cores.

mod later;

pub use later::Later;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex, OnceLock};

/// The stack of every helper thread.
const HELPER_STACK: usize = 8 * 1024 * 1024;

/// [`cores`], once counted.
static CORES: OnceLock<usize> = OnceLock::new();

/// The machine's cores this process may use ([`std::thread::available_parallelism`],
/// 1 when unknown), asked once per process: each ask reads the affinity mask and the
/// cgroup's CPU quota, three files.
pub fn cores() -> usize {
    *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

thread_local! {
    /// How many cores this thread's work may spread over ([`cores_here`]); 0 until a
    /// function of this module gives the thread a share.
    static SHARE: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// The cores the work of this thread may use: every core on a thread this module did
/// not start, or the share its starter gave it. A thread that runs beside another
/// (each side of [`side_by_side`], each thread of [`run_in_parallel`]) has its part of
/// its starter's cores, so that work nested in it starts threads only for cores no
/// other thread of the call works on: on two cores, a nested [`map_in_parallel`] runs
/// on its own thread instead of taking turns with two others on two cores.
pub fn cores_here() -> usize {
    share_of(SHARE.get(), cores)
}

/// The cores of the share `share` in a process of `count` cores: all for no share
/// given (0), all but one (never fewer than one) for [`ALL_BUT_ONE`], else `share`.
fn share_of(share: usize, count: impl FnOnce() -> usize) -> usize {
    match share {
        0 => count(),
        ALL_BUT_ONE => count().saturating_sub(1).max(1),
        share => share,
    }
}

/// The share "every core of the process but one" ([`cores_here`] counts it when
/// asked): what [`with_early_helper`]'s caller keeps beside its helper, given before
/// the cores are counted.
const ALL_BUT_ONE: usize = usize::MAX;

/// What [`with_early_helper`] does with its thread's cores.
#[derive(Debug, PartialEq)]
struct HelperShares {
    /// Whether a helper starts.
    starts: bool,
    /// Whether the helper counts the process's cores ([`cores`]) before any task, and
    /// leaves every task to the caller when there is one.
    counts: bool,
    /// The share the caller keeps beside a helper.
    kept: usize,
}

impl HelperShares {
    /// Whether the helper, counting the process's cores with `count`, finds one and
    /// leaves every task to the caller, as when no helper starts (a cgroup's quota of
    /// one core on a mask of more).
    fn leave_every_task(&self, count: impl FnOnce() -> usize) -> bool {
        self.counts && count() < 2
    }
}

/// [`HelperShares`] for a thread of share `share` (0: none given) in a process whose
/// cores were `counted` (`None`: not yet). A share or a count decides. Before either,
/// the thread's affinity mask (`mask`, `None`: unknown) decides, one system call
/// against three files for the count: a cgroup's quota only lowers the count, so a
/// mask of one core means one, and the helper a mask of more starts counts the cores
/// itself, off the caller's path, while the caller keeps [`ALL_BUT_ONE`]. With no
/// mask, `count` counts them here.
fn helper_shares(
    share: usize,
    counted: Option<usize>,
    mask: impl FnOnce() -> Option<usize>,
    count: impl Fn() -> usize,
) -> HelperShares {
    let beside = |cores: usize, counts: bool| HelperShares {
        starts: cores > 1,
        counts,
        kept: cores.saturating_sub(1),
    };
    match (share, counted) {
        (0, Some(counted)) => beside(counted, false),
        (0, None) => match mask() {
            Some(mask) => HelperShares {
                kept: ALL_BUT_ONE,
                ..beside(mask, true)
            },
            None => beside(count(), false),
        },
        (share, _) => beside(share_of(share, count), false),
    }
}

/// How many cores this thread may run on, from its affinity mask (`None`: unknown).
fn cores_in_affinity_mask() -> Option<usize> {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: counts the bits of a set the system filled.
        this_threads_mask().and_then(|mask| usize::try_from(unsafe { libc::CPU_COUNT(&mask) }).ok())
    }
    #[cfg(not(target_os = "linux"))]
    {
        None
    }
}

/// This thread's affinity mask (`None`: the system did not say).
#[cfg(target_os = "linux")]
fn this_threads_mask() -> Option<libc::cpu_set_t> {
    let size = std::mem::size_of::<libc::cpu_set_t>();
    // SAFETY: the set is plain data of the size given; 0 is this thread.
    unsafe {
        let mut mask: libc::cpu_set_t = std::mem::zeroed();
        (libc::sched_getaffinity(0, size, &mut mask) == 0).then_some(mask)
    }
}

/// Gives this thread a share of `cores` cores until dropped, then restores its share.
struct SharedCores(usize);

impl SharedCores {
    fn set(cores: usize) -> Self {
        SharedCores(SHARE.replace(cores.max(1)))
    }
}

impl Drop for SharedCores {
    fn drop(&mut self) {
        SHARE.set(self.0);
    }
}

/// Runs `first` on a second thread while `second` runs on this one, and returns both
/// results; both run here, `first` first, when no thread can be started. Each side has
/// half of this thread's cores ([`cores_here`]), the second the larger half. The
/// second thread keeps off this thread's core ([`keep_this_thread_off`]).
pub fn side_by_side<A: Send, B>(
    first: impl FnOnce() -> A + Send,
    second: impl FnOnce() -> B,
) -> (A, B) {
    let all = cores_here();
    let (first_share, second_share) = (all / 2, all - all / 2);
    // Taken exactly once: by the second thread, or here when it cannot start.
    let first = Mutex::new(Some(first));
    let run_first = || first.lock().ok().and_then(|mut f| f.take()).map(|f| f());
    let here = this_core();
    let (a, b) = std::thread::scope(|scope| {
        let spawned = std::thread::Builder::new()
            .stack_size(HELPER_STACK)
            .spawn_scoped(scope, || {
                keep_this_thread_off(here);
                let _share = SharedCores::set(first_share);
                run_first()
            });
        match spawned {
            Ok(handle) => {
                let b = {
                    let _share = SharedCores::set(second_share);
                    second()
                };
                let a = handle
                    .join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
                (a, b)
            }
            Err(_) => (run_first(), second()),
        }
    });
    (a.expect("the first task runs exactly once"), b)
}

/// A unit of work for [`run_in_parallel`]; it hands its result out through what it
/// captures (a `&mut Option<T>`, say).
pub type Task<'a> = Box<dyn FnOnce() + Send + 'a>;

/// Runs every task exactly once, on this thread and on one more thread per other core
/// of its share ([`cores_here`]; never more threads than tasks), and returns when all
/// have run. Each thread's tasks share its part of those cores. Each thread takes
/// the next task no thread has taken, in the list's order: put the longest first, and
/// the short ones fill in behind. The threads started keep off this thread's core
/// ([`keep_this_thread_off`]).
pub fn run_in_parallel(tasks: Vec<Task<'_>>) {
    let cores = cores_here();
    let helpers = cores.min(tasks.len()).saturating_sub(1);
    // Each thread's part of this thread's cores, for the work nested in its tasks.
    let share = cores / (helpers + 1);
    let queue: Vec<Mutex<Option<Task<'_>>>> =
        tasks.into_iter().map(|t| Mutex::new(Some(t))).collect();
    let next = AtomicUsize::new(0);
    let work = || {
        let _share = SharedCores::set(share);
        while let Some(cell) = queue.get(next.fetch_add(1, Ordering::Relaxed)) {
            // Each index is claimed by one thread only, so the lock is never contended.
            let task = cell.lock().unwrap_or_else(|p| p.into_inner()).take();
            if let Some(task) = task {
                task();
            }
        }
    };
    if helpers == 0 {
        work();
        return;
    }
    let here = this_core();
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..helpers)
            .filter_map(|_| {
                std::thread::Builder::new()
                    .stack_size(HELPER_STACK)
                    .spawn_scoped(scope, || {
                        keep_this_thread_off(here);
                        work()
                    })
                    .ok()
            })
            .collect();
        work();
        for handle in handles {
            if let Err(panic) = handle.join() {
                std::panic::resume_unwind(panic);
            }
        }
    });
}

/// `f` of every item, computed by [`run_in_parallel`], in the items' order.
pub fn map_in_parallel<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    map_in_parallel_between(Vec::new(), items, f, None)
}

/// [`map_in_parallel`] with the tasks `first` queued ahead of the items, and `later`
/// after the first `n` of them for `later = Some((n, task))`, all taken in that order
/// by [`run_in_parallel`]'s threads. A task may wait for a value an earlier one
/// computes ([`Later`]): every earlier task has started on some thread.
pub fn map_in_parallel_between<'a, T: Sync, R: Send>(
    first: Vec<Task<'a>>,
    items: &'a [T],
    f: impl Fn(&T) -> R + Sync,
    later: Option<(usize, Task<'a>)>,
) -> Vec<R> {
    let mut results: Vec<Option<R>> = items.iter().map(|_| None).collect();
    let f = &f;
    let each_item = items
        .iter()
        .zip(results.iter_mut())
        .map(|(item, slot)| Box::new(move || *slot = Some(f(item))) as Task<'_>)
        .collect();
    run_in_parallel(queue_between(first, each_item, later));
    results
        .into_iter()
        .map(|r| r.expect("run_in_parallel runs every task"))
        .collect()
}

/// The tasks `first`, then `items`, with `later = Some((n, task))` after the first `n`
/// items (after all of them when there are fewer).
fn queue_between<'a>(
    first: Vec<Task<'a>>,
    items: Vec<Task<'a>>,
    later: Option<(usize, Task<'a>)>,
) -> Vec<Task<'a>> {
    let (start, count) = (first.len(), items.len());
    let mut tasks = first;
    tasks.extend(items);
    if let Some((after, task)) = later {
        tasks.insert(start + after.min(count), task);
    }
    tasks
}

/// Runs `consume(item, prepare(item))` for every item, in the items' order, on this
/// thread, while a helper thread prepares the items ahead of it. Each item is prepared
/// exactly once, by the thread that takes it: the helper takes the next item no thread
/// has taken; this thread takes the item it reaches when no thread has, and while it
/// waits for the helper to prepare that item, it takes the next untaken ones too. When
/// the helper is gone without preparing an item, this thread prepares it.
/// For work whose first step may run on every core and whose second may not: linking
/// into one folder takes that folder's lock, and two threads doing it spent their time
/// waiting on each other. Stops at the first error of `consume` and returns it; the
/// helper then takes no more items. A panic of either step reaches the caller.
pub fn prepared_ahead<T: Sync, P: Send, E>(
    items: &[T],
    prepare: impl Fn(&T) -> P + Sync,
    mut consume: impl FnMut(&T, P) -> Result<(), E>,
) -> Result<(), E> {
    let next = AtomicUsize::new(0);
    let slots = Slots {
        state: Mutex::new((items.iter().map(|_| None).collect(), false)),
        prepared: Condvar::new(),
    };
    let (prepare, next, slots) = (&prepare, &next, &slots);
    let here = this_core();
    std::thread::scope(|scope| {
        let helper = helper_worth_starting(items.len())
            .then(|| {
                std::thread::Builder::new()
                    .stack_size(HELPER_STACK)
                    .spawn_scoped(scope, move || {
                        let _ended = HelperEnded(slots);
                        keep_this_thread_off(here);
                        loop {
                            let index = next.fetch_add(1, Ordering::Relaxed);
                            let Some(item) = items.get(index) else {
                                break;
                            };
                            let done = prepare(item);
                            slots.lock().0[index] = Some(done);
                            slots.prepared.notify_one();
                        }
                    })
                    .ok()
            })
            .flatten();
        let mut result = Ok(());
        for (index, item) in items.iter().enumerate() {
            // Every item before this one was taken, so `next` is at least `index`: it
            // is `index` exactly when no thread has taken this item.
            let taken_here = next
                .compare_exchange(index, index + 1, Ordering::Relaxed, Ordering::Relaxed)
                .is_ok();
            let done = if taken_here {
                prepare(item)
            } else {
                loop {
                    match slots.take(index) {
                        Taken::Ready(done) => break done,
                        // The helper ended without it: it panicked, and the panic is
                        // handed on when it is joined below.
                        Taken::Never => break prepare(item),
                        Taken::NotYet => {}
                    }
                    // Rather than wait, prepare the next item no thread has taken.
                    let later = next.fetch_add(1, Ordering::Relaxed);
                    match items.get(later) {
                        Some(later_item) => {
                            let done = prepare(later_item);
                            slots.lock().0[later] = Some(done);
                        }
                        // Nothing left to take: wait; if the helper ended without
                        // it, prepare it here.
                        None => break slots.wait_for(index).unwrap_or_else(|| prepare(item)),
                    }
                }
            };
            result = consume(item, done);
            if result.is_err() {
                next.store(items.len(), Ordering::Relaxed);
                break;
            }
        }
        if let Some(helper) = helper {
            if let Err(panic) = helper.join() {
                std::panic::resume_unwind(panic);
            }
        }
        result
    })
}

/// Whether [`prepared_ahead`] starts a helper for `items` items: with two cores or
/// more for this thread ([`cores_here`]), for two items or more (one item has nothing
/// to prepare ahead of it).
fn helper_worth_starting(items: usize) -> bool {
    cores_here() > 1 && items > 1
}

/// The items [`prepared_ahead`]'s helper has prepared, by index, and whether it has
/// ended; this thread waits on `prepared` for the next.
struct Slots<P> {
    state: Mutex<(Vec<Option<P>>, bool)>,
    prepared: Condvar,
}

impl<P> Slots<P> {
    fn lock(&self) -> std::sync::MutexGuard<'_, (Vec<Option<P>>, bool)> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Item `index` if it is prepared, else whether it may still be.
    fn take(&self, index: usize) -> Taken<P> {
        Self::taken(&mut self.lock(), index)
    }

    /// Item `index` once the helper has prepared it; `None` when the helper ended
    /// without preparing it.
    fn wait_for(&self, index: usize) -> Option<P> {
        let mut state = self.lock();
        loop {
            match Self::taken(&mut state, index) {
                Taken::Ready(done) => return Some(done),
                Taken::Never => return None,
                Taken::NotYet => {
                    state = self.prepared.wait(state).unwrap_or_else(|p| p.into_inner());
                }
            }
        }
    }

    /// [`Slots::take`] on the locked state.
    fn taken(state: &mut (Vec<Option<P>>, bool), index: usize) -> Taken<P> {
        match state.0[index].take() {
            Some(done) => Taken::Ready(done),
            None if state.1 => Taken::Never,
            None => Taken::NotYet,
        }
    }
}

/// What [`Slots::take`] found.
enum Taken<P> {
    Ready(P),
    /// Not prepared, and the helper has ended.
    Never,
    /// Not prepared yet.
    NotYet,
}

/// Marks [`prepared_ahead`]'s helper as ended when it is dropped, on return or on a
/// panic, so that this thread never waits for an item the helper will not prepare.
struct HelperEnded<'s, P>(&'s Slots<P>);

impl<P> Drop for HelperEnded<'_, P> {
    fn drop(&mut self) {
        self.0.lock().1 = true;
        self.0.prepared.notify_all();
    }
}

/// Tasks handed to a helper thread as they become possible ([`with_early_helper`]).
pub struct Tasks<'a> {
    state: Mutex<Queue<'a>>,
    ready: Condvar,
}

/// What [`Tasks`] holds.
struct Queue<'a> {
    /// The tasks, in the order they are taken (but for those not yet ready).
    tasks: VecDeque<Queued<'a>>,
    /// Whether `main` has returned: no task is pushed after.
    closed: bool,
    /// Tasks the helper runs only when no other can start ([`Tasks::push_spare`]).
    spare: VecDeque<Task<'a>>,
}

/// Whether a task queued with [`Tasks::push_when`] can start without waiting.
type Ready<'a> = Box<dyn Fn() -> bool + Send + 'a>;

/// A queued task, and when it can start without waiting (`None`: at once).
struct Queued<'a> {
    task: Task<'a>,
    ready: Option<Ready<'a>>,
}

impl<'a> Queued<'a> {
    fn now(task: Task<'a>) -> Self {
        Queued { task, ready: None }
    }
}

/// Takes the first queued task that can start without waiting, or the first task when
/// none can (it then waits, as it would have in the queue's order).
fn take_next<'a>(queue: &mut VecDeque<Queued<'a>>) -> Option<Task<'a>> {
    take_ready(queue).or_else(|| queue.pop_front().map(|q| q.task))
}

/// Takes the first queued task that can start without waiting, if any.
fn take_ready<'a>(queue: &mut VecDeque<Queued<'a>>) -> Option<Task<'a>> {
    let at = queue
        .iter()
        .position(|q| q.ready.as_ref().is_none_or(|ready| ready()))?;
    queue.remove(at).map(|q| q.task)
}

impl<'a> Tasks<'a> {
    fn new() -> Self {
        Tasks {
            state: Mutex::new(Queue {
                tasks: VecDeque::new(),
                closed: false,
                spare: VecDeque::new(),
            }),
            ready: Condvar::new(),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Queue<'a>> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Queues `task`: the helper runs it when it is free, or [`Tasks::work`] here.
    pub fn push(&self, task: Task<'a>) {
        self.lock().tasks.push_back(Queued::now(task));
        self.ready.notify_one();
    }

    /// Queues `task`, which a thread passes over while `ready` is false (it would wait
    /// for a [`Later`] value another thread computes), taking a task queued after it
    /// instead, and takes in its place once `ready` holds, or when no other task is
    /// queued. Nothing queued may wait for what `task` computes, since a task queued
    /// after it may start before it.
    pub fn push_when(&self, ready: impl Fn() -> bool + Send + 'a, task: Task<'a>) {
        self.lock().tasks.push_back(Queued {
            task,
            ready: Some(Box::new(ready)),
        });
        self.ready.notify_one();
    }

    /// Queues `tasks`, in their order, ahead of every task already queued: work the
    /// caller waits for now goes before work queued ahead for later.
    pub fn push_ahead(&self, tasks: Vec<Task<'a>>) {
        let mut state = self.lock();
        for task in tasks.into_iter().rev() {
            state.tasks.push_front(Queued::now(task));
        }
        drop(state);
        self.ready.notify_one();
    }

    /// Queues `task` as spare work: work that nothing waits for and that would
    /// otherwise be done later, on the thread that needs it (a cache filled ahead).
    /// Only the helper runs spare tasks, in the order pushed, one at a time and only
    /// when no other task can start; those left when the queue closes are dropped
    /// unrun. So a spare task takes only a helper's idle time, and delays a task
    /// pushed meanwhile by at most its own length.
    pub fn push_spare(&self, task: Task<'a>) {
        self.lock().spare.push_back(task);
        self.ready.notify_one();
    }

    /// Runs queued tasks on this thread, in order (each task of [`Tasks::push_when`]
    /// once it is ready, or when no other is), until none is queued.
    pub fn work(&self) {
        loop {
            let next = take_next(&mut self.lock().tasks);
            match next {
                Some(task) => task(),
                None => return,
            }
        }
    }

    /// Whether a task, spare or not, is queued, or the queue is closed.
    fn has_any_work(&self) -> bool {
        let state = self.lock();
        !state.tasks.is_empty() || !state.spare.is_empty() || state.closed
    }

    /// The next task, waiting for one: the first that can start without waiting, else
    /// a spare one ([`Tasks::push_spare`]), else the first queued (it then waits);
    /// `None` once the queue is closed and empty. Spins for up to
    /// [`SPIN_BEFORE_SLEEP`] before it sleeps ([`spin_until`]).
    fn next_or_wait(&self) -> Option<Task<'a>> {
        spin_until(|| self.has_any_work());
        let mut state = self.lock();
        loop {
            if state.closed && state.tasks.is_empty() {
                return None;
            }
            if let Some(task) = take_ready(&mut state.tasks) {
                return Some(task);
            }
            if !state.closed {
                if let Some(spare) = state.spare.pop_front() {
                    return Some(spare);
                }
            }
            if let Some(queued) = state.tasks.pop_front() {
                return Some(queued.task);
            }
            state = self.ready.wait(state).unwrap_or_else(|p| p.into_inner());
        }
    }

    fn close(&self) {
        self.lock().closed = true;
        self.ready.notify_all();
    }
}

/// Closes the queue however `main` ends (a panic included), so the helper stops.
struct CloseOnDrop<'q, 'a>(&'q Tasks<'a>);

impl Drop for CloseOnDrop<'_, '_> {
    fn drop(&mut self) {
        self.0.close();
    }
}

/// Runs `main` here with a helper thread started before it, which runs each task
/// `main` pushes as soon as it is free: a thread takes a while to start, and the
/// helper's start and its first task overlap `main`'s own first steps. `main` may
/// also run queued tasks with [`Tasks::work`]. Returns when `main` has returned and
/// every task has run (those left are run here); a task's panic reaches the caller.
/// A task may wait for something `main` sends it later, since `main` can only take
/// it with `work`. With one core or no thread, every task runs here, in `work` or at
/// the end. What tasks borrow must outlive the call (cells the caller owns).
pub fn with_early_helper<'a, R>(main: impl FnOnce(&Tasks<'a>) -> R) -> R {
    let tasks = Tasks::new();
    // Counting the process's cores reads three files (about 70 µs): at the top, the
    // helper starts on the affinity mask's word and counts them itself.
    let shares = helper_shares(
        SHARE.get(),
        CORES.get().copied(),
        cores_in_affinity_mask,
        cores,
    );
    let shares = &shares;
    let helper_panic: Mutex<Option<Box<dyn std::any::Any + Send>>> = Mutex::new(None);
    let result = std::thread::scope(|scope| {
        let queue = &tasks;
        let helper_panic = &helper_panic;
        let here = this_core();
        let helper = shares
            .starts
            .then(|| {
                std::thread::Builder::new()
                    .stack_size(HELPER_STACK)
                    .spawn_scoped(scope, move || {
                        let _share = SharedCores::set(1);
                        let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                            if shares.leave_every_task(cores) {
                                return;
                            }
                            keep_this_thread_off(here);
                            warm_heap_until_work(queue);
                            while let Some(task) = queue.next_or_wait() {
                                task();
                            }
                        }));
                        if let Err(panic) = run {
                            *helper_panic.lock().unwrap_or_else(|p| p.into_inner()) = Some(panic);
                        }
                    })
                    .ok()
            })
            .flatten();
        if helper.is_some() {
            // A new thread is often queued on its creator's core: let it run now, so
            // it moves to another core at once instead of at the next scheduler tick.
            std::thread::yield_now();
        }
        // The helper has one of this thread's cores.
        let _share = helper.is_some().then(|| SharedCores::set(shares.kept));
        let result = {
            let _close = CloseOnDrop(queue);
            main(queue)
        };
        queue.work();
        if let Some(helper) = helper {
            // Not joined: joining waits for the thread's exit, which ends a few
            // microseconds after its work, and a thread that sleeps in that wait takes
            // long to wake (see `spin_until`). Once the helper's work is done, its
            // handle is dropped and it ends on its own; the scope waits only for a
            // helper still at work. Its panic is caught and raised here.
            spin_until(|| helper.is_finished());
            drop(helper);
        }
        result
    });
    if let Some(panic) = helper_panic.into_inner().unwrap_or_else(|p| p.into_inner()) {
        std::panic::resume_unwind(panic);
    }
    result
}

/// How long a thread of [`with_early_helper`], or one waiting for a [`Later`] value,
/// spins for what it waits for before it sleeps. On a virtual machine, waking a
/// thread that sleeps on an idle core goes through the hypervisor (the core is
/// halted): 0.10 to 0.13 ms in an example's `render` on the benchmarks' machine, where
/// most waits are shorter than that. The spinning thread yields its core at each
/// check, in case the thread it waits for is ready to run on it.
const SPIN_BEFORE_SLEEP: std::time::Duration = std::time::Duration::from_millis(1);

/// Spins until `done` holds or [`SPIN_BEFORE_SLEEP`] has passed; returns whether
/// `done` held. The caller then sleeps if it must (a condition variable, a join).
pub(crate) fn spin_until(mut done: impl FnMut() -> bool) -> bool {
    let start = std::time::Instant::now();
    loop {
        if done() {
            return true;
        }
        if start.elapsed() >= SPIN_BEFORE_SLEEP {
            return false;
        }
        // Gives the core to a thread that is ready to run on it, if any: the thread
        // this one waits for may be it.
        std::thread::yield_now();
    }
}

/// How much of its heap a helper touches while it waits for its first task.
const WARM_HEAP_BYTES: usize = 2 * 1024 * 1024;

/// The blocks [`warm_heap_until_work`] touches that memory in.
const WARM_BLOCK_BYTES: usize = 1024;

/// Touches up to [`WARM_HEAP_BYTES`] of this thread's heap and frees it, stopping as
/// soon as `tasks` has a task (spare or not) queued or is closed; returns the bytes
/// touched. A thread's heap starts empty, and the first touch of each page costs a
/// page fault (2 to 5 µs here): a helper that started cold took about 300 of them in its first two tasks of
/// an example's `render`, each task about half again as long as on the main thread.
/// The memory stays with this thread's heap, for the tasks that follow.
fn warm_heap_until_work(tasks: &Tasks<'_>) -> usize {
    let mut blocks: Vec<Vec<u8>> = Vec::with_capacity(WARM_HEAP_BYTES / WARM_BLOCK_BYTES);
    while blocks.len() < blocks.capacity() && !tasks.has_any_work() {
        for _ in 0..64 {
            // Written, not zeroed: fresh memory may count as zeroed without a touch.
            blocks.push(std::hint::black_box(vec![1u8; WARM_BLOCK_BYTES]));
        }
    }
    let touched = blocks.len() * WARM_BLOCK_BYTES;
    drop(std::hint::black_box(blocks));
    touched
}

/// The core this thread runs on, when the system says.
fn this_core() -> Option<usize> {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: no arguments, no memory.
        usize::try_from(unsafe { libc::sched_getcpu() }).ok()
    }
    #[cfg(not(target_os = "linux"))]
    {
        None
    }
}

/// Keeps this thread off core `core` (another thread's, busy) for its life: it may run
/// on any other core the process may use. A helper woken by a busy thread was often
/// queued on that thread's core, and waited there for up to a scheduler tick (4 ms)
/// while the other core was idle, or took the core from the thread that woke it. A
/// new thread too: without this, in 29 of 30 runs of `generate` of 400 workloads two
/// threads took turns on one core for 4 ms or more. Does nothing with one core, or
/// when the process's cores cannot be read.
fn keep_this_thread_off(core: Option<usize>) {
    #[cfg(target_os = "linux")]
    {
        let (Some(core), Some(mut cores)) = (core, this_threads_mask()) else {
            return;
        };
        // SAFETY: the set is plain data of the size given; 0 is this thread.
        unsafe {
            if core >= libc::CPU_SETSIZE as usize
                || !libc::CPU_ISSET(core, &cores)
                || libc::CPU_COUNT(&cores) < 2
            {
                return;
            }
            libc::CPU_CLR(core, &mut cores);
            libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &cores);
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = core;
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A task named `name`, which adds its name to `log` when it runs.
    fn logging_into<'l>(log: &'l Mutex<Vec<&'static str>>) -> impl Fn(&'static str) -> Task<'l> {
        move |name| Box::new(move || log.lock().unwrap().push(name))
    }

    /// Tasks pushed ahead run before those queued earlier, in the order given.
    #[test]
    fn tasks_pushed_ahead_run_first_in_their_order() {
        let log = Mutex::new(Vec::new());
        let task = logging_into(&log);
        let tasks = Tasks::new();
        tasks.push(task("queued"));
        tasks.push_ahead(vec![task("first"), task("second")]);
        tasks.push(task("last"));
        tasks.work();
        assert_eq!(log.lock().unwrap().join(" "), "first second queued last");
        tasks.push_ahead(Vec::new());
        assert!(!tasks.has_any_work(), "nothing is queued by an empty push");
    }

    /// A task of `push_when` is taken in its place once it is ready; until then the
    /// tasks after it go first, and when only such tasks are left, the first is taken
    /// all the same (it then waits, as it would have in the queue's order).
    #[test]
    fn tasks_that_would_wait_let_the_next_ones_go_first() {
        let log = Mutex::new(Vec::new());
        let flag = std::sync::atomic::AtomicBool::new(false);
        let (log_of, flag_of) = (&log, &flag);
        let task = logging_into(&log);
        let tasks = Tasks::new();
        tasks.push_when(move || flag_of.load(Ordering::Acquire), task("flagged"));
        tasks.push_when(|| true, task("ready"));
        tasks.push(Box::new(move || {
            log_of.lock().unwrap().push("flag");
            flag_of.store(true, Ordering::Release);
        }));
        tasks.push(task("last"));
        tasks.work();
        assert_eq!(log.lock().unwrap().join(" "), "ready flag flagged last");
        log.lock().unwrap().clear();
        tasks.push_when(|| false, task("never ready"));
        tasks.push_when(|| false, task("never either"));
        tasks.push(task("plain"));
        tasks.work();
        assert_eq!(
            log.lock().unwrap().join(" "),
            "plain never ready never either"
        );
        assert!(!tasks.has_any_work());
    }

    /// A thread waiting for a task takes every task that can start first, then the
    /// spare ones in their order, before one that would wait; once the queue is
    /// closed, no spare task runs.
    #[test]
    fn spare_tasks_run_only_when_no_other_can_start_and_never_once_closed() {
        let log = Mutex::new(Vec::new());
        let task = logging_into(&log);
        let tasks = Tasks::new();
        tasks.push_spare(task("spare1"));
        tasks.push_when(|| false, task("waits"));
        tasks.push_spare(task("spare2"));
        tasks.push(task("plain"));
        for _ in 0..4 {
            tasks.next_or_wait().expect("a task is queued")();
        }
        assert_eq!(log.lock().unwrap().join(" "), "plain spare1 spare2 waits");
        assert!(!tasks.has_any_work());
        tasks.push_spare(task("left"));
        assert!(tasks.has_any_work(), "a spare task is work");
        tasks.close();
        assert!(
            tasks.next_or_wait().is_none(),
            "closed: the spare task is dropped"
        );
        assert_eq!(log.lock().unwrap().len(), 4);
    }

    /// `work`, this thread's, runs the queued tasks but never a spare one.
    #[test]
    fn work_leaves_spare_tasks_to_the_helper() {
        let log = Mutex::new(Vec::new());
        let task = logging_into(&log);
        let tasks = Tasks::new();
        tasks.push_spare(task("spare"));
        tasks.push(task("plain"));
        tasks.work();
        assert_eq!(log.lock().unwrap().join(" "), "plain");
        assert!(tasks.has_any_work(), "the spare task is still queued");
    }

    /// On two cores the helper, idle, runs a spare task while `main` waits for it; with
    /// one core there is no helper, and the spare task is dropped unrun.
    #[test]
    fn an_idle_helper_runs_the_spare_tasks() {
        let cores = cores();
        let caller = std::thread::current().id();
        let ran_on = std::sync::OnceLock::new();
        let ran_ref = &ran_on;
        with_early_helper(|tasks| {
            tasks.push_spare(Box::new(move || {
                let _ = ran_ref.set(std::thread::current().id());
            }));
            let start = std::time::Instant::now();
            while cores > 1 && ran_ref.get().is_none() && start.elapsed() < Duration::from_secs(10)
            {
                std::thread::yield_now();
            }
        });
        let ran_on = ran_on.into_inner();
        assert_eq!(ran_on.is_some(), cores > 1, "ran on a helper: {ran_on:?}");
        assert!(ran_on.is_none_or(|thread| thread != caller));
    }

    /// `is_ready` once the value is computed, or its computation panicked.
    #[test]
    fn a_later_value_is_ready_once_computed_or_failed() {
        let later = Later::default();
        assert!(!later.is_ready());
        later.compute(|| 7);
        assert!(later.is_ready());
        let failed: Later<u8> = Later::default();
        let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            failed.compute(|| panic!("no value"))
        }));
        assert!(caught.is_err());
        assert!(failed.is_ready());
        assert_eq!(failed.wait(), None);
    }

    /// Tasks queued around the items: `first` ahead, the later task after the first
    /// `n` items, or after all of them when `n` is past their end.
    #[test]
    fn tasks_are_queued_around_the_items() {
        let log = Mutex::new(Vec::new());
        let task = logging_into(&log);
        let order = |later: Option<usize>| {
            log.lock().unwrap().clear();
            let queue = queue_between(
                vec![task("f1"), task("f2")],
                vec![task("i1"), task("i2"), task("i3")],
                later.map(|n| (n, task("later"))),
            );
            queue.into_iter().for_each(|t| t());
            log.lock().unwrap().join(" ")
        };
        assert_eq!(order(None), "f1 f2 i1 i2 i3");
        assert_eq!(order(Some(0)), "f1 f2 later i1 i2 i3");
        assert_eq!(order(Some(1)), "f1 f2 i1 later i2 i3");
        assert_eq!(order(Some(3)), "f1 f2 i1 i2 i3 later");
        assert_eq!(order(Some(usize::MAX)), "f1 f2 i1 i2 i3 later");
    }

    /// The results come in the items' order, every task runs once, and a later task
    /// may wait for a value a first task computes.
    #[test]
    fn a_later_task_waits_for_a_first_one() {
        let value = Later::default();
        let seen = Mutex::new(None);
        let runs = AtomicUsize::new(0);
        let items: Vec<u64> = (1..=6).collect();
        let squares = map_in_parallel_between(
            vec![Box::new(|| {
                std::thread::sleep(std::time::Duration::from_millis(20));
                value.compute(|| 42);
                runs.fetch_add(1, Ordering::Relaxed);
            })],
            &items,
            |n| n * n,
            Some((
                1,
                Box::new(|| {
                    *seen.lock().unwrap() = value.wait().copied();
                    runs.fetch_add(1, Ordering::Relaxed);
                }),
            )),
        );
        assert_eq!(squares, [1, 4, 9, 16, 25, 36]);
        assert_eq!(*seen.lock().unwrap(), Some(42));
        assert_eq!(runs.load(Ordering::Relaxed), 2);
    }
    use std::collections::HashSet;
    use std::sync::mpsc;
    use std::time::Duration;

    #[test]
    fn side_by_side_runs_the_first_task_on_another_thread_and_returns_both() {
        let here = std::thread::current().id();
        let (first, second) = side_by_side(
            || (std::thread::current().id(), vec![1, 2, 3]),
            || (std::thread::current().id(), "second"),
        );
        assert_ne!(first.0, here);
        assert_eq!(first.1, vec![1, 2, 3]);
        assert_eq!(second, (here, "second"));
    }

    #[test]
    fn side_by_side_runs_both_tasks_at_once() {
        // Each task waits for the other to start: run one after the other, they would
        // wait forever (the timeout fails the test instead).
        let (tx_a, rx_a) = mpsc::channel();
        let (tx_b, rx_b) = mpsc::channel();
        let wait = Duration::from_secs(10);
        let (a, b) = side_by_side(
            move || {
                tx_a.send(()).unwrap();
                rx_b.recv_timeout(wait).is_ok()
            },
            move || {
                tx_b.send(()).unwrap();
                rx_a.recv_timeout(wait).is_ok()
            },
        );
        assert!(a && b);
    }

    /// The threads each side of a call runs on, and what a map nested in each does.
    fn threads_of_a_nested_map() -> (usize, usize, HashSet<std::thread::ThreadId>) {
        let threads = Mutex::new(HashSet::new());
        let share = cores_here();
        let items = [0u8; 8];
        map_in_parallel(&items, |_| {
            threads.lock().unwrap().insert(std::thread::current().id());
        });
        (share, cores_here(), threads.into_inner().unwrap())
    }

    #[test]
    fn the_sides_of_side_by_side_share_the_callers_cores() {
        // A thread this module did not start has every core.
        assert_eq!(cores_here(), cores());
        let (first, second) = side_by_side(threads_of_a_nested_map, threads_of_a_nested_map);
        let all = cores();
        assert_eq!(first.0, (all / 2).max(1));
        assert_eq!(second.0, (all - all / 2).max(1));
        if all >= 2 {
            assert_eq!(first.0 + second.0, all);
        }
        for (share, after, threads) in [first, second] {
            assert_eq!(after, share, "a nested call gives the share back");
            assert!(
                threads.len() <= share,
                "{} threads for {share} cores",
                threads.len()
            );
        }
        // On two cores, a map nested in either side runs on that side's thread.
        if all == 2 {
            assert_eq!(first_thread_count(), 1);
        }
        assert_eq!(cores_here(), all, "the caller's share is given back");
    }

    /// The threads a map nested in the first side of a two-core `side_by_side` uses.
    fn first_thread_count() -> usize {
        side_by_side(|| threads_of_a_nested_map().2.len(), || ()).0
    }

    #[test]
    fn the_threads_of_run_in_parallel_share_the_callers_cores() {
        let all = cores();
        let shares = Mutex::new(Vec::new());
        let log = &shares;
        let tasks: Vec<Task<'_>> = (0..4)
            .map(|_| {
                Box::new(move || {
                    log.lock()
                        .unwrap()
                        .push((std::thread::current().id(), cores_here()));
                }) as Task<'_>
            })
            .collect();
        run_in_parallel(tasks);
        // A thread per core, at most one per task; each has its part of the cores,
        // whichever tasks it took.
        let shares = shares.into_inner().unwrap();
        assert_eq!(shares.len(), 4);
        for (_, share) in &shares {
            assert_eq!(*share, all / all.min(4), "{shares:?}");
        }
        assert_eq!(cores_here(), all, "the caller's share is given back");
    }

    #[test]
    fn a_share_given_to_this_thread_is_what_its_calls_split() {
        {
            let _share = SharedCores::set(5);
            assert_eq!(cores_here(), 5);
            assert_eq!(side_by_side(cores_here, cores_here), (2, 3));
        }
        {
            let _share = SharedCores::set(4);
            assert_eq!(side_by_side(cores_here, cores_here), (2, 2));
            // Two tasks: two threads, each with half.
            let shares = Mutex::new(Vec::new());
            let log = &shares;
            run_in_parallel(
                (0..2)
                    .map(|_| Box::new(move || log.lock().unwrap().push(cores_here())) as Task<'_>)
                    .collect(),
            );
            assert_eq!(shares.into_inner().unwrap(), vec![2, 2]);
        }
        {
            // No share is less than one core.
            let _share = SharedCores::set(0);
            assert_eq!(cores_here(), 1);
        }
        assert_eq!(cores_here(), cores(), "each share is given back");
    }

    #[test]
    fn a_thread_with_one_core_starts_no_helper() {
        let caller = std::thread::current().id();
        {
            let _share = SharedCores::set(1);
            assert!(!helper_worth_starting(5));
            let ran_on = Mutex::new(Vec::new());
            let log = &ran_on;
            with_early_helper(|tasks| {
                for _ in 0..3 {
                    tasks.push(Box::new(move || {
                        log.lock().unwrap().push(std::thread::current().id())
                    }));
                }
                assert_eq!(cores_here(), 1);
                // A helper would take the tasks while this thread waits; without one
                // they wait for this thread.
                let deadline = std::time::Instant::now() + Duration::from_millis(200);
                while log.lock().unwrap().is_empty() && std::time::Instant::now() < deadline {
                    std::thread::yield_now();
                }
            });
            assert_eq!(ran_on.into_inner().unwrap(), vec![caller; 3]);
        }
        let _share = SharedCores::set(2);
        assert!(helper_worth_starting(2));
        assert!(!helper_worth_starting(1));
    }

    /// `ALL_BUT_ONE` is counted when asked, never below one core.
    #[test]
    fn all_but_one_core_is_counted_when_asked() {
        let _share = SharedCores::set(ALL_BUT_ONE);
        assert_eq!(cores_here(), cores().saturating_sub(1).max(1));
    }

    /// A cgroup's quota only lowers the count of [`cores`]: the mask holds as many.
    #[cfg(target_os = "linux")]
    #[test]
    fn the_affinity_mask_holds_at_least_the_counted_cores() {
        let mask = cores_in_affinity_mask().expect("Linux tells a thread's mask");
        assert!(mask >= cores(), "mask {mask}, cores {}", cores());
    }

    /// Nested in a share, the early helper takes one core of it, and starts on a share
    /// of two or more only.
    #[test]
    fn a_nested_early_helper_takes_one_core_of_its_callers_share() {
        let kept = |share: usize| {
            let _share = SharedCores::set(share);
            with_early_helper(|_| cores_here())
        };
        assert_eq!(kept(3), 2);
        assert_eq!(kept(2), 1);
        assert_eq!(kept(1), 1);
        let beside_all_but_one = cores().saturating_sub(1).max(1);
        assert_eq!(
            kept(ALL_BUT_ONE),
            beside_all_but_one.saturating_sub(1).max(1)
        );
    }

    /// A share or the count decides, without the mask; before either, the mask decides
    /// and the helper counts, and the caller keeps all but one; with no mask, the
    /// count is taken here.
    #[test]
    fn the_helper_starts_on_the_share_the_count_or_else_the_mask() {
        let unasked = || -> Option<usize> { panic!("the mask is not asked") };
        let uncounted = || -> usize { panic!("the cores are not counted") };
        let shares = |starts, counts, kept| HelperShares {
            starts,
            counts,
            kept,
        };
        // A share given: one core starts nothing; two or more keep all but one.
        assert_eq!(
            helper_shares(1, None, unasked, uncounted),
            shares(false, false, 0)
        );
        assert_eq!(
            helper_shares(2, Some(8), unasked, uncounted),
            shares(true, false, 1)
        );
        assert_eq!(
            helper_shares(5, None, unasked, uncounted),
            shares(true, false, 4)
        );
        assert_eq!(
            helper_shares(ALL_BUT_ONE, None, unasked, || 4),
            shares(true, false, 2)
        );
        assert_eq!(
            helper_shares(ALL_BUT_ONE, None, unasked, || 2),
            shares(false, false, 0)
        );
        // No share, the cores counted.
        assert_eq!(
            helper_shares(0, Some(1), unasked, uncounted),
            shares(false, false, 0)
        );
        assert_eq!(
            helper_shares(0, Some(2), unasked, uncounted),
            shares(true, false, 1)
        );
        // Not counted yet: the mask decides, and the helper counts.
        assert_eq!(
            helper_shares(0, None, || Some(1), uncounted),
            shares(false, true, ALL_BUT_ONE)
        );
        assert_eq!(
            helper_shares(0, None, || Some(2), uncounted),
            shares(true, true, ALL_BUT_ONE)
        );
        // No mask: counted here.
        assert_eq!(
            helper_shares(0, None, || None, || 1),
            shares(false, false, 0)
        );
        assert_eq!(
            helper_shares(0, None, || None, || 3),
            shares(true, false, 2)
        );
    }

    /// Only a helper that counts the cores and finds one leaves every task.
    #[test]
    fn a_helper_that_counts_one_core_leaves_every_task() {
        let counting = |counts| HelperShares {
            starts: true,
            counts,
            kept: ALL_BUT_ONE,
        };
        assert!(counting(true).leave_every_task(|| 1));
        assert!(!counting(true).leave_every_task(|| 2));
        assert!(!counting(false).leave_every_task(|| 1));
    }

    /// The shares a thread may be given: none (all the cores), all but one, or a count.
    #[test]
    fn a_share_counts_all_the_cores_all_but_one_or_itself() {
        assert_eq!(share_of(0, || 4), 4);
        assert_eq!(share_of(ALL_BUT_ONE, || 4), 3);
        assert_eq!(share_of(ALL_BUT_ONE, || 1), 1);
        assert_eq!(share_of(ALL_BUT_ONE, || 0), 1);
        assert_eq!(share_of(3, || panic!("a share is not counted")), 3);
    }

    #[test]
    fn the_early_helper_has_one_core_and_main_the_others() {
        let all = cores();
        let on_helper = OnceLock::new();
        let (helper_share, main_share) = (&on_helper, cores_here());
        let in_main = with_early_helper(|tasks| {
            tasks.push(Box::new(move || {
                let _ = helper_share.set(cores_here());
            }));
            let here = cores_here();
            tasks.work();
            here
        });
        assert_eq!(main_share, all);
        assert_eq!(cores_here(), all, "the caller's share is given back");
        if all >= 2 {
            assert_eq!(in_main, all - 1);
            // The task ran on the helper, or here when `work` took it first.
            let seen = *on_helper.get().unwrap();
            assert!(seen == 1 || seen == all - 1, "{seen}");
        } else {
            assert_eq!(in_main, 1);
        }
    }

    #[test]
    fn a_panic_of_the_first_task_reaches_the_caller() {
        let caught = std::panic::catch_unwind(|| {
            side_by_side(|| -> u8 { panic!("first task failed") }, || 2)
        });
        let payload = caught.unwrap_err();
        assert_eq!(payload.downcast_ref::<&str>(), Some(&"first task failed"));
    }

    /// Every item is prepared once and consumed once, in order, with its own
    /// preparation; with two cores the helper prepares some of them.
    #[test]
    fn prepared_ahead_consumes_each_item_in_order_with_its_own_preparation() {
        let items: Vec<usize> = (0..200).collect();
        let prepared: Vec<AtomicUsize> = items.iter().map(|_| AtomicUsize::new(0)).collect();
        let caller = std::thread::current().id();
        let elsewhere = AtomicUsize::new(0);
        let mut consumed = Vec::new();
        let result: Result<(), ()> = prepared_ahead(
            &items,
            |&i| {
                prepared[i].fetch_add(1, Ordering::Relaxed);
                if std::thread::current().id() != caller {
                    elsewhere.fetch_add(1, Ordering::Relaxed);
                }
                std::thread::sleep(std::time::Duration::from_micros(200));
                i * 3
            },
            |&i, done| {
                assert_eq!(done, i * 3, "item {i} got another item's preparation");
                consumed.push(i);
                Ok(())
            },
        );
        assert_eq!(result, Ok(()));
        assert_eq!(consumed, items);
        for (i, count) in prepared.iter().enumerate() {
            assert_eq!(count.load(Ordering::Relaxed), 1, "item {i}");
        }
        if cores() > 1 {
            assert!(
                elsewhere.load(Ordering::Relaxed) > 0,
                "the helper prepared none"
            );
        }
    }

    #[test]
    fn a_helper_prepares_ahead_only_of_two_items_or_more_on_two_cores_or_more() {
        assert!(!helper_worth_starting(0));
        assert!(!helper_worth_starting(1));
        assert_eq!(helper_worth_starting(2), cores() > 1);
        assert_eq!(helper_worth_starting(usize::MAX), cores() > 1);
    }

    /// The first error of `consume` is returned, and no later item is consumed.
    #[test]
    fn prepared_ahead_stops_at_the_first_error() {
        let items: Vec<usize> = (0..100).collect();
        let mut consumed = Vec::new();
        let result = prepared_ahead(
            &items,
            |&i| i,
            |&i, _| {
                consumed.push(i);
                if i == 40 || i == 60 {
                    Err(i)
                } else {
                    Ok(())
                }
            },
        );
        assert_eq!(result, Err(40));
        assert_eq!(consumed, (0..=40).collect::<Vec<_>>());
    }

    /// One item or none: nothing to wait for, no helper needed.
    #[test]
    fn prepared_ahead_of_one_item_or_none() {
        let mut seen = Vec::new();
        let none: Result<(), ()> = prepared_ahead(&[] as &[u8], |_| 0, |_, _| unreachable!());
        assert_eq!(none, Ok(()));
        let one: Result<(), ()> = prepared_ahead(
            &[7u8],
            |&x| x + 1,
            |&x, p| {
                seen.push((x, p));
                Ok(())
            },
        );
        assert_eq!(one, Ok(()));
        assert_eq!(seen, [(7, 8)]);
    }

    /// A panic while preparing reaches the caller, whichever thread prepared, and the
    /// caller does not wait for an item the helper will never prepare.
    #[test]
    fn a_panic_while_preparing_reaches_the_caller() {
        let items: Vec<usize> = (0..64).collect();
        let caught = std::panic::catch_unwind(|| {
            prepared_ahead(
                &items,
                |&i| {
                    if i == 20 {
                        panic!("preparing failed");
                    }
                    i
                },
                |_, _| {
                    std::thread::sleep(std::time::Duration::from_micros(100));
                    Ok::<(), ()>(())
                },
            )
        });
        let payload = caught.unwrap_err();
        assert_eq!(payload.downcast_ref::<&str>(), Some(&"preparing failed"));
    }

    #[test]
    fn the_early_helper_runs_every_task_once_and_returns_mains_result() {
        let runs = AtomicUsize::new(0);
        let result = with_early_helper(|tasks| {
            for _ in 0..100 {
                tasks.push(Box::new(|| {
                    runs.fetch_add(1, Ordering::Relaxed);
                }));
            }
            tasks.work();
            "main's"
        });
        assert_eq!(result, "main's");
        assert_eq!(runs.load(Ordering::Relaxed), 100);
    }

    /// A task pushed before `main` has what it needs waits for it, on the helper (two
    /// cores) or in `work` after it was sent (one core): never forever.
    #[test]
    fn an_early_task_waits_for_what_main_sends_later() {
        let cores = cores();
        let caller = std::thread::current().id();
        let got = std::sync::OnceLock::new();
        let (got_ref, wait) = (&got, Duration::from_secs(10));
        let started_on_helper = with_early_helper(|tasks| {
            let (tx, rx) = mpsc::channel::<u32>();
            let (started_tx, started_rx) = mpsc::channel::<()>();
            tasks.push(Box::new(move || {
                let _ = started_tx.send(());
                let value = rx.recv_timeout(wait).ok();
                let _ = got_ref.set((value, std::thread::current().id()));
            }));
            // On two cores the helper takes the task and waits in it; on one, nothing
            // runs it before `work`.
            let started = cores > 1 && started_rx.recv_timeout(wait).is_ok();
            tx.send(42).unwrap();
            tasks.work();
            started
        });
        let (value, thread) = got.into_inner().expect("the task ran");
        assert_eq!(value, Some(42));
        assert_eq!(started_on_helper, cores > 1);
        assert_eq!(thread != caller, cores > 1);
    }

    /// While the helper is busy, `work` runs what is queued here, before it returns.
    #[test]
    fn work_runs_queued_tasks_here_while_the_helper_is_busy() {
        let cores = cores();
        let caller = std::thread::current().id();
        let ran_on = std::sync::OnceLock::new();
        let (ran_ref, wait) = (&ran_on, Duration::from_secs(10));
        with_early_helper(|tasks| {
            let (release_tx, release_rx) = mpsc::channel::<()>();
            if cores > 1 {
                let (started_tx, started_rx) = mpsc::channel::<()>();
                tasks.push(Box::new(move || {
                    let _ = started_tx.send(());
                    let _ = release_rx.recv_timeout(wait);
                }));
                assert!(
                    started_rx.recv_timeout(wait).is_ok(),
                    "the helper took the task"
                );
            }
            tasks.push(Box::new(move || {
                let _ = ran_ref.set(std::thread::current().id());
            }));
            tasks.work();
            assert_eq!(ran_ref.get(), Some(&caller));
            let _ = release_tx.send(());
        });
    }

    #[test]
    fn spinning_ends_when_the_condition_holds_or_after_the_limit() {
        assert!(spin_until(|| true));
        let start = std::time::Instant::now();
        assert!(!spin_until(|| false));
        assert!(start.elapsed() >= SPIN_BEFORE_SLEEP);
        // Checked again until it holds (unless a loaded machine took the whole limit).
        let (start, mut checks) = (std::time::Instant::now(), 0);
        let held = spin_until(|| {
            checks += 1;
            checks == 3
        });
        assert!(held || start.elapsed() >= SPIN_BEFORE_SLEEP);
        if held {
            assert_eq!(checks, 3);
        }
    }

    /// The helper is not joined, but the call still returns only once a task the
    /// helper runs has ended, however long it takes (longer than the spin here).
    #[test]
    fn the_early_helper_returns_after_a_long_task_on_the_helper_ends() {
        let ended = std::sync::atomic::AtomicBool::new(false);
        let wait = Duration::from_secs(10);
        let on_helper = with_early_helper(|tasks| {
            let (started_tx, started_rx) = mpsc::channel::<()>();
            let ended = &ended;
            tasks.push(Box::new(move || {
                let _ = started_tx.send(());
                std::thread::sleep(SPIN_BEFORE_SLEEP * 20);
                ended.store(true, Ordering::Release);
            }));
            cores() > 1 && started_rx.recv_timeout(wait).is_ok()
        });
        assert!(ended.load(Ordering::Acquire));
        assert_eq!(on_helper, cores() > 1);
    }

    #[test]
    fn a_panic_on_either_side_of_the_early_helper_reaches_the_caller() {
        let caught = std::panic::catch_unwind(|| {
            with_early_helper(|tasks| {
                tasks.push(Box::new(|| panic!("a task failed")));
            })
        });
        let payload = caught.unwrap_err();
        assert_eq!(payload.downcast_ref::<&str>(), Some(&"a task failed"));
        // `main` panicking while the helper waits for tasks: the helper stops.
        let caught = std::panic::catch_unwind(|| {
            with_early_helper(|_tasks: &Tasks<'_>| -> () { panic!("main failed") })
        });
        let payload = caught.unwrap_err();
        assert_eq!(payload.downcast_ref::<&str>(), Some(&"main failed"));
    }

    /// A task waits for what a task queued before it computes, on either thread; a
    /// computation that panics leaves `None` to its waiters instead of a hang, and the
    /// panic still reaches the caller.
    #[test]
    fn later_values_reach_the_tasks_queued_after_them() {
        for _ in 0..20 {
            let (first, second) = (Later::default(), Later::default());
            let got = std::sync::OnceLock::new();
            let (f, s, g) = (&first, &second, &got);
            with_early_helper(|tasks| {
                tasks.push(Box::new(move || f.compute(|| 20)));
                tasks.push(Box::new(move || s.compute(|| f.wait().map(|v| v + 1))));
                tasks.push(Box::new(move || {
                    let _ = g.set(s.wait().copied().flatten().map(|v| v * 2));
                }));
                tasks.work();
            });
            assert_eq!(got.into_inner(), Some(Some(42)));
            assert_eq!(first.into_inner(), Some(20));
        }
        let failed: Later<u8> = Later::default();
        let seen = std::sync::OnceLock::new();
        let (f, s) = (&failed, &seen);
        let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            with_early_helper(|tasks| {
                tasks.push(Box::new(move || f.compute(|| panic!("no value"))));
                tasks.push(Box::new(move || {
                    let _ = s.set(f.wait().copied());
                }));
                tasks.work();
            })
        }));
        assert_eq!(
            caught.unwrap_err().downcast_ref::<&str>(),
            Some(&"no value")
        );
        // With one core the panic ends the call before the waiting task runs.
        let cores = cores();
        if cores > 1 {
            assert_eq!(seen.into_inner(), Some(None));
        }
        assert_eq!(failed.into_inner(), None);
    }

    #[test]
    fn map_in_parallel_keeps_the_items_order_and_runs_each_once() {
        let calls = AtomicUsize::new(0);
        let items: Vec<u64> = (0..1000).collect();
        let squares = map_in_parallel(&items, |&n| {
            calls.fetch_add(1, Ordering::Relaxed);
            n * n
        });
        assert_eq!(squares, items.iter().map(|n| n * n).collect::<Vec<_>>());
        assert_eq!(calls.load(Ordering::Relaxed), 1000);
        assert!(map_in_parallel(&[] as &[u8], |&n| n).is_empty());
        assert_eq!(map_in_parallel(&[7u8], |&n| n + 1), vec![8]);
    }

    #[test]
    fn run_in_parallel_uses_every_core() {
        let cores = cores();
        if cores < 2 {
            // One core: everything runs here, in order.
            let order = Mutex::new(Vec::new());
            let log = &order;
            let tasks: Vec<Task<'_>> = (0..3)
                .map(|i| Box::new(move || log.lock().unwrap().push(i)) as Task<'_>)
                .collect();
            run_in_parallel(tasks);
            assert_eq!(*order.lock().unwrap(), vec![0, 1, 2]);
            return;
        }
        // Two tasks that each wait for the other: only two threads at once finish them.
        let (tx_a, rx_a) = mpsc::channel();
        let (tx_b, rx_b) = mpsc::channel();
        let wait = Duration::from_secs(10);
        let (mut a, mut b) = (None, None);
        let threads = Mutex::new(HashSet::new());
        let (a_slot, b_slot, seen) = (&mut a, &mut b, &threads);
        run_in_parallel(vec![
            Box::new(move || {
                seen.lock().unwrap().insert(std::thread::current().id());
                tx_a.send(()).unwrap();
                *a_slot = Some(rx_b.recv_timeout(wait).is_ok());
            }),
            Box::new(move || {
                seen.lock().unwrap().insert(std::thread::current().id());
                tx_b.send(()).unwrap();
                *b_slot = Some(rx_a.recv_timeout(wait).is_ok());
            }),
        ]);
        assert_eq!((a, b), (Some(true), Some(true)));
        assert_eq!(threads.lock().unwrap().len(), 2);
    }

    /// Recurses `depth` frames of at least 1 KiB each; returns the address of the
    /// deepest frame's data.
    fn deep(depth: usize) -> usize {
        let frame = std::hint::black_box([depth as u8; 1024]);
        if depth == 0 {
            return frame.as_ptr() as usize;
        }
        std::hint::black_box(deep(depth - 1))
    }

    /// Recurses through about `bytes` of stack, whatever a frame takes in this build.
    fn use_stack(bytes: usize) {
        let top = deep(0);
        let per_frame = top.abs_diff(deep(16)) / 16;
        deep(bytes / per_frame.max(1));
    }

    #[test]
    fn helper_threads_have_the_main_threads_stack() {
        // 3 MiB of recursion: more than a test thread's 2 MiB, less than 8 MiB.
        let three_mib = 3 * 1024 * 1024;
        let caller = std::thread::current().id();
        let on_helper = || std::thread::current().id() != caller;
        let (first, ()) = side_by_side(
            || {
                use_stack(three_mib);
                on_helper()
            },
            || (),
        );
        assert!(first);
        let cores = cores();
        let ran = map_in_parallel(&[0u8; 8], |_| {
            std::thread::sleep(Duration::from_millis(20));
            if on_helper() {
                use_stack(three_mib);
            }
            on_helper()
        });
        assert_eq!(ran.iter().any(|&r| r), cores > 1, "{ran:?}");
    }

    #[test]
    fn a_panic_of_any_task_reaches_the_caller() {
        for panicking in 0..3 {
            let caught = std::panic::catch_unwind(|| {
                map_in_parallel(&[0, 1, 2], |&i| {
                    if i == panicking {
                        panic!("task {i} failed");
                    }
                    i
                })
            });
            let payload = caught.unwrap_err();
            let message = payload
                .downcast_ref::<String>()
                .cloned()
                .unwrap_or_default();
            assert_eq!(message, format!("task {panicking} failed"));
        }
    }

    #[test]
    fn cores_is_what_the_standard_library_says() {
        let said = std::thread::available_parallelism().map_or(1, |n| n.get());
        assert_eq!(cores(), said);
        assert_eq!(cores(), said, "asked again");
    }

    /// The cores this thread may run on, as the system says (Linux).
    #[cfg(target_os = "linux")]
    fn allowed_cores() -> Vec<usize> {
        let size = std::mem::size_of::<libc::cpu_set_t>();
        // SAFETY: plain data of the size given; 0 is this thread.
        unsafe {
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            assert_eq!(libc::sched_getaffinity(0, size, &mut set), 0);
            (0..8 * size)
                .filter(|&c| libc::CPU_ISSET(c, &set))
                .collect()
        }
    }

    /// Off the core named, on every other one; unchanged when it is the only core, not
    /// one of the process's, or unknown.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_thread_kept_off_a_core_may_run_on_every_other_one() {
        let all = allowed_cores();
        let first = all[0];
        let on_a_thread = |core: Option<usize>| {
            std::thread::spawn(move || {
                keep_this_thread_off(core);
                (allowed_cores(), this_core())
            })
            .join()
            .unwrap()
        };
        let (kept, running_on) = on_a_thread(Some(first));
        if all.len() > 1 {
            let others: Vec<usize> = all.iter().copied().filter(|&c| c != first).collect();
            assert_eq!(kept, others);
            assert_ne!(running_on, Some(first), "moved off at once");
        } else {
            assert_eq!(kept, all, "the only core is kept");
        }
        assert_eq!(on_a_thread(None).0, all);
        assert_eq!(on_a_thread(Some(usize::MAX)).0, all, "no such core");
        let outside = (0..).find(|c| !all.contains(c)).unwrap();
        assert_eq!(on_a_thread(Some(outside)).0, all, "not one of ours");
        assert_eq!(allowed_cores(), all, "this thread is untouched");
    }

    /// Every thread `side_by_side`, `run_in_parallel` and `prepared_ahead` start keeps
    /// off the core its starter ran on (the new thread was often queued there, and the
    /// two took turns on one core while the other stood idle): each may run on every
    /// core but one, while the starter's own cores are untouched.
    #[cfg(target_os = "linux")]
    #[test]
    fn the_threads_started_for_work_keep_off_their_starters_core() {
        let all = allowed_cores();
        let caller = std::thread::current().id();
        let started: Mutex<Vec<Vec<usize>>> = Mutex::new(Vec::new());
        let note = || {
            if std::thread::current().id() != caller {
                started.lock().unwrap().push(allowed_cores());
            }
        };
        side_by_side(note, || ());
        if cores_here() >= 2 {
            // Each task waits for the other: two threads run them.
            let both = std::sync::Barrier::new(2);
            let tasks: Vec<Task<'_>> = (0..2)
                .map(|_| {
                    Box::new(|| {
                        note();
                        both.wait();
                    }) as Task<'_>
                })
                .collect();
            run_in_parallel(tasks);
        }
        // This thread, when it prepares an item, waits (10 s at most) until the helper
        // has prepared one too.
        let helper_prepared = std::sync::atomic::AtomicBool::new(false);
        let prepare = |_: &usize| {
            if std::thread::current().id() == caller {
                let start = std::time::Instant::now();
                while cores_here() >= 2
                    && !helper_prepared.load(Ordering::SeqCst)
                    && start.elapsed() < Duration::from_secs(10)
                {
                    std::thread::yield_now();
                }
            } else {
                note();
                helper_prepared.store(true, Ordering::SeqCst);
            }
        };
        let _: Result<(), ()> = prepared_ahead(&[0, 1], prepare, |_, ()| Ok(()));
        assert_eq!(allowed_cores(), all, "the starter's cores are untouched");
        let started = started.into_inner().unwrap();
        if cores_here() < 2 || all.len() < 2 {
            return;
        }
        // side_by_side's, run_in_parallel's and prepared_ahead's helpers.
        assert_eq!(started.len(), 3, "{started:?}");
        for kept in started {
            assert_eq!(kept.len(), all.len() - 1, "{kept:?} of {all:?}");
            assert!(kept.iter().all(|c| all.contains(c)), "{kept:?} of {all:?}");
        }
    }

    /// On each core the process may use, a thread held there says it runs there.
    #[cfg(target_os = "linux")]
    #[test]
    fn this_core_is_the_core_this_thread_runs_on() {
        let size = std::mem::size_of::<libc::cpu_set_t>();
        for core in allowed_cores() {
            let said = std::thread::spawn(move || {
                // SAFETY: plain data of the size given; 0 is this thread.
                unsafe {
                    let mut only: libc::cpu_set_t = std::mem::zeroed();
                    libc::CPU_SET(core, &mut only);
                    assert_eq!(libc::sched_setaffinity(0, size, &only), 0);
                }
                this_core()
            })
            .join()
            .unwrap();
            assert_eq!(said, Some(core));
        }
    }

    #[test]
    fn warming_touches_the_whole_amount_while_no_task_is_queued() {
        let tasks = Tasks::new();
        assert_eq!(warm_heap_until_work(&tasks), WARM_HEAP_BYTES);
    }

    #[test]
    fn warming_stops_when_a_task_is_queued_or_the_queue_closes() {
        let tasks = Tasks::new();
        tasks.push(Box::new(|| {}));
        assert_eq!(warm_heap_until_work(&tasks), 0);
        tasks.work();
        assert_eq!(
            warm_heap_until_work(&tasks),
            WARM_HEAP_BYTES,
            "ran: none queued"
        );
        tasks.close();
        assert_eq!(warm_heap_until_work(&tasks), 0);
    }
}
