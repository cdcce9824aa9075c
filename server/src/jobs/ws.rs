//! One WebSocket connection of `/api/run`: reads the page's messages, submits
//! runs, and forwards each run's messages back.

use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::extract::ws::{close_code, CloseFrame, Message, WebSocket};
use futures_util::{Sink, SinkExt, Stream, StreamExt};
use pipebench::engine::event::Event;
use tokio::sync::mpsc::{unbounded_channel, UnboundedReceiver, UnboundedSender};

use crate::connections::{Activity, Registration};
use crate::jobs::protocol::{self, ClientMessage};
use crate::jobs::saving::{self, NoteRefused, Reply, SaveStore};
use crate::jobs::scheduler::{Ticket, Update};
use crate::labs;
use crate::labs::store::Record;
use crate::state::{AppState, ConnectionLimits};
use crate::store::jsonl::now_ms;

/// Largest message the protocol reads. Bigger ones (up to the transport's hard
/// cap, [`MAX_FRAME`]) get an `error` and the connection carries on.
pub(crate) const MAX_MESSAGE: usize = 16 * 1024;

/// Hard cap on a WebSocket message or frame: past it the transport stops
/// reading, and the page gets a Close frame with code 1009 (Message Too Big)
/// and a reason, without the server buffering more.
pub(crate) const MAX_FRAME: usize = 64 * 1024;

/// How long a stopping server waits for the current run's last message
/// (e.g. "shutting down") before it closes the socket anyway.
const LAST_WORD_TIMEOUT: Duration = Duration::from_secs(3);

/// The submission this connection has queued or running, and its updates.
type Current = Option<(Ticket, UnboundedReceiver<Update>)>;

/// What a connection's loop follows besides its messages: the bytes arriving
/// on its socket (to see a message in progress) and its place among the open
/// WebSockets (to say whether it is busy, and to hear it should make room).
pub(crate) struct Presence {
    /// The socket's byte counter, when the connection came through the
    /// server's accept loop.
    pub(crate) activity: Option<Arc<Activity>>,
    /// Its slot among the open WebSockets.
    pub(crate) registration: Registration,
}

/// What a submission still says after the page's session with it ended.
enum Drained {
    /// A message to forward (a `saved`, a series' last word).
    Message(String),
    /// Nothing more will come.
    End,
}

/// Forwards what a submission still says after its session ended (its last
/// run's `saved`s, in the order `crate::jobs::saving` says them, and a
/// series' last word after them), until its last run's thread lets go of it.
fn drain(mut updates: UnboundedReceiver<Update>, out: &UnboundedSender<Drained>) {
    let out = out.clone();
    tokio::spawn(async move {
        while let Some(update) = updates.recv().await {
            let _ = out.send(Drained::Message(update.to_json()));
        }
        let _ = out.send(Drained::End);
    });
}

/// How often a connection looks at its clocks.
fn tick_period(limits: &ConnectionLimits) -> Duration {
    (limits.ws_message_timeout / 4)
        .min(limits.ws_idle_timeout / 4)
        .clamp(Duration::from_millis(50), Duration::from_secs(1))
}

/// What the connection does after one of its events.
#[derive(Debug, PartialEq)]
enum Next {
    /// Send these to the page (none, often) and go on.
    Send(Vec<String>),
    /// Close with this code and reason.
    Close(u16, String),
    /// Close with 1009: the page sent a message over [`MAX_FRAME`].
    TooBig,
    /// End without a word: the page closed or the socket failed.
    End,
}

/// One WebSocket connection between two of its events: the run it has queued
/// or running, the series and lab task that run belongs to, the runs whose
/// `saved` is still to come, and its clocks. Each event is one method; the
/// socket itself is [`serve_on`]'s, so the methods run without one.
struct Connection {
    limits: Arc<ConnectionLimits>,
    /// The socket's byte counter, when the connection came through the
    /// server's accept loop.
    activity: Option<Arc<Activity>>,
    /// Its slot among the open WebSockets.
    registration: Registration,
    /// The submission (a run, or a series the scheduler steps) whose session is open.
    current: Current,
    /// Where ended sessions' `saved`s come back ([`drain`]).
    drained_out: UnboundedSender<Drained>,
    /// Ended sessions whose `saved`s are still to come.
    saving: usize,
    /// Bytes read when the last whole message arrived: more since means one is arriving.
    mark: u64,
    partial_since: Option<Instant>,
    idle_since: Instant,
}

