//! A bounded queue with many producers and one consumer, whose push touches one small
//! allocation: the queue's state behind one lock.
//!
//! A connection's queues (its outbound messages, its calls, their answers) are pushed to by
//! the evaluation task once per connection for every update, and at 10,000 connections their
//! states no longer fit in the processor's cache: a push should then cost one or two cache
//! misses, not one per part of the queue. tokio's `mpsc` channel takes a semaphore permit,
//! writes a slot in a list of blocks of 32, and wakes the receiver, in three places; it also
//! allocates its first block when it is made, 32 slots for a queue that is nearly always
//! empty. Here:
//!
//! - the messages, their count, their bytes, the number of producers and the consumer's waker
//!   are one [`Mutex`]'s state, in the queue's one allocation (the slots are a
//!   [`VecDeque`], which allocates at the first push, 4 slots, and grows to the bound);
//! - a producer wakes the consumer only if it is parked (its waker is there, taken by the
//!   push that wakes it), and producers that wait for room are woken only if one waits;
//! - the lock is held for a few instructions, never across an `await`.
//!
//! The consumer is one task: its waker is kept in one slot, whichever of its futures asked
//! last.

use std::collections::VecDeque;
use std::future::poll_fn;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::task::{Context, Poll, Waker};
use tokio::sync::Notify;

/// The bounds of a queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bounds {
    /// The most messages queued.
    pub messages: usize,
    /// The most bytes queued, as the messages count them ([`Weighed::bytes`]).
    pub bytes: usize,
}

/// What a queued message counts for against [`Bounds::bytes`].
pub trait Weighed {
    /// The bytes the message holds (the same each time it is asked).
    fn bytes(&self) -> usize;
}

/// The producers' end. Cloning it adds a producer; the queue ends for the consumer when the
/// last is dropped.
pub struct Sender<T> {
    shared: Arc<Shared<T>>,
}

/// The consumer's end. Dropping it drops what is queued, and the queue takes nothing more.
pub struct Receiver<T> {
    shared: Arc<Shared<T>>,
}

/// Why a message was not queued.
#[derive(Debug, PartialEq, Eq)]
pub enum Refused<T> {
    /// It is over a bound: queued, it would make more messages than [`Bounds::messages`]
    /// (`Full::Messages`) or more bytes than [`Bounds::bytes`] (`Full::Bytes`).
    Full(T, Full),
    /// The consumer has gone, or the queue was closed ([`Sender::close`]).
    Closed(T),
}

/// Which bound a refused message is over.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Full {
    /// The count of messages.
    Messages,
    /// The bytes.
    Bytes,
}

struct Shared<T> {
    state: Mutex<State<T>>,
    bounds: Bounds,
    /// Wakes the producers waiting for room ([`Sender::send`]).
    room: Notify,
}

struct State<T> {
    messages: VecDeque<T>,
    bytes: usize,
    senders: usize,
    /// Whether the queue takes messages: until the consumer goes, or a producer closes it.
    open: bool,
    /// The consumer's waker, while it waits for a message.
    parked: Option<Waker>,
    /// Whether a producer waits for room.
    wanted: bool,
}

/// A queue with `bounds`.
pub fn bounded<T: Weighed>(bounds: Bounds) -> (Sender<T>, Receiver<T>) {
    let shared = Arc::new(Shared {
        state: Mutex::new(State {
            messages: VecDeque::new(),
            bytes: 0,
            senders: 1,
            open: true,
            parked: None,
            wanted: false,
        }),
        bounds,
        room: Notify::new(),
    });
    (
        Sender {
            shared: shared.clone(),
        },
        Receiver { shared },
    )
}

impl<T> std::fmt::Debug for Sender<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.shared.describe(f.debug_struct("Sender"))
    }
}

impl<T> std::fmt::Debug for Receiver<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.shared.describe(f.debug_struct("Receiver"))
    }
}

impl<T> Shared<T> {
    /// The queue's bounds and what it holds now, for `Debug`.
    fn describe(&self, mut out: std::fmt::DebugStruct<'_, '_>) -> std::fmt::Result {
        let state = self.lock();
        out.field("bounds", &self.bounds)
            .field("messages", &state.messages.len())
            .field("bytes", &state.bytes)
            .field("open", &state.open)
            .finish()
    }