impl Connection {
    fn new(
        limits: Arc<ConnectionLimits>,
        presence: Presence,
        drained_out: UnboundedSender<Drained>,
    ) -> Self {
        let mut connection = Connection {
            limits,
            activity: presence.activity,
            registration: presence.registration,
            current: None,
            drained_out,
            saving: 0,
            mark: 0,
            partial_since: None,
            idle_since: Instant::now(),
        };
        connection.mark = connection.bytes_read();
        connection
    }

    fn bytes_read(&self) -> u64 {
        self.activity.as_ref().map_or(0, |a| a.bytes_read())
    }

    /// Whether it has a run queued, running, or still being saved.
    fn busy(&self) -> bool {
        self.current.is_some() || self.saving > 0
    }

    /// Before each event: its slot says whether it is busy, and a busy
    /// connection is never idle.
    fn before_event(&mut self) {
        let busy = self.busy();
        self.registration.set_busy(busy);
        if busy {
            self.idle_since = Instant::now();
        }
    }

    /// A message from the page (or the socket's end).
    async fn on_incoming(
        &mut self,
        incoming: Option<Result<Message, axum::Error>>,
        state: &AppState,
    ) -> Next {
        self.mark = self.bytes_read();
        self.partial_since = None;
        self.registration.set_partial(false);
        let message = match incoming {
            Some(Ok(message)) => message,
            Some(Err(err)) if is_too_big(&err) => return Next::TooBig,
            // Closed, reset, or unreadable: nothing more to read.
            Some(Err(_)) | None => return Next::End,
        };
        if !matches!(message, Message::Ping(_) | Message::Pong(_)) {
            self.idle_since = Instant::now();
            self.registration.touch();
        }
        let flow = on_message(message, &mut self.current, state);
        match flow {
            // A refusal: it belongs to no run, so it carries no run id.
            AfterMessage::Reply(reply) => Next::Send(vec![reply.to_json()]),
            AfterMessage::Save(record) => {
                let id = record.lab().to_string();
                let reply = match saving::page_note(&state.labs, record).await {
                    Ok(()) => Reply::saved(SaveStore::Labs, Some(id), Ok(())).to_json(),
                    Err(NoteRefused::Refused(reason)) => Event::error(reason).to_json(),
                    Err(NoteRefused::Failed(err)) => {
                        Reply::saved(SaveStore::Labs, Some(id), Err(err)).to_json()
                    }
                };
                Next::Send(vec![reply])
            }
            AfterMessage::Quiet => Next::Send(Vec::new()),
            AfterMessage::Close => Next::End,
        }
    }

    /// An update of the current submission, forwarded as it is; when the
    /// page's session with it ends, what it still says goes through [`drain`].
    fn on_update(&mut self, update: Update) -> Vec<String> {
        if update.closes_session() {
            if let Some((_ticket, updates)) = self.current.take() {
                self.saving += 1;
                drain(updates, &self.drained_out);
            }
        }
        vec![update.to_json()]
    }

    /// What an ended session still says, or that it has said everything.
    fn on_drained(&mut self, message: Drained) -> Vec<String> {
        match message {
            Drained::Message(json) => vec![json],
            Drained::End => {
                self.saving = self.saving.saturating_sub(1);
                Vec::new()
            }
        }
    }

    /// The clock: a message that takes too long to arrive, or a connection
    /// idle too long with no run, closes it.
    fn on_tick(&mut self, now: Instant) -> Next {
        let limits = &self.limits;
        if self.activity.is_some() && self.bytes_read() > self.mark {
            let since = *self.partial_since.get_or_insert(now);
            self.registration.set_partial(true);
            if now.duration_since(since) >= limits.ws_message_timeout {
                tracing::warn!(
                    "closed a WebSocket whose message did not arrive in {:?}",
                    limits.ws_message_timeout
                );
                let reason = format!(
                    "a message took more than {} s to arrive",
                    limits.ws_message_timeout.as_secs_f64()
                );
                return Next::Close(close_code::POLICY, reason);
            }
        }
        if !self.busy() && now.duration_since(self.idle_since) >= limits.ws_idle_timeout {
            let reason = format!(
                "idle for {} s with no run: open a new connection to run again",
                limits.ws_idle_timeout.as_secs_f64()
            );
            return Next::Close(close_code::NORMAL, reason);
        }
        Next::Send(Vec::new())
    }

    /// The registry asks it to make room for a newer page: an idle connection
    /// closes, one with a run under way stays.
    fn on_evicted(&mut self) -> Next {
        if self.busy() {
            self.registration.slot().spare();
            return Next::Send(Vec::new());
        }
        tracing::info!("closed an idle WebSocket to make room for a new page");
        let reason = "too many open WebSockets: this idle one made room for a newer page";
        Next::Close(close_code::AGAIN, reason.to_string())
    }
}

/// Serves one connection until the page closes it, the server stops, it has
/// been silent too long with no run, a message of it takes too long to
/// arrive, or it is asked to make room for a newer page while idle.
pub(crate) async fn serve(socket: WebSocket, state: AppState, presence: Presence) {
    let (sink, stream) = socket.split();
    serve_on(sink, stream, state, presence).await;
}

/// [`serve`] on any pair of message sink and stream: the loop hands each
/// event to its [`Connection`] method and sends what it answers.
async fn serve_on<S, R>(mut sink: S, mut stream: R, state: AppState, presence: Presence)
where
    S: Sink<Message> + Unpin,
    R: Stream<Item = Result<Message, axum::Error>> + Unpin,
{
    let (drained_out, mut drained) = unbounded_channel::<Drained>();
    let limits = Arc::clone(&state.connections);
    let mut tick = tokio::time::interval(tick_period(&limits));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut connection = Connection::new(limits, presence, drained_out);
    loop {
        connection.before_event();
        let next = tokio::select! {
            incoming = stream.next() => connection.on_incoming(incoming, &state).await,
            update = next_update(&mut connection.current) => {
                Next::Send(connection.on_update(update))
            }
            Some(message) = drained.recv() => Next::Send(connection.on_drained(message)),
            _ = tick.tick() => connection.on_tick(Instant::now()),
            () = connection.registration.slot().evicted() => connection.on_evicted(),
            () = state.shutdown.wait() => {
                say_last_words(&mut sink, &mut connection.current).await;
                break;
            }
        };
        match next {
            Next::Send(replies) => {
                // Busy or not as of this message, before the page hears the
                // answer: a page told its run is queued must not be dropped as idle.
                connection.registration.set_busy(connection.busy());
                for reply in replies {
                    if sink.send(Message::Text(reply.into())).await.is_err() {
                        return;
                    }
                }
            }
            Next::Close(code, reason) => {
                close_with(&mut sink, code, reason).await;
                break;
            }
            Next::TooBig => {
                close_too_big(&mut sink).await;
                break;
            }
            Next::End => break,
        }
    }
    // Dropping the ticket cancels a waiting run and kills a running one.
    drop(connection);
}

/// Sends a Close frame with `reason` (but waits for a peer that reads
/// nothing no longer than a second).
async fn close_with<S: Sink<Message> + Unpin>(socket: &mut S, code: u16, reason: String) {
    let close = socket.send(Message::Close(Some(CloseFrame {
        code,
        reason: reason.into(),
    })));
    let _ = tokio::time::timeout(Duration::from_secs(1), close).await;
}