    /// Which bound a message of `bytes` would pass, queued now.
    fn over(&self, state: &State<T>, bytes: usize) -> Option<Full> {
        if state.messages.len() >= self.bounds.messages {
            Some(Full::Messages)
        } else if state.bytes + bytes > self.bounds.bytes {
            Some(Full::Bytes)
        } else {
            None
        }
    }

    fn lock(&self) -> MutexGuard<'_, State<T>> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl<T: Weighed> Sender<T> {
    /// Queues `message` without waiting, and returns how many messages are then queued.
    pub fn push(&self, message: T) -> Result<usize, Refused<T>> {
        let bytes = message.bytes();
        let mut state = self.shared.lock();
        if !state.open {
            return Err(Refused::Closed(message));
        }
        if let Some(full) = self.shared.over(&state, bytes) {
            return Err(Refused::Full(message, full));
        }
        state.messages.push_back(message);
        state.bytes += bytes;
        let depth = state.messages.len();
        let parked = state.parked.take();
        drop(state);
        if let Some(waker) = parked {
            waker.wake();
        }
        Ok(depth)
    }

    /// Queues `message`, waiting for room while the queue is full; gives it back if the
    /// consumer has gone, or if it could never fit (it is over [`Bounds::bytes`] alone).
    pub async fn send(&self, mut message: T) -> Result<(), T> {
        loop {
            let room = self.shared.room.notified();
            tokio::pin!(room);
            room.as_mut().enable();
            match self.push(message) {
                Ok(_) => return Ok(()),
                Err(Refused::Closed(refused)) => return Err(refused),
                Err(Refused::Full(refused, _)) if !self.fits(refused.bytes()) => {
                    return Err(refused)
                }
                Err(Refused::Full(refused, _)) => {
                    let mut state = self.shared.lock();
                    let still_full = self.shared.over(&state, refused.bytes()).is_some();
                    message = refused;
                    if !still_full {
                        continue;
                    }
                    state.wanted = true;
                }
            }
            room.await;
        }
    }

    /// Closes the queue to every producer: it takes nothing more ([`Refused::Closed`]); what
    /// is queued is still there for the consumer.
    pub fn close(&self) {
        self.shared.lock().open = false;
    }

    /// Whether a message of `bytes` could ever fit in the queue.
    pub fn fits(&self, bytes: usize) -> bool {
        bytes <= self.shared.bounds.bytes
    }

    /// The queue's bounds.
    pub fn bounds(&self) -> Bounds {
        self.shared.bounds
    }

    /// What is queued now: messages, and their bytes.
    pub fn depth(&self) -> Bounds {
        let state = self.shared.lock();
        Bounds {
            messages: state.messages.len(),
            bytes: state.bytes,
        }
    }
}

impl<T> Clone for Sender<T> {
    fn clone(&self) -> Self {
        self.shared.lock().senders += 1;
        Self {
            shared: self.shared.clone(),
        }
    }
}

impl<T> Drop for Sender<T> {
    fn drop(&mut self) {
        let mut state = self.shared.lock();
        state.senders -= 1;
        let parked = if state.senders == 0 {
            state.parked.take()
        } else {
            None
        };
        drop(state);
        if let Some(waker) = parked {
            waker.wake();
        }
    }
}

impl<T: Weighed> Receiver<T> {
    /// The next message; `None` once it is empty and every producer has gone.
    pub async fn recv(&mut self) -> Option<T> {
        poll_fn(|cx| self.poll_recv(cx)).await
    }

    /// The next message if one is queued, without waiting.
    pub fn try_recv(&mut self) -> Option<T> {
        let mut state = self.shared.lock();
        let message = state.messages.pop_front()?;
        Some(self.taken(state, message))
    }

    /// The next message, or `None` once it is empty and every producer has gone; otherwise
    /// parks `cx`'s waker until a producer pushes or the last one goes.
    pub fn poll_recv(&mut self, cx: &mut Context<'_>) -> Poll<Option<T>> {
        let mut state = self.shared.lock();
        if let Some(message) = state.messages.pop_front() {
            return Poll::Ready(Some(self.taken(state, message)));
        }
        if state.senders == 0 {
            return Poll::Ready(None);
        }
        match &state.parked {
            Some(parked) if parked.will_wake(cx.waker()) => {}
            _ => state.parked = Some(cx.waker().clone()),
        }
        Poll::Pending
    }