/// The server is stopping: forward what the current run still has to say
/// (its end, e.g. "the server is shutting down"), then close.
async fn say_last_words<S: Sink<Message> + Unpin>(socket: &mut S, current: &mut Current) {
    let deadline = tokio::time::Instant::now() + LAST_WORD_TIMEOUT;
    while current.is_some() {
        let Ok(update) = tokio::time::timeout_at(deadline, next_update(current)).await else {
            break;
        };
        if update.closes_session() {
            *current = None;
        }
        if socket
            .send(Message::Text(update.to_json().into()))
            .await
            .is_err()
        {
            return;
        }
    }
    let _ = socket
        .send(Message::Close(Some(CloseFrame {
            code: close_code::AWAY,
            reason: "the server is shutting down".into(),
        })))
        .await;
}

/// Whether the transport refused a frame or message over [`MAX_FRAME`].
fn is_too_big(err: &axum::Error) -> bool {
    std::error::Error::source(err)
        .and_then(|source| source.downcast_ref::<tungstenite::Error>())
        .is_some_and(|err| matches!(err, tungstenite::Error::Capacity(_)))
}

/// Tells the page why its connection ends: 1009, Message Too Big. The rest of
/// the oversized message is never read.
async fn close_too_big<S: Sink<Message> + Unpin>(socket: &mut S) {
    tracing::warn!("closed a WebSocket that sent a message over {MAX_FRAME} bytes");
    let reason = format!("message too big: the limit is {MAX_FRAME} bytes");
    let _ = socket
        .send(Message::Close(Some(CloseFrame {
            code: close_code::SIZE,
            reason: reason.into(),
        })))
        .await;
}

/// What to do after a message from the page.
enum AfterMessage {
    /// Answer at once (a refusal, or a reply about no run).
    Reply(Event),
    /// Save a lab record, then answer `saved`.
    Save(Record),
    Quiet,
    Close,
}

/// The next update of the current submission; never resolves when there is
/// none. Its thread always ends a session before it lets go of the channel.
async fn next_update(current: &mut Current) -> Update {
    let Some((_, updates)) = current else {
        return std::future::pending().await;
    };
    updates.recv().await.unwrap_or_else(|| Update::Event {
        run: None,
        event: Event::error("the run ended without a result"),
        closes_session: true,
    })
}

fn on_message(message: Message, current: &mut Current, state: &AppState) -> AfterMessage {
    let text =
        match message {
            Message::Text(text) => text,
            Message::Binary(_) => return AfterMessage::Reply(Event::error(
                "binary messages are not understood: send JSON text such as {\"type\":\"cancel\"}",
            )),
            Message::Close(_) => return AfterMessage::Close,
            // Pings are answered by the transport.
            Message::Ping(_) | Message::Pong(_) => return AfterMessage::Quiet,
        };
    if text.len() > MAX_MESSAGE {
        return AfterMessage::Reply(Event::error(format!(
            "message too large: {} bytes, the limit is {MAX_MESSAGE}",
            text.len()
        )));
    }
    match protocol::parse(text.as_str()) {
        Err(reason) => AfterMessage::Reply(Event::error(reason.to_string())),
        Ok(ClientMessage::Cancel) => match current {
            Some((ticket, _)) => {
                // A series stops as a whole: its ticket follows its runs.
                ticket.cancel();
                AfterMessage::Quiet
            }
            None => AfterMessage::Reply(Event::error("there is no run to cancel")),
        },
        Ok(ClientMessage::Predict { lab, value }) => match labs::check_prediction(&lab, &value) {
            Ok(()) => AfterMessage::Save(Record::Prediction {
                lab,
                value,
                at_ms: now_ms(),
            }),
            Err(err) => AfterMessage::Reply(Event::error(err.to_string())),
        },
        Ok(ClientMessage::ResetLab { lab }) => match labs::lab(&lab) {
            Ok(_) => AfterMessage::Save(Record::Reset {
                lab,
                at_ms: now_ms(),
            }),
            Err(err) => AfterMessage::Reply(Event::error(err.to_string())),
        },
        Ok(ClientMessage::Job(_)) if current.is_some() => AfterMessage::Reply(Event::error(
            "this page already has a run queued or running: cancel it or wait for its result",
        )),
        Ok(ClientMessage::Job(request)) => match request.plan(state) {
            Err(refusal) => AfterMessage::Reply(Event::Error(refusal)),
            Ok(planned) => match state.scheduler.submit(planned) {
                Ok(run) => {
                    *current = Some(run);
                    AfterMessage::Quiet
                }
                Err(err) => refuse(err),
            },
        },
    }
}

/// A refusal of the page's message: it belongs to no run.
fn refuse(reason: impl ToString) -> AfterMessage {
    AfterMessage::Reply(Event::error(reason.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::connections::Registry;

    /// A connection with `limits` and a byte counter, without a socket or a server.
    fn connection(limits: ConnectionLimits) -> (Connection, Arc<Activity>, Arc<Registry>) {
        let registry = Arc::new(Registry::default());
        let activity = Arc::new(Activity::default());
        let presence = Presence {
            activity: Some(Arc::clone(&activity)),
            registration: registry.register(),
        };
        let (drained_out, _) = unbounded_channel();
        let connection = Connection::new(Arc::new(limits), presence, drained_out);
        (connection, activity, registry)
    }

    fn limits(message: u64, idle: u64) -> ConnectionLimits {
        ConnectionLimits {
            ws_message_timeout: Duration::from_secs(message),
            ws_idle_timeout: Duration::from_secs(idle),
            ..ConnectionLimits::default()
        }
    }

    #[test]
    fn an_idle_connection_closes_once_its_idle_time_is_up_and_not_before() {
        let (mut connection, _, _) = connection(limits(10, 120));
        let start = connection.idle_since;
        assert_eq!(
            connection.on_tick(start + Duration::from_secs(119)),
            Next::Send(Vec::new())
        );
        assert!(matches!(
            connection.on_tick(start + Duration::from_secs(120)),
            Next::Close(close_code::NORMAL, _)
        ));
    }

    #[test]
    fn a_connection_still_saving_a_run_is_not_idle() {
        let (mut connection, _, _) = connection(limits(10, 120));
        connection.saving = 1;
        let later = connection.idle_since + Duration::from_secs(600);
        assert_eq!(connection.on_tick(later), Next::Send(Vec::new()));
        // Its last `saved` and a series' last word are forwarded; the end of
        // what it says ends the saving.
        assert_eq!(
            connection.on_drained(Drained::Message("saved".into())),
            ["saved"]
        );
        assert_eq!(
            connection.on_drained(Drained::Message("done".into())),
            ["done"]
        );
        assert_eq!(connection.saving, 1);
        assert!(connection.busy());
        assert!(connection.on_drained(Drained::End).is_empty());
        assert_eq!(connection.saving, 0);
        assert!(!connection.busy());
    }

    #[test]
    fn a_message_that_takes_too_long_to_arrive_closes_the_connection() {
        let (mut connection, activity, _) = connection(limits(10, 120));
        let start = Instant::now();
        // Bytes of a message arrive, and the rest never does.
        activity.record(100);
        assert_eq!(connection.on_tick(start), Next::Send(Vec::new()));
        assert_eq!(
            connection.on_tick(start + Duration::from_secs(9)),
            Next::Send(Vec::new())
        );
        assert!(matches!(
            connection.on_tick(start + Duration::from_secs(10)),
            Next::Close(close_code::POLICY, _)
        ));
    }

    #[test]
    fn an_idle_connection_makes_room_and_a_busy_one_stays() {
        let (mut idle, _, _) = connection(limits(10, 120));
        assert!(matches!(
            idle.on_evicted(),
            Next::Close(close_code::AGAIN, _)
        ));
        let (mut busy, _, registry) = connection(limits(10, 120));
        busy.saving = 1;
        busy.before_event();
        // Asked to make room all the same (the cap's last resort).
        assert!(registry.evict_one(Some(Duration::ZERO)));
        assert!(busy.registration.slot().is_evicting());
        assert_eq!(busy.on_evicted(), Next::Send(Vec::new()));
        assert!(!busy.registration.slot().is_evicting());
    }
}