    /// `message`, just taken from the queue `state` guards, no longer counted; the producers
    /// waiting for room are told.
    fn taken(&self, mut state: MutexGuard<'_, State<T>>, message: T) -> T {
        state.bytes -= message.bytes();
        let wanted = std::mem::take(&mut state.wanted);
        drop(state);
        if wanted {
            self.shared.room.notify_waiters();
        }
        message
    }
}

impl<T> Drop for Receiver<T> {
    fn drop(&mut self) {
        let mut state = self.shared.lock();
        state.open = false;
        state.bytes = 0;
        let dropped = std::mem::take(&mut state.messages);
        drop(state);
        drop(dropped);
        self.shared.room.notify_waiters();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;

    /// A message of `.1` bytes, numbered `.0`.
    #[derive(Debug, PartialEq, Eq)]
    struct Message(u32, usize);

    impl Weighed for Message {
        fn bytes(&self) -> usize {
            self.1
        }
    }

    fn queue(messages: usize, bytes: usize) -> (Sender<Message>, Receiver<Message>) {
        bounded(Bounds { messages, bytes })
    }

    fn numbers(receiver: &mut Receiver<Message>) -> Vec<u32> {
        std::iter::from_fn(|| receiver.try_recv())
            .map(|message| message.0)
            .collect()
    }

    #[test]
    fn messages_come_out_in_order_and_the_push_tells_the_depth() {
        let (sender, mut receiver) = queue(8, 100);
        assert_eq!(sender.push(Message(1, 0)), Ok(1));
        assert_eq!(sender.push(Message(2, 0)), Ok(2));
        assert_eq!(receiver.try_recv(), Some(Message(1, 0)));
        assert_eq!(sender.push(Message(3, 0)), Ok(2));
        assert_eq!(numbers(&mut receiver), [2, 3]);
        assert_eq!(receiver.try_recv(), None);
    }

    #[test]
    fn the_message_bound_refuses_one_more_until_one_is_taken() {
        let (sender, mut receiver) = queue(2, 100);
        sender.push(Message(1, 0)).expect("room");
        sender.push(Message(2, 0)).expect("room");
        assert_eq!(
            sender.push(Message(3, 0)),
            Err(Refused::Full(Message(3, 0), Full::Messages))
        );
        receiver.try_recv();
        assert_eq!(sender.push(Message(4, 0)), Ok(2));
        assert_eq!(numbers(&mut receiver), [2, 4]);
    }

    #[test]
    fn the_byte_bound_counts_what_is_queued_and_frees_what_is_taken() {
        let (sender, mut receiver) = queue(8, 100);
        sender.push(Message(1, 60)).expect("room");
        sender.push(Message(2, 40)).expect("exactly the bound");
        assert_eq!(
            sender.push(Message(3, 1)),
            Err(Refused::Full(Message(3, 1), Full::Bytes))
        );
        receiver.try_recv();
        assert_eq!(
            sender.push(Message(4, 61)),
            Err(Refused::Full(Message(4, 61), Full::Bytes))
        );
        assert_eq!(sender.push(Message(5, 60)), Ok(2));
        assert!(sender.fits(100) && !sender.fits(101));
    }

    /// A message that holds a reference, to see when it is dropped.
    impl Weighed for Arc<()> {
        fn bytes(&self) -> usize {
            0
        }
    }

    #[test]
    fn a_gone_receiver_takes_nothing_and_drops_what_was_queued() {
        let held = Arc::new(());
        let (sender, receiver) = bounded::<Arc<()>>(Bounds {
            messages: 8,
            bytes: 0,
        });
        sender.push(held.clone()).expect("room");
        drop(receiver);
        assert_eq!(
            Arc::strong_count(&held),
            1,
            "the queued message was dropped"
        );
        assert!(matches!(sender.push(held.clone()), Err(Refused::Closed(_))));
    }

    #[test]
    fn a_closed_queue_takes_nothing_but_keeps_what_it_has() {
        let (sender, mut receiver) = queue(8, 100);
        sender.push(Message(1, 0)).expect("room");
        sender.clone().close();
        assert_eq!(
            sender.push(Message(2, 0)),
            Err(Refused::Closed(Message(2, 0)))
        );
        assert_eq!(numbers(&mut receiver), [1]);
    }

    #[tokio::test]
    async fn recv_ends_once_every_sender_has_gone_and_the_queue_is_empty() {
        let (sender, mut receiver) = queue(8, 100);
        let other = sender.clone();
        sender.push(Message(1, 0)).expect("room");
        drop(sender);
        assert_eq!(receiver.recv().await, Some(Message(1, 0)));
        let ended = tokio::spawn(async move { receiver.recv().await });
        tokio::time::sleep(Duration::from_millis(20)).await;
        assert!(!ended.is_finished(), "a sender is left");
        drop(other);
        let ended = tokio::time::timeout(Duration::from_secs(5), ended).await;
        assert_eq!(ended.expect("woken").expect("ran"), None);
    }

    #[tokio::test]
    async fn a_parked_receiver_is_woken_by_a_push() {
        let (sender, mut receiver) = queue(8, 100);
        let waiting = tokio::spawn(async move { receiver.recv().await });
        tokio::time::sleep(Duration::from_millis(20)).await;
        assert!(!waiting.is_finished());
        sender.push(Message(7, 0)).expect("room");
        let woken = tokio::time::timeout(Duration::from_secs(5), waiting).await;
        assert_eq!(woken.expect("woken").expect("ran"), Some(Message(7, 0)));
    }

    #[tokio::test]
    async fn send_waits_for_room_and_fails_once_the_receiver_goes() {
        let (sender, mut receiver) = queue(1, 100);
        sender.push(Message(1, 0)).expect("room");
        let sender = Arc::new(sender);
        let waiting = tokio::spawn({
            let sender = sender.clone();
            async move { sender.send(Message(2, 0)).await }
        });
        tokio::time::sleep(Duration::from_millis(20)).await;
        assert!(!waiting.is_finished(), "no room yet");
        assert_eq!(receiver.recv().await, Some(Message(1, 0)));
        let sent = tokio::time::timeout(Duration::from_secs(5), waiting).await;
        assert_eq!(sent.expect("woken").expect("ran"), Ok(()));
        let waiting = tokio::spawn({
            let sender = sender.clone();
            async move { sender.send(Message(3, 0)).await }
        });
        tokio::time::sleep(Duration::from_millis(20)).await;
        drop(receiver);
        let sent = tokio::time::timeout(Duration::from_secs(5), waiting).await;
        assert_eq!(sent.expect("woken").expect("ran"), Err(Message(3, 0)));
        assert_eq!(sender.send(Message(4, 200)).await, Err(Message(4, 200)));
    }

    /// Two producer threads push as fast as they can into a small queue while a consumer,
    /// parking whenever it is empty, takes everything: a lost wakeup would hang it (the
    /// timeout fails the test), a lost or reordered message would show in the sums.
    #[test]
    fn no_wakeup_is_lost_under_concurrent_producers() {
        const EACH: u32 = 50_000;
        let (sender, mut receiver) = queue(4, usize::MAX);
        let refused = Arc::new(AtomicUsize::new(0));
        let producers: Vec<_> = (0..2)
            .map(|producer| {
                let sender = sender.clone();
                let refused = refused.clone();
                std::thread::spawn(move || {
                    for n in 0..EACH {
                        let mut message = Message(n, producer);
                        while let Err(Refused::Full(back, _)) = sender.push(message) {
                            refused.fetch_add(1, Ordering::Relaxed);
                            message = back;
                            std::thread::yield_now();
                        }
                    }
                })
            })
            .collect();
        drop(sender);
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .expect("a runtime");
        let next = runtime.block_on(async {
            tokio::time::timeout(Duration::from_secs(60), async {
                let mut next = [0; 2];
                while let Some(Message(n, producer)) = receiver.recv().await {
                    assert_eq!(n, next[producer], "producer {producer}'s order");
                    next[producer] += 1;
                }
                next
            })
            .await
            .expect("no wakeup was lost")
        });
        for producer in producers {
            producer.join().expect("the producer ran");
        }
        assert_eq!(next, [EACH, EACH]);
    }
}
